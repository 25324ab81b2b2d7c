#!/usr/bin/env python3
"""Makes the grocery catalogue: what families buy, in nine languages, each with its aisle and icon.

    Scripts/make-catalogue.py            # writes the clients' files from the catalogue's sources
    Scripts/make-catalogue.py --check    # fails when a client's file differs from what it would write
    Scripts/make-catalogue.py --from-taxonomy INGREDIENTS_TXT   # makes catalogue.tsv again (below)

The catalogue has two sources, both in Client/BasketSearch:

- groceries.txt, this project's own words: what families buy and how they write it. One grocery
  a block: a line with its aisle (a key of AISLES below) and, where one emoji says it
  unmistakably, its icon; then a line per language, `en: milk | whole milk | ~milks`: the
  names, `|` between them. A name written with `~` is a form that is looked up (a plural, a
  spelling) but never suggested. The first block that names a key in a language has it; the
  same key in two blocks of different aisles is an error.
- catalogue.tsv, drawn from Open Food Facts' ingredients taxonomy (its snapshot and licence are
  in Client/BasketSearch/CATALOGUE-SOURCES.md) by --from-taxonomy: ingredients a family rarely
  writes on a list ("acerola", "amaranth"). Its names only give an aisle; they are never
  suggested, and a name groceries.txt has is left to it.

From them this script writes Client/BasketSearch/Catalogue+Names.swift (the CLI's) and
Client/web/catalogue-LANG.json (the web client's, one file per language, fetched when needed),
with the aisles' names in each language; the same sources give the same files, and
Scripts/test.sh runs --check.

catalogue.tsv was drawn with --from-taxonomy from the taxonomy file:

    git clone https://github.com/cyrilbs/openfoodfacts-server   (a fork at eb57d96c1, 2020-12-19)
    git -C openfoodfacts-server show eb57d96c1:taxonomies/ingredients.txt > ingredients.txt
    Scripts/make-catalogue.py --from-taxonomy ingredients.txt

What it keeps: an ingredient with names in English and in at least five of the other eight
languages, named in a few words (no percentages, powders, extracts, flavourings or other
factory ingredients), under an ancestor that says its aisle (fruit and vegetables, dairy and
eggs, meat, fish, bakery, pantry, baking, spices, snacks and sweets, drinks), and the names of
OWN below.
"""
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
SWIFT = os.path.join(HERE, "..", "Client", "BasketSearch", "Catalogue+Names.swift")
SOURCE = os.path.join(HERE, "..", "Client", "BasketSearch", "catalogue.tsv")
GROCERIES = os.path.join(HERE, "..", "Client", "BasketSearch", "groceries.txt")
WEB = os.path.join(HERE, "..", "Client", "web")
LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pl", "pt", "ja"]
MIN_OTHER_LANGUAGES = 5

