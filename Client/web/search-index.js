// Items folded once for searching (BasketSearch's SearchIndex.swift, SearchIndex+Ranking.swift
// and SearchIndex+Matching.swift): the strict tiers (exact, prefix, word-prefix), then
// substrings, typos and fuzzy matches on one closeness scale, ranked exactly as Swift ranks them.
// This is the one-search path (every entry visited): a family's list is small, and the
// conformance vectors check every ranking against the Swift code.
import { WHOLE_WORD, closeness, covering } from "./closeness.js";
import { EDIT, NEIGHBOUR, allowance, characters, distance } from "./edit-distance.js";
import { clean, normalize } from "./key.js";
import { Query, characterCount } from "./query.js";
import { compareBytes, equalBytes, find, isSeparator, mask, naturalKey, popcount, splitWords, startsWith, utf8 } from "./search-bytes.js";
import { fold, isSpoken, matches as sounds } from "./sound-spelling.js";
import { fuzzyScore, substringMatch, typedScore, wordPrefixPosition, wordPrefixScore } from "./search-matching.js";
export const TIERS = ["exact", "prefix", "word-prefix", "substring", "typo", "fuzzy"];
export const EXACT = 0;
export const PREFIX = 1;
export const WORD_PREFIX = 2;
export const SUBSTRING = 3;
export const TYPO = 4;
export const FUZZY = 5;
/** The tiers ranked together: exact, prefix and word-prefix each alone, the rest as one. */
export const group = (/** @type {number} */ tier) => Math.min(tier, SUBSTRING);

/**
 * What the search reads of an item (the merged state's Item has more).
 * @typedef {{ id: string, name: string, checked: boolean, category?: string | null }} SearchItem
 */
/**
 * An item folded once: its key, the key without separators, the letters it has, its length in
 * characters, its natural sort key and when it was last added.
 * @typedef {{ item: SearchItem, key: Uint8Array, compact: Uint8Array, mask: [number, number], nameLength: number, natural: number[], lastUsed: number }} Entry
 */
/**
 * A word of the index's names and the entries that have it.
 * @typedef {{ word: Uint8Array, mask: [number, number], entries: number[] }} VocabularyWord
 */
/**
 * An entry found by a query, in a tier, with its score and where it matched.
 * @typedef {{ entry: number, tier: number, score: number, position: number }} Hit
 */
/**
 * How a word that slipped matches an entry.
 * @typedef {{ score: number, covered: number, cost: number }} Slip
 */
/**
 * A search's answer: the query as typed, what Enter would add (null when an item has the key or
 * it is not a valid name), and the matches in rank order.
 * @typedef {{ query: string, offer: string | null, matches: { item: SearchItem, tier: string, exact: boolean, score: number }[] }} SearchResult
 */

/** How many hits a short answer keeps (a screen shows ten and asks for one more). */
export const SHORT_ANSWER_DEPTH = 16;

