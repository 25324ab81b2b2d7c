// Operations and their text encoding, version 1 (docs/encoding.md; BasketCore's Op and
// OperationCodec). An operation is { list, item, field, ts, replica, value }: ids and the
// timestamp as lowercase hex (item "-" for the list's registers), value null, true, false or a string.
import { check as checkText } from "./key.js";
import { LIST_ITEM } from "./ids.js";
import { fieldCode, fieldInfo } from "./field.js";
import { isWellFormed } from "./sealed.js";

export const HEADER = "basket-ops 1";

/**
 * A register's value: null (an optional field cleared), a flag, or text.
 * @typedef {null | boolean | string} Value
 */
/**
 * One write to one register (BasketCore's Op): ids and the timestamp as lowercase hex.
 * @typedef {{ list: string, item: string, field: string, ts: string, replica: string, value: Value }} Op
 */

/** An encoding that cannot be decoded, naming the 1-based line. */
export class DecodeError extends Error {
  /**
   * @param {number} line
   * @param {string} message
   */
  constructor(line, message) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

/**
 * Throws an Error when the operation breaks a rule (BasketCore's Op.validate).
 * @param {Op} op
 */
export function validate(op) {
  const info = fieldInfo(op.field);
  if (info === undefined) throw new Error(`unknown field '${op.field}'`);
  if (info.list !== (op.item === LIST_ITEM)) {
    throw new Error(
      info.list ? `field ${op.field} belongs to the list, not to an item` : `field ${op.field} belongs to an item, not to the list`,
    );
  }
  if (op.replica === "0000000000000000") throw new Error("replica id 0 is reserved");
  const value = op.value;
  if (info.kind === "flag") {
    if (typeof value !== "boolean") throw new Error(`field ${op.field} cannot hold ${describe(value)}`);
    return;
  }
  if (value === null) {
    if (info.kind === "optionalText") return;
    throw new Error(`field ${op.field} cannot hold null`);
  }
  if (typeof value !== "string") throw new Error(`field ${op.field} cannot hold ${describe(value)}`);
  try {
    checkText(value, op.field);
  } catch (error) {
    throw new Error(`invalid ${op.field}: ${/** @type {Error} */ (error).message}`);
  }
  checkFormat(value, op.field);
}

/** The most shops one item may be marked for (ShopMarks.maxShops). */
export const MAX_SHOP_MARKS = 16;

/**
 * The formats clients parse strictly (Op.checkFormat): shop ids in `shops`, a time in `dismissed`.
 * @param {string} value
 * @param {string} field
 */
function checkFormat(value, field) {
  if (field === "shops") {
    const ids = value.split(",");
    if (ids.length > MAX_SHOP_MARKS || !ids.every((id) => hex32.test(id))) {
      throw new Error(`invalid shops: at most ${MAX_SHOP_MARKS} shop ids (32 hex digits) separated by commas`);
    }
  } else if (field === "dismissed" && !/^[0-9]*$/.test(value)) {
    throw new Error("invalid dismissed: milliseconds since 1970 in decimal digits");
  }
}

/**
 * @param {unknown} value
 */
function describe(value) {
  return value === null ? "null" : typeof value === "string" ? `"${value}"` : String(value);
}

const hex16 = /^[0-9a-fA-F]{16}$/;
const hex32 = /^[0-9a-fA-F]{32}$/;

/**
 * Decodes and validates an encoding (a string): each operation by its field's rules, or for an
 * encrypted list's (`sealed`) by validateSealed. Throws DecodeError naming the first bad line.
 * @param {string} text
 * @param {boolean} [sealed]
 * @returns {Op[]}
 */
export function decode(text, sealed = false) {
  const lines = text.split("\n");
  if (!lines[0].startsWith(HEADER)) {
    throw new DecodeError(1, "not a Basket operations file (expected the header 'basket-ops 1')");
  }
  if (lines[0] !== HEADER) throw new DecodeError(1, "unsupported format version (this reader knows version 1)");
  /** @type {Op[]} */
  const ops = [];
  /** @type {string | null} */
  let list = null;
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index];
    const number = index + 1;
    if (line === "") continue;
    if (line[0] === "L") {
      if (line.length !== 34 || line[1] !== " " || !hex32.test(line.slice(2))) {
        throw new DecodeError(number, "a list line is 'L' and 32 hex digits");
      }
      list = line.slice(2).toLowerCase();
      continue;
    }
    if (list === null) throw new DecodeError(number, "an operation before any list line");
    const fields = line.split("\t");
    if (fields.length < 5) throw new DecodeError(number, "an operation has 5 tab-separated fields");
    const raw = fields.slice(4).join("\t");
    let item;
    if (fields[0] === "-") item = LIST_ITEM;
    else if (hex32.test(fields[0])) item = fields[0].toLowerCase();
    else throw new DecodeError(number, "bad item id");
    if (fieldCode(fields[1]) < 0) throw new DecodeError(number, `unknown field '${fields[1]}'`);
    if (!hex16.test(fields[2])) throw new DecodeError(number, "bad timestamp");
    if (!hex16.test(fields[3])) throw new DecodeError(number, "bad replica id");
    let value;
    if (raw === "-") value = null;
    else if (raw === "t") value = true;
    else if (raw === "f") value = false;
    else if (raw[0] === "=") {
      value = unescape(raw.slice(1));
      if (value === null) throw new DecodeError(number, "bad text value (invalid UTF-8 or escape)");
    } else throw new DecodeError(number, "bad value");
    const op = { list, item, field: fields[1], ts: fields[2].toLowerCase(), replica: fields[3].toLowerCase(), value };
    try {
      if (sealed) validateSealed(op);
      else validate(op);
    } catch (error) {
      throw new DecodeError(number, /** @type {Error} */ (error).message);
    }
    ops.push(op);
  }
  return ops;
}