# Aisles, in the order a shop is walked, and their names (this project's own words).
AISLES = [
    ("produce", ["Fruit & vegetables", "Obst & Gemüse", "Fruits et légumes", "Frutas y verduras", "Frutta e verdura",
                 "Groente en fruit", "Owoce i warzywa", "Frutas e legumes", "青果"]),
    ("bakery", ["Bakery", "Backwaren", "Boulangerie", "Panadería", "Panetteria", "Bakkerij", "Pieczywo", "Padaria",
                "パン"]),
    ("dairy", ["Dairy & eggs", "Milchprodukte & Eier", "Produits laitiers et œufs", "Lácteos y huevos",
               "Latticini e uova", "Zuivel en eieren", "Nabiał i jajka", "Laticínios e ovos", "乳製品・卵"]),
    ("meat", ["Meat", "Fleisch & Wurst", "Viandes", "Carne", "Carne", "Vlees", "Mięso", "Carne", "肉"]),
    ("fish", ["Fish & seafood", "Fisch & Meeresfrüchte", "Poissons et fruits de mer", "Pescado y marisco",
              "Pesce e frutti di mare", "Vis en zeevruchten", "Ryby i owoce morza", "Peixe e marisco", "魚介"]),
    ("frozen", ["Frozen", "Tiefkühl", "Surgelés", "Congelados", "Surgelati", "Diepvries", "Mrożonki", "Congelados",
                "冷凍食品"]),
    ("pantry", ["Pantry", "Vorrat", "Épicerie", "Despensa", "Dispensa", "Voorraadkast", "Spiżarnia", "Mercearia",
                "食品・乾物"]),
    ("baking", ["Baking", "Backzutaten", "Pâtisserie", "Repostería", "Dolci e preparati", "Bakken", "Do pieczenia",
                "Pastelaria", "製菓材料"]),
    ("spices", ["Spices", "Gewürze", "Épices", "Especias", "Spezie", "Kruiden en specerijen", "Przyprawy",
                "Especiarias", "香辛料"]),
    ("snacks", ["Snacks & sweets", "Süßes & Snacks", "Snacks et confiseries", "Dulces y aperitivos", "Dolci e snack",
                "Snoep en snacks", "Słodycze i przekąski", "Doces e snacks", "お菓子"]),
    ("drinks", ["Drinks", "Getränke", "Boissons", "Bebidas", "Bevande", "Dranken", "Napoje", "Bebidas", "飲料"]),
    ("household", ["Household", "Haushalt", "Entretien", "Hogar y limpieza", "Casa e pulizia", "Huishouden",
                   "Chemia domowa", "Casa e limpeza", "日用品"]),
    ("care", ["Personal care", "Drogerie", "Hygiène", "Higiene personal", "Igiene personale", "Verzorging",
              "Higiena", "Higiene pessoal", "洗面・衛生用品"]),
    ("baby", ["Baby", "Baby", "Bébé", "Bebé", "Prima infanzia", "Baby", "Dla dziecka", "Bebé", "ベビー用品"]),
    ("pet", ["Pets", "Tierbedarf", "Animaux", "Mascotas", "Animali", "Huisdieren", "Zwierzęta", "Animais", "ペット用品"]),
]

# Which ancestor (an ingredient id of the taxonomy) says the aisle, the most specific first.
AISLE_OF = [
    ("en:chocolate", "snacks"), ("en:cocoa", "baking"), ("en:sugar", "baking"), ("en:vanilla", "baking"),
    ("en:honey", "pantry"), ("en:bread", "bakery"), ("en:pasta", "pantry"), ("en:noodle", "pantry"),
    ("en:egg", "dairy"), ("en:cheese", "dairy"), ("en:yogurt", "dairy"), ("en:butter", "dairy"),
    ("en:cream", "dairy"), ("en:milk", "dairy"), ("en:dairy", "dairy"),
    ("en:fish", "fish"), ("en:shellfish", "fish"), ("en:mollusc", "fish"), ("en:crustacean", "fish"),
    ("en:meat", "meat"), ("en:poultry", "meat"), ("en:pork", "meat"), ("en:beef", "meat"), ("en:ham", "meat"),
    ("en:fruit juice", "drinks"), ("en:coffee", "drinks"), ("en:tea", "drinks"), ("en:alcohol", "drinks"),
    ("en:wine", "drinks"), ("en:water", "drinks"),
    ("en:nut", "snacks"), ("en:tree nut", "snacks"),
    ("en:spice", "spices"), ("en:pepper", "spices"),
    ("en:flour", "baking"), ("en:starch", "baking"),
    ("en:cereal", "pantry"), ("en:rice", "pantry"), ("en:legume", "pantry"), ("en:sauce", "pantry"),
    ("en:vinegar", "pantry"), ("en:oil and fat", "pantry"), ("en:salt", "pantry"), ("en:seed", "pantry"),
    ("en:herb", "produce"), ("en:mushroom", "produce"), ("en:fruit", "produce"), ("en:vegetable", "produce"),
    ("en:root vegetable", "produce"), ("en:salad", "produce"),
]
# Ancestors that mark a factory ingredient, not something bought.
NOT_BOUGHT = {
    "en:flavouring", "en:natural flavouring", "en:protein", "en:vitamins", "en:enzyme", "en:microbial culture",
    "en:lactic ferments", "en:fiber", "en:vegetable fiber", "en:whey", "en:glucose", "en:malt", "en:purée",
    "en:varietal", "en:milk powder", "en:additive", "en:emulsifier", "en:e-number", "en:coating",
    "en:enhancer", "en:animal protein", "en:vegetable protein", "en:ferment", "en:fat", "en:palm oil and fat",
    "en:vegetable fat",
}
NOT_A_NAME = re.compile(
    r"\d|%|\(|\)|/|\bpowder|extract|flavo|aroma|concentrate|solids|protein|fib(re|er)|isolate|hydroly|modified"
    r"|starch|\bfrom\b|\btype\b|juice from|\bpulp|syrup|\bpaste\b|\bfat\b|puree|purée|dried .* powder|fermented"
    r"|\bfor\b|\bwith\b|\band\b|\bor\b|raising|\bacid|oleoresin|\bmeal\b|\bgerm\b|\bbran\b|flakes? of|mechanically"
    r"|\bskin|\bjuice concentrate|\bdehydrated|\bcrushed|\bsemi\b|reconstituted|\bessential|\bseasoning"
    r"|pasteuri|fortified|collagen|\bbones?\b|sucrose|dextrose|fructose|lactose|\bcurd\b|rehydrated|\brind\b"
    r"|\bcolou?ring|\bpreparation|\bsubstitute|\bcasing|\bgelatine?\b|\bblood\b|\bfillet of\b"
    # The same in the other languages: powders, extracts, concentrates, flavourings, dried, pasteurised.
    r"|pulver|poudre|polvo|polvere|poeder|proszek|\bpó\b|extrakt|extrait|extracto|estratto|extract|ekstrakt"
    r"|konzentrat|concentr|koncentrat|\baroma|arôme|getrocknet|séché|secad|essiccat|gedroogd|suszon|seco\b"
    r"|pasteur|pastoriz|sirup|sirop|jarabe|sciroppo|siroop|syrop|xarope|粉末|エキス|濃縮|香料",
    re.IGNORECASE)