/** Items folded once for searching (BasketSearch's SearchIndex, without the narrowing lists). */
export class Index {
  /**
   * @param {Iterable<SearchItem>} items
   * @param {Map<string, number>} [lastUsed] when each item was last added (Unix ms), by id
   */
  constructor(items, lastUsed = new Map()) {
    /** @type {Map<string, Hit[]> | null} the short queries' hits asked for (shortQueryHitsFor) */
    this.shortQueryHits = null;
    /** @type {{ low: number, high: number, indices: number[] } | undefined} the last query's candidates */
    this.lastCandidates = undefined;
    /** @type {Entry[]} */
    this.entries = [];
    /** @type {Set<string>} */
    this.keys = new Set();
    /** @type {Map<string, number>} German spellings without umlauts → entry (SearchIndex.spellings) */
    this.spellings = new Map();
    /** @type {Map<string, { word: Uint8Array, entries: number[] }>} */
    const words = new Map();
    for (const item of items) {
      const keyText = normalize(item.name);
      const key = utf8.encode(keyText);
      this.keys.add(keyText);
      const spelling = germanSpelling(item.name);
      if (spelling !== null && !this.spellings.has(spelling)) this.spellings.set(spelling, this.entries.length);
      const compact = key.filter((b) => !isSeparator(b));
      const index = this.entries.length;
      for (const word of splitWords(key)) {
        const text = word.join(",");
        let known = words.get(text);
        if (known === undefined) words.set(text, (known = { word, entries: [] }));
        known.entries.push(index);
      }
      this.entries.push({
        item,
        key,
        compact,
        mask: mask(key),
        nameLength: characterCount(item.name),
        natural: naturalKey(key),
        lastUsed: lastUsed.get(item.id) ?? 0,
      });
    }
    /** @type {Map<number, VocabularyWord[]>} the words by their first byte */
    this.vocabulary = new Map();
    /** @type {Map<number, VocabularyWord[]>} the words of 4 bytes or more by their second */
    this.vocabularyBySecond = new Map();
    /** @type {(table: Map<number, VocabularyWord[]>, byte: number, entry: VocabularyWord) => void} */
    const file = (table, byte, entry) => {
      const words = table.get(byte);
      if (words === undefined) table.set(byte, [entry]);
      else words.push(entry);
    };
    for (const { word, entries } of words.values()) {
      const entry = { word, mask: mask(word), entries };
      file(this.vocabulary, word[0], entry);
      if (word.length >= 4) file(this.vocabularyBySecond, word[1], entry);
    }
  }

  /**
   * Takes the items again after a change that kept every name (a check, a quantity, a note, a
   * category): the same ids and names in the same order. Returns false (nothing changed) when
   * they are not: then a new index is needed.
   * @param {SearchItem[]} items
   */
  refresh(items) {
    if (items.length !== this.entries.length) return false;
    for (let i = 0; i < items.length; i++) {
      const old = this.entries[i].item;
      if (old.id !== items[i].id || old.name !== items[i].name) return false;
    }
    for (let i = 0; i < items.length; i++) this.entries[i].item = items[i];
    this.shortQueryHits = null;
    return true;
  }

  /**
   * Takes one item again after a change that kept its name: `item` replaces `before` at entry
   * `i` (the index's entries are in the order of the items it was made of).
   * @param {number} i
   * @param {SearchItem} before
   * @param {SearchItem} item
   */
  replace(i, before, item) {
    const entry = this.entries[i];
    if (entry !== undefined && entry.item.id === before.id && entry.item.name === item.name) entry.item = item;
    // A check moves the item in every ranking (to buy before checked): answers kept are stale.
    this.shortQueryHits = null;
  }

  /**
   * The ranked hits of a query of one or two letters and nothing else, kept once asked (the
   * ShortQueryHits of SearchIndex in Swift, which makes them ahead; here they are made when first
   * asked, as work in the background measured slower keystrokes on a slow phone): the first
   * letters of every word typed are the searches that look at most of a long list, and the same
   * few come back all day. Null for any other query, or a limit above SHORT_ANSWER_DEPTH.
   * @param {Query} query
   * @param {number} limit
   */
  shortQueryHitsFor(query, limit) {
    if (limit > SHORT_ANSWER_DEPTH || query.hasFilters || query.words.length !== 1 || query.key.length > 2) return null;
    this.shortQueryHits ??= new Map();
    let hits = this.shortQueryHits.get(query.keyText);
    if (hits === undefined) {
      hits = this.rankedHits(query, SHORT_ANSWER_DEPTH);
      this.shortQueryHits.set(query.keyText, hits);
    }
    return hits.slice(0, limit);
  }

  /**
   * @param {Query} query
   * @param {number} [limit]
   * @returns {SearchResult}
   */
  search(query, limit = Infinity) {
    let offer = null;
    const spelled = query.hasFilters ? undefined : this.spellings.get(query.keyText);
    if (query.freeText !== "" && !this.keys.has(query.keyText) && spelled === undefined) {
      try {
        offer = clean(query.freeText);
      } catch {
        offer = null;
      }
    }
    let hits = this.shortQueryHitsFor(query, limit) ?? this.rankedHits(query, limit);
    if (spelled !== undefined) {
      // The query is an item's German spelling without umlauts: that item, as exact.
      hits = hits.filter((hit) => hit.entry !== spelled);
      hits.splice(hits.length > 0 && hits[0].tier === EXACT ? 1 : 0, 0, { entry: spelled, tier: EXACT, score: 0, position: 0 });
    } else {
      hits = this.withSoundMatches(this.withSpelledPrefixes(hits, query), query);
    }
    return {
      query: query.freeText,
      offer,
      matches: hits.slice(0, limit).map((hit) => ({
        item: this.entries[hit.entry].item,
        tier: TIERS[hit.tier],
        exact: hit.tier === EXACT,
        score: hit.score,
      })),
    };
  }

