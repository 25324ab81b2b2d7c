// Edit distance (BasketSearch's EditDistance.swift): weighted by keyboard neighbours, swaps
// and doubled letters, in characters, bounded by an allowance that grows with the word.
// Edit distance (EditDistance.swift).
export const EDIT = 4;
export const NEIGHBOUR = 3;
export const TRANSPOSITION = 3;
export const DOUBLED = 2;
export const MAXIMUM_LENGTH = 48;

/**
 * @param {number} length
 */
export function allowance(length) {
  return length >= 7 ? 2 * EDIT : length === 6 ? 6 : length >= 4 ? EDIT : 0;
}

/**
 * @param {Iterable<number>} bytes UTF-8
 */
export function characters(bytes) {
  let count = 0;
  for (const b of bytes) if ((b & 0xc0) !== 0x80) count += 1;
  return count;
}

/**
 * @param {import("./search-bytes.js").Bytes} bytes UTF-8
 * @returns {number[]}
 */
export function scalars(bytes) {
  const out = [];
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i];
    let scalar = lead;
    let extra = 0;
    if (lead >= 0xf0) {
      scalar &= 0x07;
      extra = 3;
    } else if (lead >= 0xe0) {
      scalar &= 0x0f;
      extra = 2;
    } else if (lead >= 0xc0) {
      scalar &= 0x1f;
      extra = 1;
    }
    i += 1;
    for (let k = 0; k < extra && i < bytes.length; k++) {
      scalar = (scalar << 6) | (bytes[i] & 0x3f);
      i += 1;
    }
    out.push(scalar);
  }
  return out;
}

export const neighbourTable = (() => {
  const table = new Array(26).fill(0);
  const layouts = [
    ["qwertyuiop", "asdfghjkl", "zxcvbnm"],
    ["azertyuiop", "qsdfghjklm", "wxcvbn"],
    ["qwertzuiop", "asdfghjkl", "yxcvbnm"],
  ];
  for (const rows of layouts) {
    rows.forEach((row, r) => {
      for (let c = 0; c < row.length; c++) {
        const near = [];
        if (c > 0) near.push(row[c - 1]);
        if (c + 1 < row.length) near.push(row[c + 1]);
        if (r > 0) for (const cc of [c, c + 1]) if (cc < rows[r - 1].length) near.push(rows[r - 1][cc]);
        if (r + 1 < rows.length) for (const cc of [c - 1, c]) if (cc >= 0 && cc < rows[r + 1].length) near.push(rows[r + 1][cc]);
        for (const other of near) table[row.charCodeAt(c) - 0x61] |= 1 << (other.charCodeAt(0) - 0x61);
      }
    });
  }
  return table;
})();

/**
 * @param {number} a
 * @param {number} b
 */
export function areNeighbours(a, b) {
  if (a < 0x61 || a > 0x7a || b < 0x61 || b > 0x7a) return false;
  return (neighbourTable[a - 0x61] & (1 << (b - 0x61))) !== 0;
}

/**
 * @param {number[]} word
 * @param {number} at
 */
export function deleteCost(word, at) {
  return (at > 0 && word[at - 1] === word[at]) || (at + 1 < word.length && word[at + 1] === word[at]) ? DOUBLED : EDIT;
}

/**
 * The weighted distance from typed word `a` to `b` (UTF-8 bytes), or null when above `limit`.
 * @param {import("./search-bytes.js").Bytes} aBytes
 * @param {import("./search-bytes.js").Bytes} bBytes
 * @param {number} limit
 * @param {boolean} [prefix]
 * @returns {number | null}
 */
export function distance(aBytes, bBytes, limit, prefix = false) {
  const a = scalars(aBytes);
  let b = scalars(bBytes);
  if (a.length > MAXIMUM_LENGTH || b.length > MAXIMUM_LENGTH) return null;
  if (prefix) b = b.slice(0, Math.min(b.length, a.length + Math.trunc(limit / DOUBLED)));
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return null;
  if (!prefix && Math.abs(n - m) * DOUBLED > limit) return null;
  let before = new Array(m + 1).fill(0);
  let previous = new Array(m + 1).fill(0);
  let current = new Array(m + 1).fill(0);
  for (let j = 1; j <= m; j++) previous[j] = previous[j - 1] + deleteCost(b, j - 1);
  for (let i = 1; i <= n; i++) {
    current[0] = previous[0] + deleteCost(a, i - 1);
    let rowMin = current[0];
    for (let j = 1; j <= m; j++) {
      const x = a[i - 1];
      const y = b[j - 1];
      const substitution = x === y ? 0 : areNeighbours(x, y) ? NEIGHBOUR : EDIT;
      let value = Math.min(previous[j] + deleteCost(a, i - 1), current[j - 1] + deleteCost(b, j - 1), previous[j - 1] + substitution);
      if (i > 1 && j > 1 && x === b[j - 2] && a[i - 2] === y && x !== y) value = Math.min(value, before[j - 2] + TRANSPOSITION);
      current[j] = value;
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return null;
    [before, previous, current] = [previous, current, before];
  }
  let best = previous[m];
  if (prefix) for (let j = 0; j < m; j++) best = Math.min(best, previous[j]);
  return best <= limit ? best : null;
}