# What the taxonomy names as an ingredient ("egg", "Ei", "Rahm") but a list writes otherwise, and
# household goods and toiletries, which are not food: this project's own words, in LANGUAGES' order.
OWN = [
    ("pantry", ["pasta", "Nudeln", "pâtes", "pasta", "pasta", "pasta", "makaron", "massa", "パスタ"]),
    ("dairy", ["eggs", "Eier", "œufs", "huevos", "uova", "eieren", "jajka", "ovos", "卵"]),
    ("dairy", ["cream", "Sahne", "crème", "nata", "panna", "room", "śmietana", "natas", "生クリーム"]),
    ("dairy", ["yogurt", "Joghurt", "yaourt", "yogur", "yogurt", "yoghurt", "jogurt", "iogurte", "ヨーグルト"]),
    ("pantry", ["stock cubes", "Gemüsebrühe", "bouillon", "caldo", "brodo", "bouillon", "bulion", "caldo", "ブイヨン"]),
    ("pantry", ["breakfast cereal", "Müsli", "céréales", "cereales", "cereali", "ontbijtgranen",
                "płatki śniadaniowe", "cereais", "シリアル"]),
    ("pantry", ["jam", "Marmelade", "confiture", "mermelada", "marmellata", "jam", "dżem", "compota", "ジャム"]),
    ("snacks", ["crisps", "Chips", "chips", "patatas fritas", "patatine", "chips", "chipsy", "batatas fritas",
                "ポテトチップス"]),
    ("snacks", ["biscuits", "Kekse", "biscuits", "galletas", "biscotti", "koekjes", "ciastka", "bolachas",
                "ビスケット"]),
    ("snacks", ["ice cream", "Eis", "glace", "helado", "gelato", "ijs", "lody", "gelado", "アイスクリーム"]),
    ("household", ["toilet paper", "Toilettenpapier", "papier toilette", "papel higiénico", "carta igienica",
                   "wc-papier", "papier toaletowy", "papel higiénico", "トイレットペーパー"]),
    ("household", ["kitchen roll", "Küchenrolle", "essuie-tout", "papel de cocina", "carta da cucina", "keukenrol",
                   "ręcznik papierowy", "rolo de cozinha", "キッチンペーパー"]),
    ("household", ["washing-up liquid", "Spülmittel", "liquide vaisselle", "lavavajillas", "detersivo per piatti",
                   "afwasmiddel", "płyn do naczyń", "detergente da loiça", "食器用洗剤"]),
    ("household", ["laundry detergent", "Waschmittel", "lessive", "detergente para la ropa", "detersivo per bucato",
                   "wasmiddel", "proszek do prania", "detergente da roupa", "洗濯洗剤"]),
    ("household", ["fabric softener", "Weichspüler", "adoucissant", "suavizante", "ammorbidente", "wasverzachter",
                   "płyn do płukania", "amaciador", "柔軟剤"]),
    ("household", ["dishwasher tablets", "Spülmaschinentabs", "tablettes lave-vaisselle", "pastillas lavavajillas",
                   "pastiglie lavastoviglie", "vaatwastabletten", "tabletki do zmywarki", "pastilhas para a máquina",
                   "食洗機用洗剤"]),
    ("household", ["bin bags", "Müllbeutel", "sacs poubelle", "bolsas de basura", "sacchi della spazzatura",
                   "vuilniszakken", "worki na śmieci", "sacos do lixo", "ゴミ袋"]),
    ("household", ["aluminium foil", "Alufolie", "papier aluminium", "papel de aluminio", "carta stagnola",
                   "aluminiumfolie", "folia aluminiowa", "papel de alumínio", "アルミホイル"]),
    ("household", ["cling film", "Frischhaltefolie", "film alimentaire", "film transparente", "pellicola trasparente",
                   "huishoudfolie", "folia spożywcza", "película aderente", "ラップ"]),
    ("household", ["baking paper", "Backpapier", "papier cuisson", "papel de horno", "carta forno", "bakpapier",
                   "papier do pieczenia", "papel vegetal", "クッキングシート"]),
    ("household", ["sponges", "Schwämme", "éponges", "estropajos", "spugne", "sponzen", "gąbki", "esponjas",
                   "スポンジ"]),
    ("household", ["all-purpose cleaner", "Allzweckreiniger", "nettoyant multi-usages", "limpiador multiusos",
                   "detergente multiuso", "allesreiniger", "płyn uniwersalny", "detergente multiusos", "住居用洗剤"]),
    ("household", ["batteries", "Batterien", "piles", "pilas", "pile", "batterijen", "baterie", "pilhas", "電池"]),
    ("household", ["light bulbs", "Glühbirnen", "ampoules", "bombillas", "lampadine", "lampen", "żarówki", "lâmpadas",
                   "電球"]),
    ("household", ["cat food", "Katzenfutter", "nourriture pour chat", "comida para gatos", "cibo per gatti",
                   "kattenvoer", "karma dla kota", "comida para gato", "キャットフード"]),
    ("household", ["dog food", "Hundefutter", "nourriture pour chien", "comida para perros", "cibo per cani",
                   "hondenvoer", "karma dla psa", "comida para cão", "ドッグフード"]),
    ("care", ["tissues", "Taschentücher", "mouchoirs", "pañuelos", "fazzoletti", "zakdoekjes", "chusteczki",
              "lenços de papel", "ティッシュ"]),
    ("care", ["toothpaste", "Zahnpasta", "dentifrice", "pasta de dientes", "dentifricio", "tandpasta",
              "pasta do zębów", "pasta de dentes", "歯磨き粉"]),
    ("care", ["toothbrush", "Zahnbürste", "brosse à dents", "cepillo de dientes", "spazzolino", "tandenborstel",
              "szczoteczka do zębów", "escova de dentes", "歯ブラシ"]),
    ("care", ["shampoo", "Shampoo", "shampooing", "champú", "shampoo", "shampoo", "szampon", "champô", "シャンプー"]),
    ("care", ["shower gel", "Duschgel", "gel douche", "gel de ducha", "bagnoschiuma", "douchegel",
              "żel pod prysznic", "gel de banho", "ボディソープ"]),
    ("care", ["soap", "Seife", "savon", "jabón", "sapone", "zeep", "mydło", "sabonete", "石鹸"]),
    ("care", ["deodorant", "Deo", "déodorant", "desodorante", "deodorante", "deodorant", "dezodorant",
              "desodorizante", "デオドラント"]),
    ("care", ["razor blades", "Rasierklingen", "lames de rasoir", "cuchillas de afeitar", "lamette", "scheermesjes",
              "ostrza do golenia", "lâminas de barbear", "カミソリ"]),
    ("care", ["cotton pads", "Wattepads", "cotons démaquillants", "discos de algodón", "dischetti di cotone",
              "wattenschijfjes", "płatki kosmetyczne", "discos de algodão", "コットン"]),
    ("care", ["nappies", "Windeln", "couches", "pañales", "pannolini", "luiers", "pieluchy", "fraldas", "おむつ"]),
]


