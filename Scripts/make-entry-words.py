#!/usr/bin/env python3
"""Writes Client/web/entry-words.js from Client/BasketSearch/EntryParser+Words.swift: the words the
add box reads quantities with (units, number words, marks), one table for both clients.

    Scripts/make-entry-words.py           write the JavaScript
    Scripts/make-entry-words.py --check   fail when the committed file differs (Scripts/test.sh)
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWIFT = os.path.join(ROOT, "Client", "BasketSearch", "EntryParser+Words.swift")
JS = os.path.join(ROOT, "Client", "web", "entry-words.js")

# Swift name → (JavaScript name, kind, what it is).
TABLES = [
    ("measures", "MEASURES", "set", 'Measures: metric, imperial and kitchen units ("2 kg" alone stays a name).'),
    ("packagings", "PACKAGINGS", "set", 'Packagings and pieces: with a number and nothing after, the word is the name ("2 rolls").'),
    ("phraseUnits", "PHRASE_UNITS", "set", 'Units of two or three words ("c. à s.", "colher de sopa").'),
    ("counters", "COUNTERS", "array", "Counters of Japanese and Chinese, written right after the number."),
    ("numberWords", "NUMBER_WORDS", "map", "Numbers written as words, one to twelve and a half, as the amount they say."),
    ("articles", "ARTICLES", "set", 'Articles that say one only before a unit ("a bag of rice").'),
    ("linkWords", "LINK_WORDS", "set", 'Words between a unit and the name ("of", "de", "di").'),
    ("elisions", "ELISIONS", "array", "Elisions glued to the name after a unit (\"d'ail\")."),
    ("approximately", "APPROXIMATELY", "set", 'Words for "about" before an amount ("ca. 500 g"): dropped.'),
    ("lineMarks", "LINE_MARKS", "array", "The marks a list line begins with, each before a space."),
    ("numberedNames", "NUMBERED_NAMES", "array", 'Names that begin with a number, taken whole ("7 Up"), as keys.'),
]


def literal(source, name):
    """The text between the brackets of `static let name: … = [ … ]`."""
    match = re.search(r"static let " + name + r": [^=]+= \[(.*?)\]\n", source, re.S)
    if match is None:
        sys.exit(f"make-entry-words: no table {name} in {SWIFT}")
    return match.group(1)


def strings(body):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', body)


def rows(items, per_line=110):
    """`items` (already JavaScript literals) wrapped into lines of at most `per_line` characters."""
    lines, line = [], ""
    for item in items:
        piece = item + ","
        if line and len(line) + 1 + len(piece) > per_line:
            lines.append(line)
            line = piece
        else:
            line = piece if not line else line + " " + piece
    if line:
        lines.append(line)
    return "\n".join("  " + l for l in lines)


def make():
    source = open(SWIFT, encoding="utf-8").read()
    out = [
        "// The words the add box reads quantities with, in the nine languages of the catalogue: each table",
        "// compared with a word lower-cased (a unit also without a trailing dot). Generated from",
        "// BasketSearch's EntryParser+Words.swift by Scripts/make-entry-words.py: do not edit.",
        "",
    ]
    for swift, js, kind, about in TABLES:
        body = literal(source, swift)
        out.append(f"/** {about} */")
        # Each table as one string split at "|": a first visit's bytes (no quotes and commas per word).
        if kind == "map":
            pairs = re.findall(r'"((?:[^"\\]|\\.)*)":\s*"((?:[^"\\]|\\.)*)"', body)
            joined = "|".join(f"{k}={v}" for k, v in pairs)
            out.append(f'export const {js} = new Map("{joined}".split("|").map((p) => /** @type {{[string, string]}} */ (p.split("="))));')
        else:
            words = strings(body)
            assert all("|" not in w and '"' not in w for w in words), swift
            joined = "|".join(words)
            table = f'"{joined}".split("|")'
            out.append(f"export const {js} = new Set({table});" if kind == "set" else f"export const {js} = {table};")
    return "\n".join(out) + "\n"


def main():
    text = make()
    if "--check" in sys.argv[1:]:
        current = open(JS, encoding="utf-8").read() if os.path.exists(JS) else ""
        if current != text:
            sys.exit("make-entry-words: Client/web/entry-words.js differs from EntryParser+Words.swift; run Scripts/make-entry-words.py")
        return
    with open(JS, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
