#!/usr/bin/env python3
"""Draws the web client's icons (Client/web/icon-192.png, icon-512.png and icon-maskable-512.png):
a white check mark on a green rounded square, the same picture as Client/web/icon.svg. Python's
standard library only (zlib for PNG); the same run always writes the same bytes.

    Scripts/make-icons.py            # writes them
    Scripts/make-icons.py --check    # fails when one differs from what it would write (Scripts/test.sh)
"""
import math
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.join(HERE, "..", "Client", "web")
GREEN = (0x2F, 0x6F, 0x4F)
WHITE = (0xFF, 0xFF, 0xFF)
# The check mark in a 100x100 box (icon.svg's path).
CHECK = [(27, 52), (43, 68), (74, 34)]


def distance_to_segment(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def coverage(x, y, size, maskable):
    """(inside the square, on the mark) for the pixel centre (x, y)."""
    u, v = (x + 0.5) * 100 / size, (y + 0.5) * 100 / size
    if maskable:
        inside = True  # the platform cuts the shape; the mark stays in the safe circle
        u, v = 50 + (u - 50) / 0.8, 50 + (v - 50) / 0.8
    else:
        r = 22
        cx, cy = min(max(u, r), 100 - r), min(max(v, r), 100 - r)
        inside = math.hypot(u - cx, v - cy) <= r
    mark = min(distance_to_segment(u, v, *CHECK[i], *CHECK[i + 1]) for i in range(len(CHECK) - 1)) <= 5.5
    return inside, mark


def png(size, maskable=False):
    rows = []
    samples = [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)]
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            r = g = b = a = 0.0
            for sx, sy in samples:
                inside, mark = coverage(x + sx - 0.5, y + sy - 0.5, size, maskable)
                if inside:
                    colour = WHITE if mark else GREEN
                    r, g, b, a = r + colour[0], g + colour[1], b + colour[2], a + 255
            n = len(samples)
            alpha = a / n
            if alpha:
                row += bytes([round(r / (a / 255)), round(g / (a / 255)), round(b / (a / 255)), round(alpha)])
            else:
                row += bytes(4)
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main():
    icons = {name: png(size, maskable) for name, size, maskable in [
        ("icon-192.png", 192, False), ("icon-512.png", 512, False), ("icon-maskable-512.png", 512, True)]}
    if sys.argv[1:] == ["--check"]:
        stale = [name for name, data in icons.items()
                 if not os.path.exists(os.path.join(WEB, name)) or open(os.path.join(WEB, name), "rb").read() != data]
        for name in stale:
            print(f"make-icons: Client/web/{name} is not what Scripts/make-icons.py draws", file=sys.stderr)
        if stale:
            sys.exit(1)
        print("make-icons: the 3 icons in Client/web are what icon.svg's picture draws")
        return
    for name, data in icons.items():
        with open(os.path.join(WEB, name), "wb") as f:
            f.write(data)
    print("make-icons: 3 icons in Client/web")


if __name__ == "__main__":
    main()