# Names of the taxonomy that OWN says otherwise ("egg" → "eggs"), in LANGUAGES' order.
REPLACED_BY_OWN = ["egg", "Ei|Rahm", "œuf", "huevo", "uovo", "ei", "jajko", "ovo", ""]


def key(entry_id):
    return entry_id.lower().replace(" ", "").replace("-", "")


def parse(path):
    """The taxonomy's entries: [{id, parents, names: {lang: [names]}}], in file order."""
    entries, current = [], None
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if not line.strip():
            if current and current["names"]:
                entries.append(current)
            current = None
            continue
        if line.startswith("#"):
            continue
        if current is None:
            current = {"parents": [], "names": {}}
        if line.startswith("<"):
            current["parents"].append(key(line[1:].strip()))
            continue
        match = re.match(r"^([a-z]{2,3}):\s*(.*)$", line)
        if not match:
            continue  # a property (wikidata:en:…), or a comment
        lang, rest = match.groups()
        if lang in ("synonyms", "stopwords"):
            current = None
            continue
        names = [n.strip() for n in rest.split(",") if n.strip()]
        if names and lang not in current["names"]:
            current["names"][lang] = names
            current.setdefault("id", key(f"{lang}:{names[0]}"))
    if current and current["names"]:
        entries.append(current)
    return [e for e in entries if "id" in e]


