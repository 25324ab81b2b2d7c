// The text form of a value sealed for an end-to-end encrypted list, and all of it that needs no
// key (BasketCore's Sealed and Base64URL; docs/encryption.md): the padding, the associated
// data, the form a server checks.
import { fromHex } from "./sha256.js";
import { fieldCode, fieldInfo } from "./field.js";
import { LIST_ITEM } from "./ids.js";

/** What every sealed value starts with. */
export const PREFIX = "s1.";
/** The most epochs a list may have. */
export const MAX_EPOCH = 999999;
/** The nonce's and the tag's bytes around a ciphertext. */
export const OVERHEAD = 12 + 16;

const utf8 = new TextEncoder();
const strictUTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The bytes of base64url text (RFC 4648 §5, padded or not); null when it is not base64url or has
 * bits left over that a canonical encoder would not write.
 * @param {string} text
 * @returns {Uint8Array | null}
 */
export function fromBase64URL(text) {
  const bare = text.replace(/={1,2}$/, "");
  if (!/^[A-Za-z0-9_-]*$/.test(bare) || bare.length % 4 === 1) return null;
  const standard = bare.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((bare.length + 3) % 4);
  const bytes = Uint8Array.from(atob(standard), (c) => c.charCodeAt(0));
  return toBase64URL(bytes) === bare ? bytes : null;
}

/**
 * `bytes` in base64url without padding.
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function toBase64URL(bytes) {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The padded length of a plaintext of `count` bytes: 32 at least, powers of two to 512, then
 * multiples of 512.
 * @param {number} count
 */
export function paddedLength(count) {
  const needed = count + 1;
  if (needed <= 32) return 32;
  if (needed <= 512) {
    let length = 64;
    while (length < needed) length *= 2;
    return length;
  }
  return Math.ceil(needed / 512) * 512;
}

/**
 * The padded plaintext of a value: a kind byte (0 null, 1 false, 2 true, 3 text), the text, 0x80, zeros.
 * @param {import("./ops.js").Value} value
 * @returns {Uint8Array}
 */
export function plaintext(value) {
  const body = typeof value === "string" ? utf8.encode(value) : new Uint8Array(0);
  const kind = value === null ? 0 : value === false ? 1 : value === true ? 2 : 3;
  const bytes = new Uint8Array(paddedLength(1 + body.length));
  bytes[0] = kind;
  bytes.set(body, 1);
  bytes[1 + body.length] = 0x80;
  return bytes;
}

/**
 * The value of a plaintext; undefined when it is not one.
 * @param {Uint8Array} bytes
 * @returns {import("./ops.js").Value | undefined}
 */
export function valueOfPlaintext(bytes) {
  let end = bytes.length - 1;
  while (end >= 0 && bytes[end] === 0) end--;
  if (end < 1 || bytes[end] !== 0x80 || paddedLength(end) !== bytes.length) return undefined;
  const kind = bytes[0];
  if (kind === 3) {
    try {
      return strictUTF8.decode(bytes.subarray(1, end));
    } catch {
      return undefined;
    }
  }
  if (end !== 1) return undefined;
  return kind === 0 ? null : kind === 1 ? false : kind === 2 ? true : undefined;
}

/**
 * The longest sealed text a register of `field` may hold.
 * @param {string} field
 */
export function maxTextBytes(field) {
  const info = fieldInfo(field);
  const payload = OVERHEAD + paddedLength(1 + (info?.maxBytes ?? 0));
  return PREFIX.length + String(MAX_EPOCH).length + 1 + Math.floor((payload * 4 + 2) / 3);
}

/**
 * The text of a sealed payload (nonce, ciphertext, tag) under `epoch`.
 * @param {number} epoch
 * @param {Uint8Array} payload
 */
export function sealedText(epoch, payload) {
  return `${PREFIX}${epoch}.${toBase64URL(payload)}`;
}

/**
 * The epoch and payload of a sealed text; null when it is not one.
 * @param {string} text
 * @returns {{ epoch: number, payload: Uint8Array } | null}
 */
export function parse(text) {
  const match = /^s1\.(0|[1-9][0-9]{0,5})\.(.*)$/s.exec(text);
  if (match === null) return null;
  const payload = fromBase64URL(match[2]);
  if (payload === null || payload.length < OVERHEAD + 32) return null;
  return { epoch: Number(match[1]), payload };
}

/** The longest snapshot text a server keeps (Sealed.maxSnapshotBytes): 3 MiB. */
export const MAX_SNAPSHOT_BYTES = 3 << 20;

/**
 * The key epoch and payload of a snapshot's text (Sealed.parseSnapshot): "n1.", the epoch, "."
 * and base64url of the nonce, ciphertext and tag; null when it is not one.
 * @param {string} text
 * @returns {{ epoch: number, payload: Uint8Array } | null}
 */
export function parseSnapshot(text) {
  if (text.length > MAX_SNAPSHOT_BYTES) return null;
  const match = /^n1\.(0|[1-9][0-9]{0,5})\.(.*)$/s.exec(text);
  if (match === null) return null;
  const payload = fromBase64URL(match[2]);
  if (payload === null || payload.length < OVERHEAD + 4) return null;
  return { epoch: Number(match[1]), payload };
}

/**
 * Whether `op` is what an encrypted list's log may hold: sealed text within its field's bound.
 * @param {import("./ops.js").Op} op
 */
export function isWellFormed(op) {
  return typeof op.value === "string" && utf8.encode(op.value).length <= maxTextBytes(op.field) && parse(op.value) !== null;
}

const sealPrefix = utf8.encode("basket-seal-v1\0");

/**
 * The associated data that binds a sealed value to its list, item, field, timestamp, writer and epoch.
 * @param {import("./ops.js").Op} op
 * @param {number} epoch
 * @returns {Uint8Array}
 */
export function associatedData(op, epoch) {
  const bytes = new Uint8Array(sealPrefix.length + 16 + 16 + 1 + 8 + 8 + 4);
  let at = sealPrefix.length;
  bytes.set(sealPrefix);
  bytes.set(fromHex(op.list), at);
  if (op.item !== LIST_ITEM) bytes.set(fromHex(op.item), at + 16);
  at += 32;
  bytes[at] = fieldCode(op.field);
  bytes.set(fromHex(op.ts), at + 1);
  bytes.set(fromHex(op.replica), at + 9);
  new DataView(bytes.buffer).setUint32(at + 17, epoch);
  return bytes;
}

/**
 * Where a shopping status's shop name is sealed (Sealed.shopPlace): the list's `shop` register at
 * version zero, a place no operation of the log takes.
 * @param {string} list
 * @param {string} shop
 * @returns {import("./ops.js").Op}
 */
export function shopPlace(list, shop) {
  return { list, item: LIST_ITEM, field: "shop", ts: "0000000000000000", replica: "0000000000000000", value: shop };
}
