// Spellings by sound: what a shopper writes for a loanword heard rather than read ("zukini" for
// zucchini, "schampions" for champignons). BasketSearch's SoundSpelling.swift, rule for rule: both
// sides folded to how they sound, compared with the search's edit distance, asked only when
// nothing else is close.
import { allowance, characters, distance } from "./edit-distance.js";
import { splitWords } from "./search-bytes.js";

const c = (/** @type {string} */ letter) => letter.charCodeAt(0);
const [S, C, H, P, T, G, N, Q, U, K, O, I, E, Y, Z, X, W, V, F, A] = [..."schptgnqukoieyzxwvfa"].map(c);

/**
 * `word` (a key's word, UTF-8) as it sounds (SoundSpelling.fold).
 * @param {ArrayLike<number>} word
 * @returns {number[]}
 */
export function fold(word) {
  /** @type {number[]} */
  const out = [];
  const at = (/** @type {number} */ k) => (k < word.length ? word[k] : 0);
  let i = 0;
  while (i < word.length) {
    const [b, next] = [word[i], at(i + 1)];
    if (b === T && next === S && at(i + 2) === C && at(i + 3) === H) {
      out.push(T, S); // "tsch" as in "ketschup": t, then "sch"
      i += 4;
      continue;
    }
    if ((b === S || b === C) && next === C && at(i + 2) === H) {
      out.push(b === S ? S : K); // "sch"; "cch" as in "zucchini"
      i += 3;
      continue;
    }
    const pair = pairs.get(b * 256 + next);
    if (pair !== undefined) {
      out.push(...pair);
      i += 2;
      continue;
    }
    if (b === C) out.push(next === E || next === I || next === Y ? S : K);
    else if (b === Z) out.push(S);
    else if (b === X) out.push(K, S);
    else if (b === Y) out.push(I);
    else if (b === W) out.push(V);
    else if (b !== H) out.push(b);
    i += 1;
  }
  return out.filter((byte, k) => k === 0 || out[k - 1] !== byte || byte >= 0x80);
}

/** Two letters that sound as one or two others: "ch" → s, "ph" → f, "qu" → kv, … */
const pairs = new Map([
  [[C, H], [S]], [[S, H], [S]], [[T, S], [S]], [[T, Z], [S]], [[P, H], [F]], [[T, H], [T]], [[G, H], [G]],
  [[G, N], [N]], [[Q, U], [K, V]], [[C, K], [K]], [[O, I], [O, A]],
].map(([[a, b], to]) => [a * 256 + b, to]));

/**
 * Whether a folded word can be a word said aloud: a vowel in it (SoundSpelling.isSpoken).
 * @param {number[]} word
 */
export function isSpoken(word) {
  return word.some((b) => b === A || b === E || b === I || b === O || b === U);
}

/**
 * Whether every folded query word sounds like a word of `key` (SoundSpelling.matches).
 * @param {number[][]} query
 * @param {Uint8Array} key
 */
export function matches(query, key) {
  const words = splitWords(key).map(fold);
  return query.every((word, n) => {
    const limit = allowance(characters(word));
    const last = n === query.length - 1;
    return words.some((w) => distance(Uint8Array.from(word), Uint8Array.from(w), limit, last) !== null);
  });
}
