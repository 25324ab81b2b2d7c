// What is typed into the add box: several items separated by commas, semicolons or new lines,
// each with an optional quantity ("2 milk", "500 g flour", "½ lemon", "milk x2"). BasketSearch's
// EntryParser, rule for rule.
import { normalize } from "./key.js";
import { graphemes } from "./search.js";

const UNITS = new Set([
  "g", "gr", "gram", "grams", "kg", "mg", "l", "ml", "cl", "dl", "cup", "cups", "tbsp", "tsp", "oz", "lb", "lbs",
  "pack", "packs", "can", "cans", "bottle", "bottles", "bag", "bags", "box", "boxes", "dozen", "piece", "pieces",
  "pcs", "pc", "jar", "jars", "bunch", "bunches", "slice", "slices", "loaf", "loaves", "clove", "cloves",
]);
const FRACTIONS = new Set(["½", "⅓", "⅔", "¼", "¾", "⅕", "⅖", "⅗", "⅘", "⅙", "⅚", "⅛", "⅜", "⅝", "⅞"]);
const whiteSpace = /^\p{White_Space}/u;
const isSpace = (char) => whiteSpace.test(char);
const isNewline = (char) => /^(\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029])$/u.test(char);
const isDigit = (char) => char.length === 1 && char >= "0" && char <= "9";

/** The pieces of `text` between commas, semicolons and new lines, empty ones dropped. */
export function split(text) {
  const pieces = [];
  let current = [];
  for (const char of graphemes(text)) {
    if (char === "," || char === ";" || isNewline(char)) {
      pieces.push(current);
      current = [];
    } else current.push(char);
  }
  pieces.push(current);
  return pieces.filter((chars) => !chars.every(isSpace)).map((chars) => chars.join(""));
}

/** Every item of `text`: [{ name, quantity }]. `existingKeys` holds the keys on the list. */
export function parseAll(text, existingKeys) {
  return split(text).map((piece) => parse(piece, existingKeys));
}

function words(text) {
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

/** One item: a leading quantity or a trailing "x2", unless the whole text already names an item. */
export function parse(raw, existingKeys) {
  let list = words(raw);
  const text = list.join(" ");
  if (existingKeys.has(normalize(text))) return { name: text, quantity: null };
  if (list.length >= 2) {
    const last = list[list.length - 1].toLowerCase();
    for (const marker of ["x", "×"]) {
      if (last.startsWith(marker) && isNumber(last.slice(marker.length))) {
        return { name: list.slice(0, -1).join(" "), quantity: last.slice(marker.length) };
      }
    }
    if (list.length >= 3 && ["x", "×"].includes(list[list.length - 2].toLowerCase()) && isNumber(last)) {
      return { name: list.slice(0, -2).join(" "), quantity: last };
    }
  }
  const quantity = [];
  if (list.length > 0 && (isNumber(list[0]) || isFraction(list[0]))) {
    quantity.push(list[0]);
    list = list.slice(1);
    if (isNumber(quantity[0]) && list.length > 1 && isFraction(list[0])) {
      quantity.push(list[0]);
      list = list.slice(1);
    }
    if (list.length > 1 && UNITS.has(list[0].toLowerCase())) {
      quantity.push(list[0]);
      list = list.slice(1);
    }
  }
  if (quantity.length === 0 || list.length === 0) return { name: text, quantity: null };
  return { name: list.join(" "), quantity: quantity.join(" ") };
}

/** "2", "1.5", "0,5", "1½". */
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

/** "1/2", "½". */
export function isFraction(s) {
  const chars = graphemes(s);
  if (chars.length === 1 && FRACTIONS.has(chars[0])) return true;
  const parts = s.split("/");
  return parts.length === 2 && parts.every((part) => part !== "" && [...part].every(isDigit));
}
