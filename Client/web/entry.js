// What is typed into the add box: several items separated by commas, semicolons or new lines,
// each with an optional quantity in front ("2 milk", "500 g flour", "500ml cream", "2 x tomatoes",
// "½ lemon") or behind ("milk x2", "milk 2l", "flour 500 g", "ビール 3本", "ビール3本"); a quantity
// with nothing after it is a name ("2 kg"). BasketSearch's EntryParser, rule for rule.
import { normalize } from "./key.js";
import { graphemes } from "./query.js";
import { germanSpelling } from "./search-index.js";

/** Units a quantity may name, compared lower-cased (EntryParser.units). */
const UNITS = new Set([
  "g", "gr", "gram", "grams", "kg", "kilo", "kilos", "mg", "l", "lt", "litre", "litres", "liter", "liters", "ml",
  "cl", "dl", "cup", "cups", "tbsp", "tsp", "oz", "lb", "lbs", "pack", "packs", "can", "cans", "bottle",
  "bottles", "bag", "bags", "box", "boxes", "dozen", "piece", "pieces", "pcs", "pc", "jar", "jars", "bunch",
  "bunches", "slice", "slices", "loaf", "loaves", "clove", "cloves",
  "stück", "stk", "packung", "pck", "dose", "dosen", "flasche", "flaschen", "bund", "becher", "glas", "tüte",
  "beutel", "scheiben",
  "paquet", "paquets", "boîte", "boîtes", "bouteille", "bouteilles", "tranche", "tranches", "sachet", "sachets",
  "paquete", "paquetes", "lata", "latas", "botella", "botellas", "pz", "bottiglia", "bottiglie", "pak", "fles",
  "flessen", "szt", "opak", "butelka",
]);
/** Counters of Japanese and Chinese, written right after the number (EntryParser.counters). */
const COUNTERS = [
  "パック", "切れ", "本", "個", "枚", "袋", "缶", "箱", "束", "玉", "匹", "尾", "房", "丁", "株", "杯", "粒", "斤", "个",
  "瓶", "包", "盒", "罐", "颗", "只", "条", "片", "块",
];
const FRACTIONS = new Set(["½", "⅓", "⅔", "¼", "¾", "⅕", "⅖", "⅗", "⅘", "⅙", "⅚", "⅛", "⅜", "⅝", "⅞"]);
const whiteSpace = /^\p{White_Space}/u;
const isSpace = (/** @type {string} */ char) => whiteSpace.test(char);
const isNewline = (/** @type {string} */ char) => /^(\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029])$/u.test(char);
const isDigit = (/** @type {string} */ char) => char.length === 1 && char >= "0" && char <= "9";
const TIMES = ["x", "×"];

/**
 * The pieces of `text` between commas, semicolons and new lines, empty ones dropped; a comma
 * between two digits is a decimal comma ("0,5 l Sahne" is one item).
 * @param {string} text
 */
export function split(text) {
  /** @type {string[][]} */
  const pieces = [];
  /** @type {string[]} */
  let current = [];
  const chars = graphemes(text);
  for (const [i, char] of chars.entries()) {
    const decimal = char === "," && isDigit(chars[i - 1] ?? "") && isDigit(chars[i + 1] ?? "");
    if ((char === "," && !decimal) || char === ";" || isNewline(char)) {
      pieces.push(current);
      current = [];
    } else current.push(char);
  }
  pieces.push(current);
  return pieces.filter((chars) => !chars.every(isSpace)).map((chars) => chars.join(""));
}

/**
 * Every item of `text`: [{ name, quantity }]. `existingKeys` holds the keys on the list.
 * @param {string} text
 * @param {Set<string>} existingKeys
 */
export function parseAll(text, existingKeys) {
  return split(text).map((piece) => parse(piece, existingKeys));
}

/**
 * @param {string} text
 */
function words(text) {
  /** @type {string[]} */
  const out = [];
  let current = "";
  for (const char of graphemes(text)) {
    if (isSpace(char)) {
      if (current !== "") out.push(current);
      current = "";
    } else current += char;
  }
  if (current !== "") out.push(current);
  return out;
}

/**
 * One item: an aisle after an "@" (or a "#") that follows a space at its end, then a trailing
 * "x2", a trailing measure ("2l", "500 g", "3本"), a counter glued to the name, or a leading
 * quantity, unless the whole text already names an item (EntryParser.parse).
 * @param {string} raw
 * @param {Set<string>} existingKeys
 * @returns {{ name: string, quantity: string | null, category: string | null }}
 */
export function parse(raw, existingKeys) {
  const text = words(raw).join(" ");
  if (existingKeys.has(normalize(text))) return { name: text, quantity: null, category: null };
  const tag = aisleTag(text);
  if (tag === null) return { ...parseQuantity(text, existingKeys), category: null };
  return { ...parseQuantity(tag.name, existingKeys), category: tag.aisle };
}

/**
 * "milk @dairy" → { name: "milk", aisle: "dairy" }: the aisle after the last " @" or " #", when
 * something is left on both sides (EntryParser.aisleTag).
 * @param {string} text
 * @returns {{ name: string, aisle: string } | null}
 */
function aisleTag(text) {
  const at = Math.max(text.lastIndexOf(" @"), text.lastIndexOf(" #"));
  if (at < 0) return null;
  const name = text.slice(0, at).trim();
  const aisle = text.slice(at + 2).trim();
  return name === "" || aisle === "" ? null : { name, aisle };
}

/**
 * One item's quantity and name (parse without the aisle; EntryParser.parseQuantity).
 * @param {string} text
 * @param {Set<string>} existingKeys
 * @returns {{ name: string, quantity: string | null }}
 */
