// Byte helpers of the search (in Swift, SearchIndex's static functions): keys are compared as
// UTF-8 bytes, as BasketSearch compares them.
export const utf8 = new TextEncoder();

/**
 * Bytes of a folded key (UTF-8), or of a natural sort key.
 * @typedef {Uint8Array | number[]} Bytes
 */

// Bytes.
/**
 * @param {number} byte
 */
export function isSeparator(byte) {
  return byte < 0x80 && !(byte >= 0x30 && byte <= 0x39) && !(byte >= 0x61 && byte <= 0x7a) && !(byte >= 0x41 && byte <= 0x5a);
}

/**
 * @param {Bytes} needle
 * @param {Bytes} haystack
 * @param {number} [from]
 * @returns {number} where `needle` starts in `haystack` at or after `from`; -1 when nowhere
 */
export function find(needle, haystack, from = 0) {
  if (needle.length === 0) return from <= haystack.length ? from : -1;
  const last = haystack.length - needle.length;
  outer: for (let start = from; start <= last; start++) {
    for (let k = 0; k < needle.length; k++) if (haystack[start + k] !== needle[k]) continue outer;
    return start;
  }
  return -1;
}

/**
 * @param {Bytes} bytes
 * @param {Bytes} prefix
 */
export function startsWith(bytes, prefix) {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/**
 * @param {Bytes} a
 * @param {Bytes} b
 */
export function equalBytes(a, b) {
  return a.length === b.length && startsWith(a, b);
}

/**
 * @param {Bytes} a
 * @param {Bytes} b
 */
export function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * @param {Uint8Array} bytes
 * @returns {Uint8Array[]}
 */
export function splitWords(bytes) {
  const words = [];
  let start = -1;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || isSeparator(bytes[i])) {
      if (start >= 0) words.push(bytes.subarray(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  return words;
}

/**
 * @param {Iterable<number>} bytes
 * @returns {[number, number]} the letters a-z and the digits present, as bits
 */
export function mask(bytes) {
  let low = 0;
  let high = 0;
  for (const byte of bytes) {
    if (byte >= 0x61 && byte <= 0x7a) low |= 1 << (byte - 0x61);
    else if (byte >= 0x30 && byte <= 0x39) high |= 1 << (byte - 0x30);
  }
  return [low >>> 0, high];
}

/**
 * @param {number} x
 */
export function popcount(x) {
  let count = 0;
  while (x) {
    x &= x - 1;
    count += 1;
  }
  return count;
}

/**
 * "Item 2" before "Item 10": every run of digits prefixed by its length.
 * @param {Uint8Array} folded
 * @returns {number[]}
 */
export function naturalKey(folded) {
  const out = [];
  let i = 0;
  while (i < folded.length) {
    if (folded[i] >= 0x30 && folded[i] <= 0x39) {
      let end = i;
      while (end < folded.length && folded[end] >= 0x30 && folded[end] <= 0x39) end += 1;
      let start = i;
      while (start < end - 1 && folded[start] === 0x30) start += 1;
      out.push(Math.min(end - start, 255));
      for (let k = start; k < end; k++) out.push(folded[k]);
      i = end;
    } else {
      out.push(folded[i]);
      i += 1;
    }
  }
  return out;
}
