// Item keys (version 1) and the rules every text value follows: the same as BasketCore's
// ItemKey and ItemName (docs/encoding.md). The table comes from Scripts/make-itemkey.py.
import { fieldInfo } from "./field.js";
import { ITEM_KEY_TABLE, COMBINING_RANGES } from "./itemkey-table.js";

/** What each code point becomes in a key (absent: itself), decoded from the table's runs. */
const table = new Map();
{
  let code = 0;
  for (const entry of ITEM_KEY_TABLE.split(";")) {
    const colon = entry.indexOf(":");
    const [rule, count] = entry.slice(colon + 1).split("*");
    code += parseInt(entry.slice(0, colon), 36);
    const repeat = count === undefined ? 0 : parseInt(count, 36);
    const offset = rule.startsWith("~") ? parseInt(rule.slice(1), 36) : null;
    const absolute = offset !== null || rule === "" ? "" : String.fromCodePoint(...rule.split(",").map((v) => parseInt(v, 16)));
    for (let i = 0; i <= repeat; i++, code++) table.set(code, offset === null ? absolute : String.fromCodePoint(code + offset));
  }
}

const combining = COMBINING_RANGES.split(";").map((span) => span.split("-").map((v) => parseInt(v, 16)));

/**
 * @param {number} code
 */
function isCombining(code) {
  let low = 0;
  let high = combining.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const [first, last] = combining[middle];
    if (code < first) high = middle;
    else if (code > last) low = middle + 1;
    else return true;
  }
  return false;
}

/** Keys computed before, by name (bounded): a list's names are keyed again at every change. */
/** @type {Map<string, string>} */
const keys = new Map();

/**
 * The key of `name`: two names with one key are one item.
 * @param {string} name
 * @returns {string}
 */
export function normalize(name) {
  let key = keys.get(name);
  if (key === undefined) {
    key = fold(name);
    if (keys.size >= 50000) keys.clear();
    keys.set(name, key);
  }
  return key;
}

/** @param {string} name */
function fold(name) {
  let out = "";
  let pendingSpace = false;
  for (const char of name) {
    const code = /** @type {number} */ (char.codePointAt(0)); // a character of a string has one
    let replacement;
    if (code >= 0x20 && code < 0x7f) {
      replacement = code >= 0x41 && code <= 0x5a ? String.fromCharCode(code + 32) : code === 0x2d ? " " : char;
    } else {
      replacement = table.get(code);
      if (replacement === undefined) replacement = char;
    }
    for (const piece of replacement) {
      if (piece === " ") {
        pendingSpace = out.length > 0;
        continue;
      }
      if (pendingSpace) out += " ";
      pendingSpace = false;
      out += piece;
    }
  }
  return out;
}

/** Names and titles have at most this many characters (grapheme clusters). */
export const MAX_LENGTH = 500;
/** Combining marks in a row at most. */
export const MAX_COMBINING_MARKS = 30;

/** Why a value is refused: `code` is stable, `message` is for people. */
export class TextProblem extends Error {
  /**
   * @param {"empty" | "too_long" | "control_character" | "too_many_marks" | "not_cleaned"} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const whiteSpace = /^\p{White_Space}$/u;
const control = /^\p{Cc}$/u;
/** Unicode's 12 bidirectional controls (Bidi_Control), listed as ItemName.isBidiControl lists them. */
const bidiControl = /^[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]$/u;
/** @type {Intl.Segmenter | undefined} */
let segmenter;

/**
 * The value `raw` cleaned for `field` ("name" by default): white space collapsed and trimmed,
 * casing kept. Throws TextProblem for an empty value, one over the field's limits, a control
 * character or an accent flood.
 * @param {string} raw
 * @param {string} [field]
 */
export function clean(raw, field = "name") {
  const maxBytes = fieldInfo(field)?.maxBytes ?? 0;
  const isName = field === "name" || field === "title" || field === "shop";
  let out = "";
  let pendingSpace = false;
  let bytes = 0;
  let run = 0;
  for (const char of raw) {
    const code = /** @type {number} */ (char.codePointAt(0)); // a character of a string has one
    if (code < 0x80 ? code === 0x20 || (code >= 0x09 && code <= 0x0d) : whiteSpace.test(char)) {
      pendingSpace = out.length > 0;
      run = 0;
      continue;
    }
    if (code < 0x80 ? code < 0x20 || code === 0x7f : control.test(char) || bidiControl.test(char)) {
      throw new TextProblem(
        "control_character",
        "a value cannot contain control characters (tabs, escapes, bidirectional controls, …)",
      );
    }
    if (code >= 0x80 && isCombining(code)) {
      run += 1;
      if (run > MAX_COMBINING_MARKS) {
        throw new TextProblem("too_many_marks", `a character can carry at most ${MAX_COMBINING_MARKS} accents`);
      }
    } else {
      run = 0;
    }
    if (pendingSpace) {
      out += " ";
      bytes += 1;
    }
    pendingSpace = false;
    out += char;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes > maxBytes) {
      throw new TextProblem("too_long", `a value can have at most ${maxBytes} bytes of UTF-8`);
    }
  }
  if (out === "") throw new TextProblem("empty", "an item name cannot be empty");
  if (isName && bytes > MAX_LENGTH) {
    segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
    let count = 0;
    for (const _ of segmenter.segment(out)) count += 1;
    if (count > MAX_LENGTH) {
      throw new TextProblem("too_long", `an item name can have at most ${MAX_LENGTH} characters (this one has ${count})`);
    }
  }
  if (isName && normalize(out) === "") throw new TextProblem("empty", "an item name cannot be empty");
  return out;
}

/**
 * Whether `value` is valid for `field` as it travels: cleaned already, within the limits.
 * @param {string} value
 * @param {string} field
 */
export function check(value, field) {
  const cleaned = clean(value, field);
  if (cleaned !== value) throw new TextProblem("not_cleaned", "a value travels with its white space collapsed and trimmed");
}