function parseQuantity(text, existingKeys) {
  let list = words(text);
  if (existingKeys.has(normalize(text))) return { name: text, quantity: null };
  if (list.length >= 2) {
    const last = list[list.length - 1];
    const lower = last.toLowerCase();
    for (const marker of TIMES) {
      if (lower.startsWith(marker) && isNumber(lower.slice(marker.length))) {
        return { name: list.slice(0, -1).join(" "), quantity: lower.slice(marker.length) };
      }
    }
    if (list.length >= 3 && TIMES.includes(list[list.length - 2].toLowerCase()) && isNumber(last)) {
      return { name: list.slice(0, -2).join(" "), quantity: last };
    }
    if (isMeasure(last)) return { name: list.slice(0, -1).join(" "), quantity: last };
    if (list.length >= 3 && isNumber(list[list.length - 2]) && isUnit(last)) {
      return { name: list.slice(0, -2).join(" "), quantity: list.slice(-2).join(" ") };
    }
  }
  const glued = list.length > 0 ? gluedCounter(list[list.length - 1]) : null;
  if (glued !== null) return { name: [...list.slice(0, -1), glued[0]].join(" "), quantity: glued[1] };
  const quantity = [];
  if (list.length > 0 && isMeasure(list[0])) {
    quantity.push(list[0]);
    list = list.slice(1);
  } else if (list.length > 0 && (isNumber(list[0]) || isFraction(list[0]))) {
    quantity.push(list[0]);
    list = list.slice(1);
    if (isNumber(quantity[0]) && list.length > 1 && isFraction(list[0])) {
      quantity.push(list[0]);
      list = list.slice(1);
    }
    if (list.length > 0 && TIMES.includes(list[0].toLowerCase())) {
      list = list.slice(1);
    } else if (list.length > 0 && isUnit(list[0])) {
      quantity.push(list[0]);
      list = list.slice(1);
    }
  }
  if (quantity.length === 0 || list.length === 0) return { name: text, quantity: null };
  return { name: list.join(" "), quantity: quantity.join(" ") };
}

/**
 * `entries` with each name that is an item's German spelling without umlauts ("kaese" for Käse)
 * replaced by that item's name (EntryParser.resolvingSpellings). `names`: the list's names.
 * @template {{ name: string, quantity: string | null }} E
 * @param {E[]} entries
 * @param {string[]} names
 * @returns {E[]}
 */
export function resolveSpellings(entries, names) {
  return resolveSpellingsWith(entries, spellingTable(names));
}

/**
 * The names' keys, and their German spellings without umlauts → the name: what
 * resolveSpellingsWith needs, computed once per change of a list rather than per keystroke.
 * @param {string[]} names
 * @returns {{ keys: Set<string>, spellings: Map<string, string> }}
 */
export function spellingTable(names) {
  /** @type {Map<string, string>} */
  const spellings = new Map();
  /** @type {Set<string>} */
  const keys = new Set();
  for (const name of names) {
    keys.add(normalize(name));
    const spelling = germanSpelling(name);
    if (spelling !== null && !spellings.has(spelling)) spellings.set(spelling, name);
  }
  return { keys, spellings };
}

/**
 * resolveSpellings with the table made already.
 * @template {{ name: string, quantity: string | null }} E
 * @param {E[]} entries
 * @param {{ keys: Set<string>, spellings: Map<string, string> }} table
 * @returns {E[]}
 */
export function resolveSpellingsWith(entries, { keys, spellings }) {
  if (spellings.size === 0) return entries;
  return entries.map((entry) => {
    const key = normalize(entry.name);
    const spelled = keys.has(key) ? undefined : spellings.get(key);
    return spelled !== undefined ? { ...entry, name: spelled } : entry;
  });
}

/** @param {string} word */
function isUnit(word) {
  return UNITS.has(word.toLowerCase()) || COUNTERS.includes(word);
}

/**
 * A number with its unit written on: "500ml", "2l", "1.5kg", "3本".
 * @param {string} word
 */
export function isMeasure(word) {
  const chars = graphemes(word);
  if (chars.length === 0 || !isDigit(chars[0])) return false;
  let end = 0;
  while (end < Math.min(chars.length, 12) && (isDigit(chars[end]) || chars[end] === "." || chars[end] === ",")) end += 1;
  return end < chars.length && isNumber(chars.slice(0, end).join("")) && isUnit(chars.slice(end).join(""));
}

/**
 * "ビール3本" as ["ビール", "3本"]: a name, digits, then a counter; null otherwise.
 * @param {string} word
 * @returns {[string, string] | null}
 */
function gluedCounter(word) {
  const counter = COUNTERS.find((c) => word.endsWith(c));
  if (counter === undefined) return null;
  const chars = graphemes(word.slice(0, word.length - counter.length));
  let start = chars.length;
  while (start > 0 && isDigit(chars[start - 1])) start -= 1;
  if (start === 0 || start === chars.length) return null;
  return [chars.slice(0, start).join(""), chars.slice(start).join("") + counter];
}

/**
 * "2", "1.5", "0,5", "1½".
 * @param {string} s
 */
export function isNumber(s) {
  const chars = graphemes(s);
  if (chars.length === 0 || !isDigit(chars[0])) return false;
  let seenSeparator = false;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (isDigit(c)) continue;
    if ((c === "." || c === ",") && !seenSeparator && i > 0 && i < chars.length - 1) {
      seenSeparator = true;
      continue;
    }
    if (FRACTIONS.has(c) && i === chars.length - 1) continue;
    return false;
  }
  return true;
}

/**
 * "1/2", "½".
 * @param {string} s
 */
export function isFraction(s) {
  const chars = graphemes(s);
  if (chars.length === 1 && FRACTIONS.has(chars[0])) return true;
  const parts = s.split("/");
  return parts.length === 2 && parts.every((part) => part !== "" && [...part].every(isDigit));
}
