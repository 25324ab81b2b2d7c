// Ids: lists (128 random bits), replicas (64 random bits, never 0), items (from list and key).
import { sha256, hex, fromHex } from "./sha256.js";

/** The item id of a list's own registers (title, aisles, archived). */
export const LIST_ITEM = "-";

const itemPrefix = new TextEncoder().encode("basket-item-v1\0");
const utf8 = new TextEncoder();

/** The id of the item with key `key` in `list` (32 hex digits): SHA-256 of
 * "basket-item-v1" 0x00, the list id's 16 bytes and the key's UTF-8, first 16 bytes. */
/**
 * @param {string} list
 * @param {string} key
 * @returns {string}
 */
export function itemID(list, key) {
  return derivedID(itemPrefix, list, key);
}

const shopPrefix = new TextEncoder().encode("basket-shop-v1\0");

/**
 * The id of the shop with key `key` in `list` (ItemID(list:shopKey:)): SHA-256 of "basket-shop-v1"
 * 0x00, the list id's 16 bytes and the key's UTF-8, first 16 bytes, as 32 hex digits.
 * @param {string} list
 * @param {string} key
 * @returns {string}
 */
export function shopID(list, key) {
  return derivedID(shopPrefix, list, key);
}

/**
 * The first 16 bytes of SHA-256(prefix, list id bytes, key UTF-8), as hex.
 * @param {Uint8Array} prefix
 * @param {string} list
 * @param {string} key
 * @returns {string}
 */
function derivedID(prefix, list, key) {
  return hex(sha256(derivationInput(prefix, list, key)).subarray(0, 16));
}

/**
 * prefix, the list id's 16 bytes and the key's UTF-8: what an id is derived from.
 * @param {Uint8Array} prefix
 * @param {string} list
 * @param {string} key
 * @returns {Uint8Array}
 */
function derivationInput(prefix, list, key) {
  const keyBytes = utf8.encode(key);
  const input = new Uint8Array(prefix.length + 16 + keyBytes.length);
  input.set(prefix);
  input.set(fromHex(list), prefix.length);
  input.set(keyBytes, prefix.length + 16);
  return input;
}

/**
 * What the id of the item with key `key` is derived from (ItemID.derivationInput(list:key:)):
 * hashed with SHA-256 for a plain list, with HMAC-SHA-256 under the list's id key for an encrypted one.
 * @param {string} list
 * @param {string} key
 */
export function itemDerivationInput(list, key) {
  return derivationInput(itemPrefix, list, key);
}

/**
 * What the id of the shop with key `key` is derived from (ItemID.derivationInput(list:shopKey:)).
 * @param {string} list
 * @param {string} key
 */
export function shopDerivationInput(list, key) {
  return derivationInput(shopPrefix, list, key);
}

/**
 * @param {number} bytes
 */
function randomHex(bytes) {
  const buffer = new Uint8Array(bytes);
  crypto.getRandomValues(buffer);
  return hex(buffer);
}

/** A new list id. */
export function randomListID() {
  return randomHex(16);
}

/** A new replica id (never 0). */
export function randomReplicaID() {
  for (;;) {
    const id = randomHex(8);
    if (id !== "0000000000000000") return id;
  }
}

/**
 * Whether `text` is 32 lowercase hex digits.
 * @param {unknown} text
 * @returns {text is string}
 */
export function isID128(text) {
  return typeof text === "string" && /^[0-9a-f]{32}$/.test(text);
}
