// What is typed into the add box: several items separated by commas, semicolons or new lines, or
// for text of several lines (a recipe, a chat message) one item per line; each with an optional
// quantity in front ("2 milk", "500 g flour", "2x milk", "2-3 onions", "zwei Flaschen Wasser",
// "2 c. à s. d'huile") or behind ("milk x2", "milk 2l", "flour 500 g", "ビール3本"), a note in
// parentheses, and a bullet, number or checkbox in front, dropped; a quantity with nothing after
// it is a name ("2 kg"). BasketSearch's EntryParser, rule for rule.
import { normalize } from "./key.js";
import { graphemes } from "./query.js";
import { germanSpelling } from "./search-index.js";
import { APPROXIMATELY, ARTICLES, COUNTERS, ELISIONS, LINE_MARKS, LINK_WORDS, MEASURES, NUMBER_WORDS, NUMBERED_NAMES, PACKAGINGS, PHRASE_UNITS } from "./entry-words.js";

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
    if (isSeparator(chars, i) || isNewline(char)) {
      pieces.push(current);
      current = [];
    } else current.push(char);
  }
  pieces.push(current);
  return pieces.filter((chars) => !chars.every(isSpace)).map((chars) => chars.join(""));
}

/**
 * The items of `text`: its lines when it has two or more that are not blank (a pasted recipe or
 * chat message: a comma inside a line then starts the item's note), else split(text).
 * @param {string} text
 */
export function pieces(text) {
  /** @type {string[]} */
  const lines = [];
  let current = "";
  for (const char of graphemes(text)) {
    if (isNewline(char)) {
      lines.push(current);
      current = "";
    } else current += char;
  }
  lines.push(current);
  const filled = lines.filter((line) => !graphemes(line).every(isSpace));
  return filled.length >= 2 ? filled : split(text);
}

/**
 * Whether chars[i] separates items: a semicolon, or a comma that is not between digits.
 * @param {string[]} chars
 * @param {number} i
 */
function isSeparator(chars, i) {
  if (chars[i] === ";") return true;
  if (chars[i] !== ",") return false;
  return !(isDigit(chars[i - 1] ?? "") && isDigit(chars[i + 1] ?? ""));
}

/**
 * Every item of `text`: [{ name, quantity }]. `existingKeys` holds the keys on the list.
 * @param {string} text
 * @param {Set<string>} existingKeys
 */
