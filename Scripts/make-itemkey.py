#!/usr/bin/env python3
"""Makes the tables of item keys, version 1 (docs/encoding.md), from the Unicode Character Database.

    apt-get install -y unicode-data       # Unicode 15.0.0 in /usr/share/unicode
    Scripts/make-itemkey.py               # writes the Swift and the JavaScript table
    Scripts/make-itemkey.py --check       # fails when either file differs from what it would write

An item's key decides its identity, so every client must compute it the same way on every
platform. Version 1 is defined by data: for every code point the UCD 15.0.0 files give, the
table says what it becomes in a key (the same table goes to Sources/BasketCore/ItemKey+Table.swift
and Client/web/itemkey-table.js). A code point that is not in the table stays as it is. Then runs
of spaces collapse to one and the ends are trimmed (ItemKey.swift and itemkey.js do that part).

What a code point becomes, in this order (the first rule that applies):
1. printable ASCII: "-" becomes a space, A-Z become a-z, the rest stays;
2. White_Space (PropList.txt) and dash punctuation (Pd) become a space;
3. the typographic apostrophes U+2019 U+2018 U+02BC U+00B4 U+2032 become "'";
4. controls (Cc) and format characters (Cf) are dropped;
5. otherwise the code point is folded:
   a. a <wide> or <narrow> compatibility mapping is applied ("Ｍ" -> "M", "ｶ" -> "カ");
   b. code points of the Latin, Greek, Cyrillic and Common scripts are decomposed canonically,
      and so are the canonical singletons of every script but Han ("Ω" OHM SIGN -> "Ω",
      ";" GREEK QUESTION MARK -> ";"); then the diacritics are
      dropped: nonspacing and enclosing marks (Mn, Me) of those three scripts and of the
      Inherited script, except variation selectors ("♥️" keeps U+FE0F) and marks whose
      Script_Extensions name another script (Arabic harakat, Vedic signs, the kana voicing
      marks U+3099 U+309A stay). A diacritic is dropped wherever it stands, so "e" + U+0301
      and "é" have one key;
   c. full case folding (CaseFolding.txt, statuses C and F);
   d. b again, on what folding made ("İ" -> "i̇" -> "i");
   e. the letters that neither decomposition nor folding splits: ß->ss, ı->i, ø->o, ł->l,
      æ->ae, œ->oe, đ->d, ð->d, þ->th; White_Space again becomes a space.
   Other scripts are not decomposed: が, 가, क़ and the CJK compatibility ideographs keep their
   code points, as Foundation's String.folding keeps them, so keys made before version 1 was
   written down as data stay the same.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
UCD = os.environ.get("BASKET_UCD", "/usr/share/unicode")
SWIFT_OUT = os.path.join(HERE, "..", "Sources", "BasketCore", "ItemKey+Table.swift")
JS_OUT = os.path.join(HERE, "..", "Client", "web", "itemkey-table.js")

APOSTROPHES = {0x2019, 0x2018, 0x02BC, 0x00B4, 0x2032}
LETTERS = {
    0x00DF: "ss", 0x1E9E: "ss", 0x0131: "i", 0x00F8: "o", 0x00D8: "o", 0x0142: "l", 0x0141: "l",
    0x00E6: "ae", 0x00C6: "ae", 0x0153: "oe", 0x0152: "oe", 0x0111: "d", 0x0110: "d", 0x00F0: "d",
    0x00D0: "d", 0x00FE: "th", 0x00DE: "th",
}
DECOMPOSED_SCRIPTS = {"Latin", "Greek", "Cyrillic", "Common"}
SCX_ALLOWED = {"Latn", "Grek", "Cyrl"}


def ranges(path):
    """(first, last, fields) for every data line of a UCD file."""
    with open(os.path.join(UCD, path), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            span = fields[0].split("..")
            yield int(span[0], 16), int(span[-1], 16), fields[1:]


def load():
    with open(os.path.join(UCD, "ReadMe.txt"), encoding="utf-8") as f:
        readme = f.read()
    if "15.0.0" not in readme:
        sys.exit("make-itemkey: version 1 is pinned to Unicode 15.0.0; " + UCD + " holds another version")
    category, decomposition, lowercase = {}, {}, {}
    with open(os.path.join(UCD, "UnicodeData.txt"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split(";") for line in f]
    i = 0
    while i < len(rows):
        code, name, gc, decomp = int(rows[i][0], 16), rows[i][1], rows[i][2], rows[i][5]
        if name.endswith(", First>"):
            last = int(rows[i + 1][0], 16)
            for c in range(code, last + 1):
                category[c] = gc
            i += 2
            continue
        category[code] = gc
        if decomp:
            decomposition[code] = decomp.split()
        if rows[i][13]:
            lowercase[code] = int(rows[i][13], 16)
        i += 1
    white, selectors = set(), set()
    for first, last, fields in ranges("PropList.txt"):
        if fields[0] == "White_Space":
            white.update(range(first, last + 1))
        elif fields[0] == "Variation_Selector":
            selectors.update(range(first, last + 1))
    script = {}
    for first, last, fields in ranges("Scripts.txt"):
        for c in range(first, last + 1):
            script[c] = fields[0]
    extensions = {}
    for first, last, fields in ranges("ScriptExtensions.txt"):
        for c in range(first, last + 1):
            extensions[c] = set(fields[0].split())
    folding = {}
    for first, _, fields in ranges("CaseFolding.txt"):
        if fields[0] in ("C", "F"):
            folding[first] = [int(x, 16) for x in fields[1].split()]
    return category, decomposition, lowercase, white, selectors, script, extensions, folding


def make_table():
    category, decomposition, lowercase, white, selectors, script, extensions, folding = load()

    def is_diacritic(c):
        if category.get(c) not in ("Mn", "Me") or c in selectors:
            return False
        s = script.get(c, "Unknown")
        if s in ("Latin", "Greek", "Cyrillic"):
            return True
        return s == "Inherited" and extensions.get(c, SCX_ALLOWED) <= SCX_ALLOWED

    def canonical(c):
        d = decomposition.get(c)
        if d is None or d[0].startswith("<"):
            return [c]
        return [x for part in d for x in canonical(int(part, 16))]

    def strip(codes):
        out = []
        for c in codes:
            parts = canonical(c)
            singleton = len(parts) == 1 and script.get(c) != "Han"
            if not singleton and script.get(c) not in DECOMPOSED_SCRIPTS:
                parts = [c]
            out.extend(x for x in parts if not is_diacritic(x))
        return out

    def fold(c):
        d = decomposition.get(c)
        if d is not None and d[0] in ("<wide>", "<narrow>"):
            c = int(d[1], 16)
        codes = strip([c])
        codes = [lowercase.get(x, x) for y in codes for x in folding.get(y, [y])]
        codes = strip(codes)
        out = []
        for x in codes:
            if x in LETTERS:
                out.extend(ord(ch) for ch in LETTERS[x])
            elif x in white:
                out.append(0x20)
            else:
                out.append(x)
        return out

    table = {}
    for c, gc in sorted(category.items()):
        if gc in ("Cs", "Co", "Cn"):
            continue
        if 0x20 <= c < 0x7F:
            out = [0x20] if c == 0x2D else [c + 32] if 0x41 <= c <= 0x5A else [c]
        elif c in white or gc == "Pd":
            out = [0x20]
        elif c in APOSTROPHES:
            out = [0x27]
        elif gc in ("Cc", "Cf"):
            out = []
        else:
            out = fold(c)
        if out != [c]:
            table[c] = out
    return table


HEADER = "Generated by Scripts/make-itemkey.py from the Unicode Character Database 15.0.0; do not edit."


def swift_source(table):
    keys, lengths, values = [], [], []
    for c in sorted(table):
        keys.append(c)
        lengths.append(len(table[c]))
        values.extend(table[c])

    def rows(numbers, per_line):
        text = [", ".join("0x%X" % n for n in numbers[i:i + per_line]) for i in range(0, len(numbers), per_line)]
        return ",\n".join("        " + line for line in text)

    return (
        "// " + HEADER + "\n"
        "// Version 1 of item keys (docs/encoding.md): what each code point becomes in a key.\n\n"
        "extension ItemKey {\n"
        "    /// Code points that change in a key, ascending (%d of them).\n" % len(keys)
        + "    static let tableScalars: [UInt32] = [\n" + rows(keys, 10) + ",\n    ]\n\n"
        "    /// How many code points each entry of ``tableScalars`` becomes (0: dropped).\n"
        "    static let tableLengths: [UInt8] = [\n" + rows(lengths, 16) + ",\n    ]\n\n"
        "    /// What the entries become, one after the other.\n"
        "    static let tableValues: [UInt32] = [\n" + rows(values, 10) + ",\n    ]\n"
        "}\n"
    )


def combining_ranges():
    """Code points with a canonical combining class other than 0, as "first-last" ranges (hex)."""
    codes = []
    with open(os.path.join(UCD, "UnicodeData.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.split(";")
            if fields[3] != "0":
                codes.append(int(fields[0], 16))
    spans = []
    for c in codes:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    return ";".join("%X-%X" % (a, b) for a, b in spans)


def base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    sign, n = ("-", -n) if n < 0 else ("", n)
    out = ""
    while True:
        out = digits[n % 36] + out
        n //= 36
        if n == 0:
            return sign + out


def compact(table):
    """The table as runs (key.js decodes it; decoded() below is its twin, checked here):
    "DELTA:RULE[*COUNT]" entries, DELTA the distance in base 36 from the code point after the
    previous run, RULE what the code point becomes (hexadecimal code points, comma-separated;
    empty: dropped; "~N": the code point plus N, base 36), COUNT how many more consecutive code
    points follow the same rule (the same values, or the same distance): 8 KB instead of 24."""
    codes = sorted(table)
    entries, i, after = [], 0, 0
    while i < len(codes):
        c = codes[i]
        values = table[c]
        rules = [",".join("%X" % x for x in values)]
        if len(values) == 1:
            rules.append("~" + base36(values[0] - c))
        best, best_run = rules[0], 0
        for rule in rules:
            run = 0
            while (i + run + 1 < len(codes) and codes[i + run + 1] == c + run + 1
                   and value_of(rule, c + run + 1) == table[c + run + 1]):
                run += 1
            if run > best_run:
                best, best_run = rule, run
        entries.append(base36(c - after) + ":" + best + ("*" + base36(best_run) if best_run else ""))
        after = c + best_run + 1
        i += best_run + 1
    body = ";".join(entries)
    assert decoded(body) == table, "the compact table does not decode to the table"
    return body


def value_of(rule, code):
    if rule == "":
        return []
    if rule.startswith("~"):
        return [code + int(rule[1:], 36)]
    return [int(v, 16) for v in rule.split(",")]


def decoded(body):
    out, code = {}, 0
    for entry in body.split(";"):
        delta, rest = entry.split(":")
        rule, _, count = rest.partition("*")
        code += int(delta, 36)
        for k in range((int(count, 36) if count else 0) + 1):
            out[code] = value_of(rule, code)
            code += 1
    return out


def js_source(table):
    body = compact(table)
    lines = [body[i:i + 100] for i in range(0, len(body), 100)]
    return (
        "// " + HEADER + "\n"
        "// Version 1 of item keys (docs/encoding.md): what each code point becomes in a key, the\n"
        "// same table as Sources/BasketCore/ItemKey+Table.swift, as runs: \"DELTA:RULE*COUNT\"\n"
        "// entries (DELTA in base 36 from the code point after the previous run; RULE the code\n"
        "// points it becomes, hexadecimal, none: dropped, or \"~N\": itself plus N in base 36; COUNT\n"
        "// more code points in a row that follow the same rule). key.js decodes it.\n"
        "export const ITEM_KEY_TABLE =\n"
        + " +\n".join("  \"%s\"" % line for line in lines)
        + ";\n\n"
        "// Code points with a canonical combining class other than 0 (the marks ItemName counts in\n"
        "// an accent flood), as \"first-last\" ranges.\n"
        "export const COMBINING_RANGES =\n"
        + " +\n".join("  \"%s\"" % line for line in chunks(combining_ranges()))
        + ";\n"
    )


def chunks(text):
    return [text[i:i + 100] for i in range(0, len(text), 100)]


def main():
    table = make_table()
    outputs = {SWIFT_OUT: swift_source(table), JS_OUT: js_source(table)}
    if "--check" in sys.argv:
        stale = [p for p, text in outputs.items() if not os.path.exists(p) or open(p, encoding="utf-8").read() != text]
        if stale:
            sys.exit("make-itemkey: out of date: " + ", ".join(os.path.relpath(p) for p in stale))
        print("make-itemkey: both tables match the UCD (%d entries)" % len(table))
        return
    for path, text in outputs.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    print("make-itemkey: %d entries" % len(table))


if __name__ == "__main__":
    main()