/**
 * Throws an Error unless `op` is what an encrypted list's log may hold (Op.validateSealed): its
 * register's target, a replica, and sealed text within the field's bound.
 * @param {Op} op
 */
export function validateSealed(op) {
  const info = fieldInfo(op.field);
  if (info === undefined) throw new Error(`unknown field '${op.field}'`);
  if (info.list !== (op.item === LIST_ITEM)) throw new Error(`field ${op.field} is in the wrong place`);
  if (op.replica === "0000000000000000") throw new Error("replica id 0 is reserved");
  if (!isWellFormed(op)) throw new Error(`field ${op.field} of an encrypted list holds sealed values only (s1.…)`);
}

/**
 * @param {string} text
 * @returns {string | null}
 */
function unescape(text) {
  if (!text.includes("\\")) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char !== "\\") {
      out += char;
      continue;
    }
    const next = text[++i];
    if (next === "\\") out += "\\";
    else if (next === "t") out += "\t";
    else if (next === "n") out += "\n";
    else if (next === "r") out += "\r";
    else return null;
  }
  return out;
}

/**
 * @param {string} text
 */
function escape(text) {
  /** @type {Record<string, string>} */
  const escapes = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
  return text.replace(/[\\\t\n\r]/g, (c) => escapes[c]);
}

/**
 * One operation's line, without its list and newline.
 * @param {Op} op
 */
export function encodeLine(op) {
  const value = op.value === null ? "-" : op.value === true ? "t" : op.value === false ? "f" : "=" + escape(op.value);
  return [op.item, op.field, op.ts, op.replica, value].join("\t");
}

/**
 * The canonical order: list, version (timestamp, replica), item, field.
 * @param {Op} a
 * @param {Op} b
 */
export function canonicalCompare(a, b) {
  if (a.list !== b.list) return a.list < b.list ? -1 : 1;
  if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
  if (a.replica !== b.replica) return a.replica < b.replica ? -1 : 1;
  const itemA = a.item === LIST_ITEM ? "" : a.item;
  const itemB = b.item === LIST_ITEM ? "" : b.item;
  if (itemA !== itemB) return itemA < itemB ? -1 : 1;
  return fieldCode(a.field) - fieldCode(b.field);
}

/**
 * Encodes operations (in canonical order when `canonical`).
 * @param {readonly Op[]} ops
 */
export function encode(ops, canonical = false) {
  const sorted = canonical ? [...ops].sort(canonicalCompare) : ops;
  let out = HEADER + "\n";
  let list = null;
  for (const op of sorted) {
    if (op.list !== list) {
      out += `L ${op.list}\n`;
      list = op.list;
    }
    out += encodeLine(op) + "\n";
  }
  return out;
}

/**
 * Whether two operations are the same write (item, field, timestamp, replica).
 * @param {Op} op
 */
export function identity(op) {
  return `${op.item}\t${op.field}\t${op.ts}\t${op.replica}`;
}
