#!/usr/bin/env python3
"""Draws basket-bench curves' CSV as one PNG: a panel per curve, the work on a log scale.

    Scripts/plot-curves.py CURVES.csv OUT.png

Needs matplotlib (Scripts/bench.sh installs it from PyPI into .build/plot-venv)."""
import csv
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def main(source, target):
    curves = OrderedDict()
    with open(source, newline="") as handle:
        for row in csv.DictReader(handle):
            curves.setdefault((row["curve"], row["unit"]), []).append((int(row["size"]), float(row["value"])))
    if not curves:
        sys.exit(f"plot-curves: no points in {source}")
    columns = 3
    rows = (len(curves) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False)
    for axis, ((name, unit), points) in zip(axes.flat, curves.items()):
        points.sort()
        sizes = [size for size, _ in points]
        values = [value for _, value in points]
        axis.plot(sizes, values, marker="o", color="#2b6cb0")
        for size, value in points:
            axis.annotate(f"{value:,.0f}" if value >= 100 else f"{value:.1f}", (size, value),
                          textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
        # A log scale where sizes span more than 20x; else linear, where a straight line is linear growth.
        if max(sizes) > 20 * min(sizes):
            axis.set_xscale("log")
            axis.set_xlim(min(sizes) / 2, max(sizes) * 2)
        else:
            axis.set_xlim(0, max(sizes) * 1.1)
        axis.set_xticks(sizes)
        axis.set_xticklabels([f"{size:,}" for size in sizes], fontsize=8)
        axis.set_ylim(bottom=0, top=max(values) * 1.25)
        axis.set_title(name, fontsize=10)
        axis.set_ylabel(unit)
        axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:,.0f}"))
        axis.grid(True, alpha=0.3)
    for axis in list(axes.flat)[len(curves):]:
        axis.set_visible(False)
    figure.suptitle("basket-server: costs against the work (basket-bench curves)", fontsize=11)
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    print(f"plot-curves: {target}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