def ancestors(entry, by_id):
    seen, stack = [], list(entry["parents"])
    while stack:
        parent = stack.pop(0)
        if parent in seen:
            continue
        seen.append(parent)
        if parent in by_id:
            stack += by_id[parent]["parents"]
    return seen


def as_written(name, lang):
    """How a shopping list writes the name: German nouns capitalised, other languages in lower case."""
    name = " ".join(unicodedata.normalize("NFC", name).split())
    if lang == "ja" or not name:
        return name
    if lang == "de":
        return name[0].upper() + name[1:]
    return name[0].lower() + name[1:] if not name[:2].isupper() else name


def from_taxonomy(path):
    """The catalogue drawn from the taxonomy at `path`: {lang: [(name, aisle key)]}."""
    entries = parse(path)
    by_id = {e["id"]: e for e in entries}
    aisle_of = [(key(ancestor), aisle) for ancestor, aisle in AISLE_OF]
    not_bought = {key(x) for x in NOT_BOUGHT}
    chosen = {lang: {} for lang in LANGUAGES}  # lang → key → (name, aisle)

    def keep(lang, name, aisle):
        folded = unicodedata.normalize("NFKD", name.casefold())
        if folded not in chosen[lang]:
            chosen[lang][folded] = (name, aisle)

    for entry in entries:
        names = entry["names"]
        english = names.get("en", [None])[0]
        if english is None or sum(1 for lang in LANGUAGES[1:] if lang in names) < MIN_OTHER_LANGUAGES:
            continue
        lineage = [entry["id"]] + ancestors(entry, by_id)
        if any(x in not_bought for x in lineage):
            continue
        aisle = next((a for ancestor, a in aisle_of if ancestor in lineage), None)
        if aisle is None:
            continue
        for lang in LANGUAGES:
            if lang not in names:
                continue
            name = as_written(names[lang][0], lang)
            if len(name) > 30 or len(name.split()) > 3 or NOT_A_NAME.search(name) or not name:
                continue
            keep(lang, name, aisle)
    for aisle, names in OWN:
        for lang, name in zip(LANGUAGES, names):
            keep(lang, name, aisle)
    # The taxonomy's singular where a list writes the plural (OWN has it).
    for lang, name in zip(LANGUAGES, REPLACED_BY_OWN):
        for each in name.split("|"):
            chosen[lang].pop(unicodedata.normalize("NFKD", each.casefold()), None)

    return {lang: sorted(chosen[lang].values(), key=lambda x: (x[0].casefold(), x[0])) for lang in LANGUAGES}


