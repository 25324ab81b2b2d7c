/// The words ``EntryParser`` reads quantities with, in the nine languages of the catalogue. Each
/// table is compared with a word lower-cased (a unit also without a trailing dot: "Pck.", "EL.").
/// The web client's entry-words.js is written from this file by `Scripts/make-entry-words.py`
/// (`--check` in the test command); the conformance vectors hold the two parsers together.
extension EntryParser {
    /// Measures: metric, imperial and kitchen units. A number and a measure with nothing after
    /// them stay a name ("2 kg"): the measure of nothing.
    static let measures: Set<String> = [
        "g", "gr", "gram", "grams", "gramm", "kg", "kilo", "kilos", "kilogram", "kilograms", "mg", "l", "lt", "ltr",
        "litre", "litres", "liter", "liters", "litro", "litros", "litri", "litr", "litry", "ml", "cl", "dl", "oz",
        "lb", "lbs", "cup", "cups", "tbsp", "tsp", "tbs", "tablespoon", "tablespoons", "teaspoon", "teaspoons",
        "pinch", "el", "tl", "esslöffel", "teelöffel", "prise", "prisen", "tasse", "tassen", "msp", "er",
        "cs", "cc", "cuillère", "cuillères", "pincée", "pincées", "verre", "verres", "tasses",
        "cucharada", "cucharadas", "cucharadita", "cucharaditas", "cda", "cdas", "cdta", "cdtas", "pizca", "taza",
        "tazas", "vaso", "vasos",
        "cucchiaio", "cucchiai", "cucchiaino", "cucchiaini", "pizzico", "tazza", "tazze", "bicchiere", "bicchieri",
        "eetlepel", "eetlepels", "theelepel", "theelepels", "eetl", "theel", "snufje", "kopje", "kopjes",
        "łyżka", "łyżki", "łyżek", "łyżeczka", "łyżeczki", "łyżeczek", "szczypta", "szklanka", "szklanki",
        "colher", "colheres", "pitada", "xícara", "xícaras", "chávena", "chávenas", "pint", "pints", "quart",
        "quarts", "gallon", "gallons", "kilogramm", "kilogramme", "gramme", "grammes", "gramo", "gramos",
        "kilogramo", "kilogramos", "grammo", "grammi", "chilo", "chilogrammo", "chilogrammi", "etto", "etti",
        "gramów", "dag", "dkg", "grama", "gramas", "quilo", "quilos",
    ]

    /// Packagings and pieces: with a number and nothing after, the word is the name ("2 rolls").
    static let packagings: Set<String> = [
        "pack", "packs", "packet", "packets", "can", "cans", "tin", "tins", "bottle", "bottles", "bag", "bags", "box",
        "boxes", "carton", "cartons", "tub", "tubs", "jar", "jars", "bunch", "bunches", "slice", "slices", "loaf",
        "loaves", "clove", "cloves", "head", "heads", "roll", "rolls", "piece", "pieces", "pcs", "pc", "dozen",
        "stück", "stk", "packung", "packungen", "pck", "pkg", "päckchen", "dose", "dosen", "flasche", "flaschen",
        "bund", "becher", "glas", "gläser", "tüte", "tüten", "beutel", "scheibe", "scheiben", "zehe", "zehen",
        "kopf", "köpfe", "knolle", "knollen", "schale", "schalen", "netz", "kasten", "kiste", "rolle", "rollen",
        "stange", "stangen",
        "tafel", "tafeln",
        "paquet", "paquets", "boîte", "boîtes", "bouteille", "bouteilles", "tranche", "tranches", "sachet",
        "sachets", "botte", "bottes", "gousse", "gousses", "pot", "pots", "brique", "briques", "pièce", "pièces",
        "barquette", "barquettes", "douzaine", "tête", "têtes", "filet",
        "paquete", "paquetes", "lata", "latas", "botella", "botellas", "bolsa", "bolsas", "caja", "cajas", "diente",
        "dientes", "manojo", "manojos", "docena", "tarro", "tarros", "bote", "botes", "rebanada", "rebanadas",
        "pieza", "piezas", "cabeza", "cabezas", "brik", "briks",
        "confezione", "confezioni", "pacco", "pacchi", "bottiglia", "bottiglie", "scatola", "scatole", "scatoletta",
        "scatolette", "barattolo", "barattoli", "vasetto", "vasetti", "spicchio", "spicchi", "mazzo", "mazzi",
        "fetta", "fette", "pezzo", "pezzi", "busta", "buste", "lattina", "lattine", "cespo", "dozzina", "pz",
        "pak", "pakken", "fles", "flessen", "blik", "blikken", "zak", "zakken", "bos", "bosjes", "doos", "dozen",
        "teentje", "teentjes", "teen", "tenen", "plak", "plakken", "stuk", "stuks", "potje", "potjes", "krop",
        "szt", "opak", "opakowanie", "opakowania", "opakowań", "puszka", "puszki", "puszek", "butelka", "butelki",
        "butelek", "paczka", "paczki", "paczek", "torebka", "torebki", "ząbek", "ząbki", "ząbków", "pęczek",
        "pęczki", "plaster", "plastry", "kostka", "kostki", "słoik", "słoiki", "główka",
        "pacote", "pacotes", "garrafa", "garrafas", "caixa", "caixas", "saco", "sacos", "dente", "dentes", "maço",
        "maços", "fatia", "fatias", "embalagem", "embalagens", "pote", "potes", "dúzia", "unidade", "unidades",
    ]