  /**
   * `hits` with the items whose words sound like the query's, as typo hits before the fuzzy ones,
   * when nothing matched closer than fuzzy: "zukini" finds Zucchini (SearchIndex.withSoundMatches).
   * @param {Hit[]} hits
   * @param {Query} query
   * @returns {Hit[]}
   */
  withSoundMatches(hits, query) {
    const letters = query.words.reduce((n, w) => n + w.length, 0);
    if (query.hasFilters || query.words.length === 0 || letters < 4 || hits.some((h) => h.tier < FUZZY)) return hits;
    const words = query.words.map((w) => fold(w));
    if (!words.every(isSpoken)) return hits;
    /** @type {Hit[]} */
    const found = [];
    this.entries.forEach((entry, i) => {
      if (sounds(words, entry.key)) found.push({ entry: i, tier: TYPO, score: 0, position: 0 });
    });
    if (found.length === 0) return hits;
    const kept = new Set(found.map((h) => h.entry));
    return [...found, ...hits.filter((h) => !kept.has(h.entry))];
  }

  /**
   * `hits` with the items whose German spelling without umlauts begins with what is typed ("kaes"
   * for Käse) as prefix hits, after the exact and prefix hits (SearchIndex.withSpelledPrefixes).
   * @param {Hit[]} hits
   * @param {Query} query
   * @returns {Hit[]}
   */
  withSpelledPrefixes(hits, query) {
    const key = query.keyText;
    if (query.hasFilters || this.spellings.size === 0 || !/ae|oe|ue|ss/.test(key)) return hits;
    let out = hits;
    for (const [spelling, entry] of this.spellings) {
      if (spelling.length <= key.length || !spelling.startsWith(key)) continue;
      if (out.some((hit) => hit.entry === entry && hit.tier <= PREFIX)) continue;
      out = out.filter((hit) => hit.entry !== entry);
      const at = out.findIndex((hit) => hit.tier > PREFIX);
      out.splice(at < 0 ? out.length : at, 0, { entry, tier: PREFIX, score: 0, position: 0 });
    }
    return out;
  }

  /**
   * @param {Entry} entry
   * @param {Query} query
   */
  passes(entry, query) {
    const item = entry.item;
    if (query.state === "checked" && !item.checked) return false;
    if (query.state === "unchecked" && item.checked) return false;
    if (query.category !== null) {
      if (typeof item.category !== "string" || !startsWith(utf8.encode(normalize(item.category)), query.category)) return false;
    }
    for (const phrase of query.phrases) if (find(phrase, entry.key) < 0) return false;
    for (const anchor of query.anchors) if (!startsWith(entry.key, anchor)) return false;
    for (const word of query.excluded) if (find(word, entry.key) >= 0) return false;
    return true;
  }

  /**
   * The entries whose keys have every letter and digit of the query (`low` and `high`, as mask()
   * gives them), in the order of the entries. Typing on keeps every letter typed before, so the
   * entries kept for the last query are where the next one's are (a few dozen of 2,000 after the
   * third letter): only they are looked at again. Any other query looks at every entry.
   * @param {number} low
   * @param {number} high
   * @returns {number[]}
   */
  candidates(low, high) {
    const last = this.lastCandidates;
    const narrower = last !== undefined && (low & last.low) === last.low && (high & last.high) === last.high;
    if (narrower && low === last.low && high === last.high) return last.indices;
    /** @type {number[]} */
    const indices = [];
    const has = (/** @type {number} */ i) => {
      const [entryLow, entryHigh] = this.entries[i].mask;
      return (entryLow & low) === low && (entryHigh & high) === high;
    };
    if (narrower) {
      for (const i of last.indices) if (has(i)) indices.push(i);
    } else {
      for (let i = 0; i < this.entries.length; i++) if (has(i)) indices.push(i);
    }
    this.lastCandidates = { low, high, indices };
    return indices;
  }

