#!/usr/bin/env python3
"""Makes the search-quality corpus of `basket-bench quality` (see SOURCES.md beside this file).

    Benchmarks/quality/make-corpus.py PRODUCTS_REPO EMOJI_WHEEL

PRODUCTS_REPO: a git directory of github.com/Lifyzer/Lifyzer-Database (a fork of the Open Food
Facts database, ODbL 1.0) at commit 1afc504; EMOJI_WHEEL: emoji-2.16.0-py3-none-any.whl from
PyPI (BSD-3-Clause; its names come from Unicode CLDR). Writes products.txt (50,000 product
names, one per line) and everyday.tsv (language, short everyday name of a food or drink) next to
this script. The choice is deterministic: the same inputs give the same files.
"""
import glob
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import unicodedata
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PRODUCTS = 50_000
VALUES = re.compile(r"^VALUES \('(?:[^'\\]|\\.)*', '((?:[^'\\]|\\.)*)'")


def clean(name):
    """A name as a person would type it on a list: entities decoded, white space collapsed,
    no control characters, 3 to 120 characters."""
    name = html.unescape(name.replace("\\'", "'").replace('\\"', '"').replace("\\\\", "\\"))
    name = " ".join(name.split())
    if not 3 <= len(name) <= 120:
        return None
    if any(unicodedata.category(c).startswith("C") for c in name):
        return None
    if not any(c.isalpha() for c in name):
        return None
    return name


def key(name):
    """Close enough to ItemKey.normalize for de-duplication: case, accents and spacing folded."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def products(repo):
    files = subprocess.run(
        ["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", "MySQL"],
        check=True, capture_output=True, text=True).stdout.split()
    names = {}
    for path in sorted(files):
        text = subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], check=True, capture_output=True).stdout
        for line in text.decode("utf-8", "replace").splitlines():
            match = VALUES.match(line)
            if match and (name := clean(match.group(1))) is not None:
                names.setdefault(key(name), name)
    # A deterministic sample: the names whose key hashes lowest.
    chosen = sorted(names.values(), key=lambda n: hashlib.sha256(key(n).encode()).digest())[:PRODUCTS]
    return sorted(chosen, key=key)


# Food and drink emoji (fruit, vegetables, prepared food, sweets, seafood, drinks), without the
# plants, cutlery and crockery around them in the same blocks.
FOOD = [
    (0x1F32D, 0x1F330), (0x1F336, 0x1F336), (0x1F33D, 0x1F33D), (0x1F344, 0x1F373), (0x1F375, 0x1F37C),
    (0x1F37E, 0x1F37F), (0x1F950, 0x1F961), (0x1F963, 0x1F96F), (0x1F980, 0x1F980), (0x1F990, 0x1F991),
    (0x1F99E, 0x1F99E), (0x1F9AA, 0x1F9AA), (0x1F9C0, 0x1F9CB), (0x1FAD0, 0x1FADB),
]
LANGUAGES = ["de", "es", "fr", "id", "it", "ja", "ko", "pt", "ru", "tr", "zh", "ar", "fa"]


def everyday(wheel):
    archive = zipfile.ZipFile(wheel)
    rows = []
    english = json.loads(archive.read("emoji/unicode_codes/emoji.json"))
    by_language = {lang: json.loads(archive.read(f"emoji/unicode_codes/emoji_{lang}.json")) for lang in LANGUAGES}
    for emoji, data in sorted(english.items()):
        if len(emoji) != 1 or not any(lo <= ord(emoji) <= hi for lo, hi in FOOD):
            continue
        names = {"en": data["en"]}
        names.update({lang: table[emoji] for lang, table in by_language.items() if emoji in table})
        for lang, name in sorted(names.items()):
            name = clean(name.strip(":").replace("_", " "))
            if name:
                rows.append((lang, name))
    return sorted(set(rows))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, wheel = sys.argv[1], sys.argv[2]
    chosen = products(repo)
    with open(os.path.join(HERE, "products.txt"), "w", encoding="utf-8") as out:
        out.writelines(name + "\n" for name in chosen)
    rows = everyday(wheel)
    with open(os.path.join(HERE, "everyday.tsv"), "w", encoding="utf-8") as out:
        out.writelines(f"{lang}\t{name}\n" for lang, name in rows)
    print(f"products.txt: {len(chosen)} names; everyday.tsv: {len(rows)} names in "
          f"{len({lang for lang, _ in rows})} languages")


if __name__ == "__main__":
    main()