def write_source(groceries):
    """catalogue.tsv: a header line, then language, aisle key and name, tab-separated."""
    lines = ["language\taisle\tname"]
    for lang in LANGUAGES:
        lines += [f"{lang}\t{aisle}\t{name}" for name, aisle in groceries[lang]]
    with open(SOURCE, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def read_source():
    """catalogue.tsv read back, checked: {lang: [(name, aisle key)]} in the file's order."""
    known = {key for key, _ in AISLES}
    groceries = {lang: [] for lang in LANGUAGES}
    with open(SOURCE, encoding="utf-8") as source:
        lines = source.read().split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if line == "":
            continue
        fields = line.split("\t")
        if len(fields) != 3 or fields[0] not in groceries or fields[1] not in known or not fields[2]:
            sys.exit(f"{SOURCE}:{number}: expected a language, an aisle ({', '.join(sorted(known))}) and a name")
        groceries[fields[0]].append((fields[2], fields[1]))
    return groceries


def folded(name):
    """Near enough to ItemKey.normalize to find one name written twice (the clients key by the real one)."""
    text = unicodedata.normalize("NFKD", name.casefold().replace("ß", "ss"))
    text = "".join(c for c in text if not unicodedata.combining(c)).replace("-", " ")
    return " ".join(text.split())


def read_groceries():
    """groceries.txt read and checked: [(aisle, icon, {lang: [(name, suggested)]})] in the file's order."""
    known = {key for key, _ in AISLES}
    blocks, current = [], None
    with open(GROCERIES, encoding="utf-8") as source:
        lines = source.read().split("\n")
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        where = f"{os.path.relpath(GROCERIES)}:{number}"
        if not line or line.startswith("#"):
            current = None if not line else current
            continue
        match = re.match(r"^([a-z]{2}):\s*(.*)$", line)
        if match is None:
            fields = line.split()
            if current is not None or not 1 <= len(fields) <= 2 or fields[0] not in known:
                sys.exit(f"{where}: a grocery starts with its aisle ({', '.join(sorted(known))}) and an icon")
            current = (fields[0], fields[1] if len(fields) == 2 else "", {})
            blocks.append(current)
            continue
        lang, rest = match.groups()
        if current is None or lang not in LANGUAGES or lang in current[2]:
            sys.exit(f"{where}: a language line ({'|'.join(LANGUAGES)}) once per grocery, after its aisle line")
        names = []
        for name in (n.strip() for n in rest.split("|")):
            suggested = not name.startswith("~")
            name = name.lstrip("~").strip()
            if not name or "\t" in name or "," in name or len(name.encode()) > 60:
                sys.exit(f"{where}: a name of 1 to 60 bytes without tabs or commas")
            names.append((name, suggested))
        current[2][lang] = names
    for aisle, icon, names in blocks:
        if not names:
            sys.exit(f"{os.path.relpath(GROCERIES)}: a grocery of {aisle} without names")
    return blocks


def wrapped(words, indent, width=120):
    """`words` joined by spaces in lines of at most `width` columns, as `swift format` wraps them."""
    lines, line = [], indent
    for word in words:
        if line != indent and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent
        line += ("" if line == indent else " ") + word
    return lines + [line]


def outputs(groceries, blocks):
    """The clients' files made from the catalogue: {path: text}."""
    aisle_index = {name: i for i, (name, _) in enumerate(AISLES)}
    catalogue = {}
    problems = []
    for i, lang in enumerate(LANGUAGES):
        seen = {}  # folded name → aisle
        items, forms = [], []
        for aisle, icon, names in blocks:
            for name, suggested in names.get(lang, []):
                key = folded(name)
                if key in seen:
                    if seen[key] != aisle:
                        problems.append(f"{lang}: '{name}' is in {seen[key]} and in {aisle}")
                    continue
                seen[key] = aisle
                (items if suggested else forms).append([name, aisle_index[aisle], icon])
        for name, aisle in groceries[lang]:
            if folded(name) not in seen:
                seen[folded(name)] = aisle
                forms.append([name, aisle_index[aisle], ""])
        catalogue[lang] = {"aisles": [names[i] for _, names in AISLES], "items": items, "forms": forms}
    if problems:
        sys.exit("make-catalogue: groceries.txt names one key in two aisles:\n  " + "\n  ".join(problems))

    header = ("Generated by Scripts/make-catalogue.py from Client/BasketSearch/groceries.txt (this project's\n"
              "own words) and catalogue.tsv (drawn from Open Food Facts' ingredients taxonomy, ODbL 1.0:\n"
              "sources and licences in CATALOGUE-SOURCES.md). Do not edit.")
    lines = ["// " + line for line in header.split("\n")]
    lines += ["", "extension Catalogue {",
              "    /// The aisles' keys, in a shop's order: what the languages' aisle names are (the same order).",
              "    public static let aisleKeys = [", *wrapped([f'"{key}",' for key, _ in AISLES], "        "), "    ]",
              "",
              "    /// Per language: the aisle names (one a line, in a shop's order), an empty line, each grocery",
              "    /// suggested as its name, a tab, its aisle's number, a tab and its icon (or nothing), an empty",
              "    /// line, then the forms only looked up (plurals, spellings, the taxonomy's names), the same way.",
              "    /// Read once, when a language is first used.",
              "    static let data: [String: String] = ["]
    for lang in LANGUAGES:
        rows = lambda entries: "\n".join(f"{n}\t{a}\t{icon}" for n, a, icon in entries)
        body = ("\n".join(catalogue[lang]["aisles"]) + "\n\n" + rows(catalogue[lang]["items"]) + "\n\n"
                + rows(catalogue[lang]["forms"]))
        assert '"""' not in body and "\\" not in body
        lines.append(f'        "{lang}": """')
        # Indented as `swift format` leaves it (Scripts/format-check.sh): with the closing quotes.
        lines += ["        " + line if line else "" for line in body.split("\n")]
        lines.append('        """,')
    lines += ["    ]", "}", ""]
    files = {SWIFT: "\n".join(lines)}
    for lang in LANGUAGES:
        text = json.dumps({"language": lang, **catalogue[lang]}, ensure_ascii=False, separators=(",", ":"))
        files[os.path.join(WEB, f"catalogue-{lang}.json")] = text + "\n"
    # The aisles' names in every language, for the web client to read a typed aisle ("@dairy")
    # without fetching every catalogue.
    names = {lang: catalogue[lang]["aisles"] for lang in sorted(LANGUAGES)}
    files[os.path.join(WEB, "aisles.js")] = (
        "// Generated by Scripts/make-catalogue.py (the aisles of Client/BasketSearch/groceries.txt's\n"
        "// catalogue). Do not edit.\n\n"
        "/** The aisles' keys, in a shop's order (Catalogue.aisleKeys). */\n"
        f"export const AISLE_KEYS = {json.dumps([key for key, _ in AISLES])};\n\n"
        "/**\n * Each language's aisle names, in the keys' order.\n * @type {Record<string, string[]>}\n */\n"
        "export const AISLE_NAMES = {\n"
        + "".join(f"  {lang}: {json.dumps(names[lang], ensure_ascii=False)},\n" for lang in names)
        + "};\n")
    return files, {lang: (len(catalogue[lang]["items"]), len(catalogue[lang]["forms"])) for lang in LANGUAGES}


def main():
    args = sys.argv[1:]
    if args[:1] == ["--from-taxonomy"] and len(args) == 2:
        write_source(from_taxonomy(args[1]))
    elif args not in ([], ["--check"]):
        sys.exit(__doc__)
    files, counts = outputs(read_source(), read_groceries())
    if args == ["--check"]:
        stale = [path for path, text in files.items() if not os.path.exists(path) or open(path, encoding="utf-8").read() != text]
        for path in stale:
            print(f"make-catalogue: {os.path.relpath(path)} is not what the catalogue's sources make (Scripts/make-catalogue.py)", file=sys.stderr)
        if stale:
            sys.exit(1)
        print(f"make-catalogue: the clients' catalogues are what groceries.txt and catalogue.tsv make "
              f"({sum(n for n, _ in counts.values())} names suggested, {sum(f for _, f in counts.values())} more looked up)")
        return
    for path, text in files.items():
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    for lang in LANGUAGES:
        print(lang, *counts[lang], file=sys.stderr)


if __name__ == "__main__":
    main()