  /**
   * The hits of the tiers a candidate is tried in one by one (exact, prefix, word-prefix,
   * substring), each entry in the first it reaches, and the candidates none took (the fuzzy
   * tier's, once the typos are known). A tier stops being tried once `limit` hits rank above it.
   * @param {Query} query
   * @param {number} limit
   * @returns {{ hits: Hit[], fuzzyCandidates: number[] }}
   */
  strictHits(query, limit) {
    const words = query.words;
    /** @type {Hit[]} */
    const hits = [];
    /** @type {number[]} */
    const fuzzyCandidates = [];
    const perTier = new Array(TIERS.length).fill(0);
    let worst = SUBSTRING;
    const found = (/** @type {number} */ entry, /** @type {number} */ tier, /** @type {number} */ position, score = 0) => {
      hits.push({ entry, tier, score, position });
      perTier[tier] += 1;
      if (tier < worst) {
        let total = 0;
        for (let t = 0; t <= tier; t++) total += perTier[t];
        if (total >= limit) worst = tier;
      }
    };
    const [testLow, testHigh] = query.hasText ? mask(words.flatMap((w) => Array.from(w))) : [0, 0];
    const queryKey = query.key;
    for (const index of this.candidates(testLow, testHigh)) {
      const entry = this.entries[index];
      if (query.hasFilters && !this.passes(entry, query)) continue;
      if (!query.hasText) {
        found(index, SUBSTRING, 0);
        continue;
      }
      const key = entry.key;
      if (equalBytes(key, queryKey)) {
        found(index, EXACT, 0);
        continue;
      }
      if (worst === EXACT) continue;
      if (queryKey.length > 0 && startsWith(key, queryKey)) {
        found(index, PREFIX, 0);
        continue;
      }
      if (worst === PREFIX) continue;
      const position = wordPrefixPosition(key, words);
      if (position !== null) {
        found(index, WORD_PREFIX, position);
        continue;
      }
      if (worst === WORD_PREFIX) continue;
      const substring = substringMatch(key, entry.compact, words);
      if (substring !== null) {
        found(index, SUBSTRING, substring.position, substring.score);
        continue;
      }
      fuzzyCandidates.push(index);
    }
    return { hits, fuzzyCandidates };
  }

  /**
   * @param {Query} query
   * @param {number} limit
   * @returns {Hit[]}
   */
  rankedHits(query, limit) {
    const words = query.words;
    const { hits, fuzzyCandidates } = this.strictHits(query, limit);
    let strict = 0;
    let beginnings = 0;
    for (const hit of hits) {
      if (group(hit.tier) < SUBSTRING) {
        strict += 1;
        if (hit.tier === WORD_PREFIX) beginnings += 1;
      }
    }
    const needCloseness = strict < limit;
    if (query.hasText) {
      for (const hit of hits) {
        if (hit.tier === WORD_PREFIX && strict - beginnings < limit) hit.score = wordPrefixScore(this.entries[hit.entry].key, words);
        else if (hit.tier === SUBSTRING && needCloseness) hit.score += this.covering(hit.entry, words);
      }
    }
    if (needCloseness && words.some((w) => characters(w) >= 4)) {
      const already = new Set(hits.map((h) => h.entry));
      for (const { entry, score } of this.typoMatches(words, hits.length === 0)) {
        if (!already.has(entry) && this.passes(this.entries[entry], query)) hits.push({ entry, tier: TYPO, score, position: 0 });
      }
    }
    const typoEntries = new Set(hits.filter((h) => h.tier === TYPO).map((h) => h.entry));
    if (hits.length < limit && words.some((w) => w.length >= 3)) {
      for (const index of fuzzyCandidates) {
        if (typoEntries.has(index)) continue;
        const scored = fuzzyScore(this.entries[index].key, words);
        if (scored !== null) hits.push({ entry: index, tier: FUZZY, score: scored.score + this.covering(index, words), position: scored.first });
      }
    }
    if (!query.hasText) {
      return hits
        .sort((p, q) => {
          const x = this.entries[p.entry];
          const y = this.entries[q.entry];
          if (x.item.checked !== y.item.checked) return x.item.checked ? 1 : -1;
          const natural = compareBytes(x.natural, y.natural);
          if (natural !== 0) return natural;
          return x.item.id < y.item.id ? -1 : x.item.id > y.item.id ? 1 : 0;
        })
        .slice(0, limit);
    }
    return this.topHits(hits, limit);
  }