    /// Units of two or three words ("c. à s.", "cuillère à soupe", "colher de sopa").
    static let phraseUnits: Set<String> = [
        "c. à s.", "c. à c.", "c.à.s.", "c.à.c.", "c. a s.", "c. a c.", "cuillère à soupe", "cuillères à soupe",
        "cuillère à café", "cuillères à café", "colher de sopa", "colheres de sopa", "colher de chá",
        "colheres de chá", "fl oz", "fl. oz.",
    ]

    /// Counters of Japanese and Chinese ("3本", "2個", "1パック"): a unit written right after the
    /// number, and often right after the name ("ビール3本").
    static let counters: [String] = [
        "パック", "切れ", "本", "個", "枚", "袋", "缶", "箱", "束", "玉", "匹", "尾", "房", "丁", "株", "杯", "粒", "斤", "个",
        "瓶", "包", "盒", "罐", "颗", "只", "条", "片", "块",
    ]

    /// Numbers written as words, one to twelve and a half, as the amount they say. A number word is
    /// an amount only before another word ("zwei Flaschen Wasser"; "Eins" alone is a name).
    static let numberWords: [String: String] = [
        "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
        "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "half": "½",
        "ein": "1", "eine": "1", "einen": "1", "eins": "1", "zwei": "2", "drei": "3", "vier": "4", "fünf": "5",
        "sechs": "6", "sieben": "7", "acht": "8", "neun": "9", "zehn": "10", "elf": "11", "zwölf": "12",
        "halbe": "½", "halber": "½", "halbes": "½", "halben": "½",
        "un": "1", "une": "1", "deux": "2", "trois": "3", "quatre": "4", "cinq": "5", "sept": "7", "huit": "8",
        "neuf": "9", "dix": "10", "onze": "11", "douze": "12", "demi": "½", "demie": "½",
        "uno": "1", "una": "1", "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5", "seis": "6", "siete": "7",
        "ocho": "8", "nueve": "9", "diez": "10", "once": "11", "doce": "12", "medio": "½", "media": "½",
        "due": "2", "tre": "3", "quattro": "4", "cinque": "5", "sei": "6", "sette": "7", "otto": "8", "nove": "9",
        "dieci": "10", "undici": "11", "dodici": "12", "mezzo": "½", "mezza": "½",
        "een": "1", "één": "1", "twee": "2", "drie": "3", "vijf": "5", "zes": "6", "zeven": "7", "negen": "9",
        "tien": "10", "twaalf": "12", "halve": "½",
        "jeden": "1", "jedna": "1", "jedno": "1", "dwa": "2", "dwie": "2", "trzy": "3", "cztery": "4", "pięć": "5",
        "sześć": "6", "siedem": "7", "osiem": "8", "dziewięć": "9", "dziesięć": "10", "pół": "½",
        "um": "1", "uma": "1", "dois": "2", "duas": "2", "três": "3", "quatro": "4", "oito": "8", "dez": "10",
        "meio": "½", "meia": "½",
    ]

    /// Articles that say one only before a unit ("a bag of rice" is one bag; "a" alone is no amount).
    static let articles: Set<String> = ["a", "an"]

    /// Words between a unit and the name ("2 cups of flour", "500 g de farine", "1 kg di farina").
    static let linkWords: Set<String> = ["of", "de", "di", "del", "della", "du", "des", "da", "do", "das", "dos"]

    /// Elisions glued to the name after a unit ("3 gousses d'ail", "2 cucchiai dell'olio").
    static let elisions: [String] = ["dell'", "dell’", "de l'", "de l’", "d'", "d’"]

    /// Words for "about" before an amount ("ca. 500 g Mehl"): dropped.
    static let approximately: Set<String> = [
        "ca.", "ca", "approx.", "approx", "about", "etwa", "env.", "environ", "circa",
    ]

    /// The marks a list line begins with: bullets, dashes and checkboxes, each before a space.
    static let lineMarks: [String] = [
        "- [ ]", "- [x]", "* [ ]", "[ ]", "[x]", "[]", "-", "*", "•", "·", "–", "—", "+", "☐", "☑", "☒", "✓", "✔",
        "□", "▢", "○", "◦", "▪",
    ]

    /// Names that begin with a number, taken whole ("7 Up", "4711 Echt Kölnisch Wasser"), as keys.
    static let numberedNames: [String] = ["7 up", "4711", "8x4", "3 musketeers", "5 gum"]
}