export function parseAll(text, existingKeys) {
  return pieces(text).map((piece) => parse(piece, existingKeys));
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
 * What one item says: its name, quantity, aisle and note, and the line as typed (EntryParser's Entry).
 * @typedef {{ name: string, quantity: string | null, category: string | null, note: string | null, typed: string }} Entry
 */

/**
 * One item: a bullet, number or checkbox in front is dropped; an aisle after an "@" (or a "#")
 * that follows a space at its end, a note after a comma and one in parentheses are taken out
 * (parentheses holding only a quantity give the quantity); then the quantity and the name. Text
 * that already names an item is taken whole (EntryParser.parse).
 * @param {string} raw
 * @param {Set<string>} existingKeys
 * @returns {Entry}
 */
export function parse(raw, existingKeys) {
  const typed = words(raw).join(" ");
  /** @type {Entry} */
  const whole = { name: typed, quantity: null, category: null, note: null, typed };
  if (existingKeys.has(normalize(typed))) return whole;
  let text = withoutLineMark(typed);
  if (text === "") return whole;
  /** @type {Entry} */
  const entry = { ...whole, name: text };
  if (existingKeys.has(normalize(text))) return entry;
  const tag = aisleTag(text);
  if (tag !== null) {
    text = tag.name;
    entry.category = tag.aisle;
  }
  /** @type {string[]} */
  const notes = [];
  const comma = commaNote(text);
  if (comma !== null) {
    text = comma.rest;
    notes.push(comma.note);
  }
  /** @type {string | null} */
  let inParentheses = null;
  const group = parenthesised(text);
  if (group !== null) {
    text = group.rest;
    inParentheses = standaloneQuantity(group.inner.split(" "));
    if (inParentheses === null) notes.unshift(group.inner);
  }
  // "Milch, 1 l": a note that is only a quantity is the quantity.
  const last = notes[notes.length - 1];
  if (inParentheses === null && last !== undefined) {
    inParentheses = standaloneQuantity(last.split(" "));
    if (inParentheses !== null) notes.pop();
  }
  const read = parseQuantity(text, existingKeys);
  entry.name = read.name;
  entry.quantity = read.quantity ?? inParentheses;
  if (read.quantity !== null && inParentheses !== null) notes.unshift(inParentheses);
  entry.note = notes.length === 0 ? null : notes.join(", ");
  return entry;
}

/**
 * `text` without the bullet, dash, checkbox or number ("1.", "2)") a list line begins with.
 * @param {string} text
 */
function withoutLineMark(text) {
  for (let round = 0; round < 2; round++) {
    const mark = LINE_MARKS.find((m) => text.startsWith(m + " "));
    if (mark !== undefined) {
      text = text.slice(mark.length + 1);
      continue;
    }
    const numbered = /^[0-9]{1,3}[.)] /.exec(text);
    if (numbered === null) break;
    text = text.slice(numbered[0].length);
  }
  return text;
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
 * "1 onion, chopped" → { rest: "1 onion", note: "chopped" } (EntryParser.commaNote).
 * @param {string} text
 * @returns {{ rest: string, note: string } | null}
 */
function commaNote(text) {
  const chars = graphemes(text);
  const i = chars.findIndex((_, index) => isSeparator(chars, index));
  if (i < 0) return null;
  const rest = chars.slice(0, i).join("").trim();
  const note = chars.slice(i + 1).join("").trim();
  return rest === "" || note === "" ? null : { rest, note };
}

/**
 * "flour (for the cake)" → { rest: "flour", inner: "for the cake" }: the last group in
 * parentheses that stands apart (a space or the text's edge on both sides: "alert(3)" is a
 * name), when something is left around it (EntryParser.parenthesised).
 * @param {string} text
 * @returns {{ rest: string, inner: string } | null}
 */
function parenthesised(text) {
  const open = text.lastIndexOf("(");
  const close = open < 0 ? -1 : text.indexOf(")", open);
  if (close < 0 || (open > 0 && text[open - 1] !== " ") || (close + 1 < text.length && text[close + 1] !== " ")) return null;
  const inner = text.slice(open + 1, close).trim();
  const rest = words(text.slice(0, open) + " " + text.slice(close + 1)).join(" ");
  return inner === "" || rest === "" ? null : { rest, inner };
}

/**
 * One item's quantity and name (parse without the aisle and note; EntryParser.parseQuantity).
 * @param {string} text
 * @param {Set<string>} existingKeys
 * @returns {{ name: string, quantity: string | null }}
 */
function parseQuantity(text, existingKeys) {
  if (existingKeys.has(normalize(text))) return { name: text, quantity: null };
  const list = words(text);
  const read = numberedName(list) ?? trailingQuantity(list);
  if (read !== null) return read;
  const glued = list.length > 0 ? gluedCounter(list[list.length - 1]) : null;
  if (glued !== null) return { name: [...list.slice(0, -1), glued[0]].join(" "), quantity: glued[1] };
  const leading = leadingQuantity(list);
  if (leading === null) return { name: text, quantity: null };
  if (leading.rest.length > 0) return { name: leading.rest.join(" "), quantity: leading.quantity };
  // "2 rolls", "zwei Flaschen": a packaging with nothing after it is what is bought.
  if (leading.packaging !== null) return { name: leading.packaging, quantity: leading.amount };
  return { name: text, quantity: null };
}

/**
 * A name that begins with a number ("7 Up") taken whole, or after a quantity ("2 7 Up"); null
 * for other text (EntryParser.numberedName).
 * @param {string[]} list
 * @returns {{ name: string, quantity: string | null } | null}
 */
function numberedName(list) {
  const key = normalize(list.join(" "));
  for (const name of NUMBERED_NAMES) {
    if (key === name || key.startsWith(name + " ")) return { name: list.join(" "), quantity: null };
    const count = name.split(" ").length;
    if (list.length <= count || !key.endsWith(" " + name)) continue;
    const quantity = standaloneQuantity(list.slice(0, -count));
    if (quantity !== null) return { name: list.slice(-count).join(" "), quantity };
  }
  return null;
}

/**
 * A quantity written after the name: "milk x2", "milk 2x", "eggs x 12", "milk 2l", "flour 500 g"
 * (EntryParser.trailingQuantity).
 * @param {string[]} list
 * @returns {{ name: string, quantity: string | null } | null}
 */
function trailingQuantity(list) {
  if (list.length < 2) return null;
  const last = list[list.length - 1];
  const name = list.slice(0, -1).join(" ");
  const times = timesAmount(last.toLowerCase());
  if (times !== null) return { name, quantity: times };
  if (list.length >= 3 && TIMES.includes(list[list.length - 2].toLowerCase()) && isAmount(last)) {
    return { name: list.slice(0, -2).join(" "), quantity: last };
  }
  if (isMeasure(last)) return { name, quantity: last };
  if (list.length >= 3 && isAmount(list[list.length - 2]) && isUnit(last)) {
    return { name: list.slice(0, -2).join(" "), quantity: list.slice(-2).join(" ") };
  }
  return null;
}

/**
 * "x2", "×3", "2x", "3×" as the amount; null for another word (EntryParser.timesAmount).
 * @param {string} lower
 */
function timesAmount(lower) {
  for (const mark of TIMES) {
    if (lower.startsWith(mark) && isAmount(lower.slice(mark.length))) return lower.slice(mark.length);
    if (lower.endsWith(mark) && isAmount(lower.slice(0, -mark.length))) return lower.slice(0, -mark.length);
  }
  return null;
}

/**
 * The quantity in front: an optional "about", then a measure ("500ml"), "2x", or an amount (a
 * number, fraction, range, mixed number or number word; "a"/"an" before a unit), then "x" or a
 * unit of up to three words, then a linking "of"/"de"/"di"/"d'" (EntryParser.leadingQuantity).
 * @param {string[]} list
 * @returns {{ quantity: string, amount: string, packaging: string | null, rest: string[] } | null}
 */
function leadingQuantity(list) {
  let i = list.length > 1 && APPROXIMATELY.has(list[0].toLowerCase()) && startsAmount(list[1]) ? 1 : 0;
  if (i >= list.length) return null;
  const first = list[i];
  const lower = first.toLowerCase();
  /** @type {string[]} */
  let amount = [];
  /** @type {string | null} */
  let unit = null;
  i += 1;
  const times = timesAmount(lower);
  const value = NUMBER_WORDS.get(lower);
  if (isMeasure(first)) {
    amount.push(first);
    unit = "";
  } else if (times !== null && isDigit(graphemes(first)[0])) {
    return { quantity: times, amount: times, packaging: null, rest: list.slice(i) };
  } else if (isAmount(first)) {
    amount.push(first);
    if (isNumber(first) && i + 1 < list.length && isFraction(list[i])) amount.push(list[i++]);
  } else if (value !== undefined && i < list.length) {
    amount.push(value);
    // "half a lemon"; "eine halbe Gurke".
    if (value === "½" && i + 1 < list.length && ARTICLES.has(list[i].toLowerCase())) i += 1;
    if (value === "1" && i + 1 < list.length && NUMBER_WORDS.get(list[i].toLowerCase()) === "½") {
      amount = ["½"];
      i += 1;
    }
  } else if (ARTICLES.has(lower) && i < list.length && unitLength(list, i) > 0) {
    amount.push("1");
  } else return null;
  /** @type {string | null} */
  let packaging = null;
  const length = unit === null ? unitLength(list, i) : 0;
  if (unit === null && i < list.length && TIMES.includes(list[i].toLowerCase())) {
    i += 1; // "2 x tomatoes"; "2 x 500ml cream", "2 x 400 g tomatoes"
    if (i + 1 < list.length && isMeasure(list[i])) {
      amount.push(list[i - 1].toLowerCase(), list[i]);
      unit = "";
      i += 1;
    } else if (i + 2 < list.length && isAmount(list[i]) && unitLength(list, i + 1) === 1) {
      amount.push(list[i - 1].toLowerCase(), list[i], list[i + 1]);
      unit = "";
      i += 2;
    }
  } else if (length > 0) {
    unit = list.slice(i, i + length).join(" ");
    if (length === 1 && PACKAGINGS.has(bare(list[i].toLowerCase()))) packaging = list[i];
    i += length;
  }
  let rest = list.slice(i);
  if (unit !== null) rest = withoutLink(rest);
  const quantity = [...amount, ...(unit === null || unit === "" ? [] : [unit])].join(" ");
  return { quantity, amount: amount.join(" "), packaging, rest };
}

/**
 * `list` without the "of", "de", "di" or elision a unit is joined to the name with.
 * @param {string[]} list
 */
function withoutLink(list) {
  if (list.length > 1 && LINK_WORDS.has(list[0].toLowerCase())) {
    // "1 kg de la farine".
    return withoutElision(list.slice(list[1].toLowerCase() === "la" && list.length > 2 ? 2 : 1));
  }
  return withoutElision(list);
}

/**
 * "d'ail" → "ail", "dell'olio" → "olio".
 * @param {string[]} list
 */
function withoutElision(list) {
  if (list.length === 0) return list;
  const lower = list[0].toLowerCase();
  for (const elision of ELISIONS) {
    if (lower.startsWith(elision) && graphemes(lower).length > graphemes(elision).length) {
      return [graphemes(list[0]).slice(graphemes(elision).length).join(""), ...list.slice(1)];
    }
  }
  return list;
}

/**
 * How many words from `i` make a unit (1 to 3, the longest); 0 for none.
 * @param {string[]} list
 * @param {number} i
 */
function unitLength(list, i) {
  for (let length = 3; length >= 2; length--) {
    if (i + length <= list.length && PHRASE_UNITS.has(list.slice(i, i + length).join(" ").toLowerCase())) return length;
  }
  return i < list.length && isUnit(list[i]) ? 1 : 0;
}

/**
 * Text that is only a quantity ("10 Stück", "250 g", "x2"), as that quantity; null otherwise.
 * @param {string[]} list
 * @returns {string | null}
 */
function standaloneQuantity(list) {
  if (list.length === 1) {
    const times = timesAmount(list[0].toLowerCase());
    if (times !== null) return times;
    if (isAmount(list[0]) || isMeasure(list[0])) return list[0];
  }
  const leading = leadingQuantity(list);
  return leading === null || leading.rest.length > 0 || leading.quantity === leading.amount ? null : leading.quantity;
}

/**
 * Whether `word` may begin an amount (a digit, a fraction, or a number word).
 * @param {string} word
 */
function startsAmount(word) {
  return isAmount(word) || isMeasure(word) || NUMBER_WORDS.has(word.toLowerCase());
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

/**
 * `word` without one trailing dot ("pck." → "pck").
 * @param {string} word
 */
function bare(word) {
  return word.endsWith(".") ? word.slice(0, -1) : word;
}

/** @param {string} word */
function isUnit(word) {
  const lower = bare(word.toLowerCase());
  return MEASURES.has(lower) || PACKAGINGS.has(lower) || COUNTERS.includes(word);
}

/**
 * A number with its unit written on: "500ml", "2l", "1.5kg", "2EL", "6er", "3本".
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
 * A number, a fraction or a range: "2", "1,5", "1/2", "½", "2-3".
 * @param {string} s
 */
function isAmount(s) {
  return isNumber(s) || isFraction(s) || isRange(s);
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

/**
 * "2-3", "2–3", "1,5-2": two numbers joined by a hyphen or an en dash.
 * @param {string} s
 */
function isRange(s) {
  const parts = s.split(/[-–]/u);
  return parts.length === 2 && parts.every(isNumber);
}