  /**
   * The best `limit` hits in rank order (SearchIndex.topHits): a list of 2,000 items gives a
   * first letter hundreds of hits, and a screen shows a dozen, so only the dozen are kept sorted.
   * @param {Hit[]} hits
   * @param {number} limit
   */
  topHits(hits, limit) {
    const rank = (/** @type {Hit} */ a, /** @type {Hit} */ b) => this.rank(a, b);
    if (hits.length <= limit || limit >= 256) return hits.sort(rank).slice(0, limit);
    const best = hits.slice(0, limit).sort(rank);
    for (let i = limit; i < hits.length; i++) {
      const hit = hits[i];
      if (rank(hit, best[limit - 1]) >= 0) continue;
      let at = limit - 1;
      while (at > 0 && rank(hit, best[at - 1]) < 0) at--;
      best.splice(at, 0, hit);
      best.pop();
    }
    return best;
  }

  /**
   * @param {Hit} a
   * @param {Hit} b
   */
  rank(a, b) {
    if (group(a.tier) !== group(b.tier)) return group(a.tier) - group(b.tier);
    if (a.score !== b.score) return b.score - a.score;
    const p = group(a.tier) === SUBSTRING ? 0 : a.position;
    const q = group(b.tier) === SUBSTRING ? 0 : b.position;
    if (p !== q) return p - q;
    const x = this.entries[a.entry];
    const y = this.entries[b.entry];
    if (x.nameLength !== y.nameLength) return x.nameLength - y.nameLength;
    if (x.item.checked !== y.item.checked) return x.item.checked ? 1 : -1;
    if (x.lastUsed !== y.lastUsed) return y.lastUsed - x.lastUsed;
    const natural = compareBytes(x.natural, y.natural);
    if (natural !== 0) return natural;
    return x.item.id < y.item.id ? -1 : x.item.id > y.item.id ? 1 : 0;
  }

  /**
   * @param {number} index
   * @param {Uint8Array[]} words
   */
  covering(index, words) {
    return covering(
      words.reduce((sum, w) => sum + w.length, 0),
      this.entries[index].compact.length,
    );
  }

  /**
   * @param {Uint8Array[]} queryWords
   * @param {boolean} mayWiden
   */
  typoMatches(queryWords, mayWiden) {
    const words = queryWords.flatMap((w) => splitWords(w));
    if (words.length === 0 || words.length >= 255) return [];
    const found = this.typoPass(words, false);
    return found.length === 0 && mayWiden ? this.typoPass(words, true) : found;
  }

  /**
   * @param {Uint8Array[]} words
   * @param {boolean} widened
   */
  typoPass(words, widened) {
    const budget = words.reduce((sum, w) => sum + allowance(characters(w)), 0);
    const slipped = words.map((word, w) => {
      const length = characters(word);
      const allowed = widened && words.length > 1 && length >= 5 ? Math.max(2 * EDIT, allowance(length)) : allowance(length);
      return this.slips(word, allowed, w === words.length - 1, widened);
    });
    /** @type {{ entry: number, score: number }[]} */
    const result = [];
    slipped.forEach((slips, s) => {
      next: for (const entry of slips.touched) {
        if (words.length > 1) {
          for (let earlier = 0; earlier < s; earlier++) if (slipped[earlier].match(entry).score >= 0) continue next;
        }
        const total = { score: 0, covered: 0, cost: 0 };
        for (let w = 0; w < words.length; w++) {
          const slip = slipped[w].match(entry);
          const asTyped = w === s ? null : typedScore(this.entries[entry].key, words[w]);
          /** @type {Slip} */
          let chosen;
          if (asTyped !== null && asTyped >= slip.score) chosen = { score: asTyped, covered: words[w].length, cost: 0 };
          else if (slip.score >= 0) chosen = slip;
          else continue next;
          total.score += chosen.score;
          total.covered += chosen.covered;
          total.cost += chosen.cost;
        }
        if (!(total.cost > 0 && total.cost <= budget)) continue;
        result.push({ entry, score: total.score + covering(total.covered, this.entries[entry].compact.length) });
      }
    });
    return result;
  }

