// How a name matches the query's words past the strict tiers (BasketSearch's
// SearchIndex+Matching.swift): word beginnings, substrings, typed words and fuzzy subsequences.
import { ACROSS_SEPARATORS, CONSECUTIVE, LETTER, WORD_START, closeness } from "./closeness.js";
import { find, isSeparator } from "./search-bytes.js";
/**
 * @param {Uint8Array} key
 * @param {Uint8Array[]} words
 * @returns {number | null}
 */
export function wordPrefixPosition(key, words) {
  if (words.length === 0) return null;
  let first = Infinity;
  for (const word of words) {
    let position = null;
    let from = 0;
    while (from < key.length) {
      const at = find(word, key, from);
      if (at < 0) break;
      if (at === 0 || isSeparator(key[at - 1])) {
        position = at;
        break;
      }
      from = at + 1;
    }
    if (position === null) return null;
    first = Math.min(first, position);
  }
  return first;
}

/**
 * @param {Uint8Array} key
 * @param {Uint8Array} compact
 * @param {Uint8Array[]} words
 * @returns {{ position: number, score: number } | null}
 */
export function substringMatch(key, compact, words) {
  if (words.length === 0) return null;
  let first = Infinity;
  let score = 0;
  for (const word of words) {
    const at = find(word, key);
    if (at >= 0) {
      const start = at === 0 || isSeparator(key[at - 1]);
      const end = at + word.length;
      const whole = start && (end === key.length || isSeparator(key[end]));
      first = Math.min(first, at);
      score += closeness(word.length, 0, start, whole);
      continue;
    }
    if (word.length < 2) return null;
    const inCompact = find(word, compact);
    if (inCompact < 0) return null;
    first = Math.min(first, inCompact);
    score += closeness(word.length, 0, false, false) - ACROSS_SEPARATORS;
  }
  return { position: first, score };
}

/**
 * @param {Uint8Array} key
 * @param {Uint8Array[]} words
 */
export function wordPrefixScore(key, words) {
  let itemWords = 0;
  let inWord = false;
  for (const byte of key) {
    const separator = isSeparator(byte);
    if (!separator && !inWord) itemWords += 1;
    inWord = !separator;
  }
  const share = Math.trunc((64 * Math.min(words.length, itemWords)) / Math.max(itemWords, 1));
  let last = -1;
  let inOrder = true;
  for (const word of words) {
    const at = wordPrefixPosition(key, [word]);
    if (at === null || at <= last) {
      inOrder = false;
      break;
    }
    last = at;
  }
  return 2 * share + (inOrder ? 1 : 0);
}

/**
 * @param {Uint8Array} key
 * @param {Uint8Array} word
 * @returns {number | null}
 */
export function typedScore(key, word) {
  let best = null;
  let from = 0;
  while (from + word.length <= key.length) {
    const at = find(word, key, from);
    if (at < 0) break;
    const start = at === 0 || isSeparator(key[at - 1]);
    const end = at + word.length;
    const whole = start && (end === key.length || isSeparator(key[end]));
    best = Math.max(best ?? 0, closeness(word.length, 0, start, whole));
    if (whole) break;
    from = at + 1;
  }
  return best;
}

/**
 * @param {Uint8Array} key
 * @param {Uint8Array[]} words
 * @returns {{ score: number, first: number } | null}
 */
export function fuzzyScore(key, words) {
  let total = 0;
  let first = Infinity;
  for (const word of words) {
    if (word.length < 3) {
      const position = find(word, key);
      if (position < 0) return null;
      first = Math.min(first, position);
      total += closeness(word.length, 0, false, false);
      continue;
    }
    let i = 0;
    let score = 0;
    let previous = -2;
    let run = 0;
    let runAtStart = false;
    let weakRuns = 0;
    let itemWords = 0;
    let lastWordStart = -1;
    for (const byte of word) {
      while (i < key.length && key[i] !== byte) i += 1;
      if (i >= key.length) return null;
      first = Math.min(first, i);
      score += LETTER;
      const atStart = i === 0 || isSeparator(key[i - 1]);
      if (atStart) score += WORD_START;
      let wordStart = i;
      while (wordStart > 0 && !isSeparator(key[wordStart - 1])) wordStart -= 1;
      if (wordStart !== lastWordStart) {
        itemWords += 1;
        lastWordStart = wordStart;
      }
      if (i === previous + 1) {
        score += CONSECUTIVE;
        run += 1;
      } else {
        if (previous >= 0) score -= Math.min(i - previous - 1, 6);
        if (run > 0 && run <= 2 && !runAtStart) weakRuns += 1;
        run = 1;
        runAtStart = atStart;
      }
      previous = i;
      i += 1;
    }
    if (run <= 2 && !runAtStart) weakRuns += 1;
    if (itemWords > Math.trunc((word.length + 1) / 2) || (itemWords > 1 && weakRuns > (word.length >= 6 ? 2 : 1))) return null;
    total += score;
  }
  return { score: total, first };
}