  /**
   * @param {Uint8Array} word
   * @param {number} allowed
   * @param {boolean} unfinished
   * @param {boolean} alwaysFirstLetter
   */
  slips(word, allowed, unfinished, alwaysFirstLetter) {
    /** @type {Map<number, Slip>} */
    const best = new Map();
    /** @type {number[]} */
    const touched = [];
    /** @type {Slip} */
    const none = { score: -1, covered: 0, cost: 0 };
    const result = { touched, match: (/** @type {number} */ entry) => best.get(entry) ?? none };
    if (allowed <= 0) return result;
    let heldAsTyped = false;
    const [lowMask, highMask] = mask(word);
    const consider = (/** @type {VocabularyWord[] | undefined} */ candidates, /** @type {boolean} */ sameFirst) => {
      for (const vocabularyWord of candidates ?? []) {
        const candidate = vocabularyWord.word;
        if (!sameFirst && candidate[0] === word[0]) continue;
        if (sameFirst && (startsWith(candidate, word) || find(word, candidate) >= 0)) {
          heldAsTyped = true;
          continue;
        }
        const [cLow, cHigh] = vocabularyWord.mask;
        const missing = Math.max(
          popcount(lowMask & ~cLow) + popcount(highMask & ~cHigh),
          unfinished ? 0 : popcount(cLow & ~lowMask) + popcount(cHigh & ~highMask),
        );
        if (missing * NEIGHBOUR > allowed) continue;
        /** @type {Slip | null} */
        let match = null;
        const edits = distance(word, candidate, allowed);
        if (edits !== null) {
          match = { score: closeness(word.length, edits, true, true), covered: candidate.length, cost: edits };
        } else if (unfinished && candidate.length > word.length) {
          const prefixEdits = distance(word, candidate, allowed, true);
          if (prefixEdits !== null) {
            match = { score: closeness(word.length, prefixEdits, true, false) - WHOLE_WORD, covered: word.length, cost: prefixEdits };
          }
        }
        if (match === null) continue;
        for (const entry of vocabularyWord.entries) {
          const current = best.get(entry) ?? none;
          if (match.score > current.score) {
            if (current.score < 0) touched.push(entry);
            best.set(entry, match);
          }
        }
      }
    };
    consider(this.vocabulary.get(word[0]), true);
    if ((alwaysFirstLetter || !heldAsTyped) && word.length >= 4) {
      consider(this.vocabulary.get(word[1]), false);
      consider(this.vocabularyBySecond.get(word[1]), false);
      if (word[0] !== word[1]) consider(this.vocabularyBySecond.get(word[0]), false);
    }
    return result;
  }
}

/**
 * The key of `name` written the German way without umlauts (ä → ae, ö → oe, ü → ue, ß → ss) when
 * that differs from its key, else null (SearchIndex.germanSpelling in Swift).
 * @param {string} name
 * @returns {string | null}
 */
export function germanSpelling(name) {
  if (!/[äöüÄÖÜß\u0308]/u.test(name)) return null;
  const composed = name.normalize("NFC");
  if (!/[äöüÄÖÜß]/u.test(composed)) return null;
  /** @type {Record<string, string>} */
  const table = { ä: "ae", ö: "oe", ü: "ue", Ä: "Ae", Ö: "Oe", Ü: "Ue", ß: "ss" };
  const spelled = composed.replace(/[äöüÄÖÜß]/gu, (c) => table[c]);
  const key = normalize(spelled);
  return key === normalize(name) ? null : key;
}
