// Search over a list's items, ranked exactly as BasketSearch ranks them (the CLI's `basket
// search` and interactive mode): the exact key first, then prefixes, word beginnings, and after
// them substrings, typos and fuzzy matches together on one closeness scale. Keys are compared as
// UTF-8 bytes, as in Swift. This is the one-search path (every entry visited): a family's list
// is small, and the conformance vectors check every ranking against the Swift code.
import { normalize, clean } from "./key.js";
import { compareUTF8 } from "./state.js";

const utf8 = new TextEncoder();
const TIERS = ["exact", "prefix", "word-prefix", "substring", "typo", "fuzzy"];
const EXACT = 0;
const PREFIX = 1;
const WORD_PREFIX = 2;
const SUBSTRING = 3;
const TYPO = 4;
const FUZZY = 5;
const group = (tier) => Math.min(tier, SUBSTRING);

// Closeness (Closeness.swift).
const LETTER = 16;
const CONSECUTIVE = 6;
const WORD_START = 8;
const WHOLE_WORD = 8;
const PER_COST_UNIT = 6;
const ACROSS_SEPARATORS = 8;
const COVERAGE = 64;

function closeness(length, cost, start, whole) {
  return (
    LETTER * length + CONSECUTIVE * Math.max(0, length - 1) + (start ? WORD_START : 0) + (whole ? WHOLE_WORD : 0) - PER_COST_UNIT * cost
  );
}

function covering(matched, letters) {
  return letters <= 0 ? COVERAGE : Math.trunc((COVERAGE * Math.min(matched, letters)) / letters);
}

// Edit distance (EditDistance.swift).
const EDIT = 4;
const NEIGHBOUR = 3;
const TRANSPOSITION = 3;
const DOUBLED = 2;
const MAXIMUM_LENGTH = 48;

function allowance(length) {
  return length >= 7 ? 2 * EDIT : length === 6 ? 6 : length >= 4 ? EDIT : 0;
}

function characters(bytes) {
  let count = 0;
  for (const b of bytes) if ((b & 0xc0) !== 0x80) count += 1;
  return count;
}

function scalars(bytes) {
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

const neighbourTable = (() => {
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

function areNeighbours(a, b) {
  if (a < 0x61 || a > 0x7a || b < 0x61 || b > 0x7a) return false;
  return (neighbourTable[a - 0x61] & (1 << (b - 0x61))) !== 0;
}

function deleteCost(word, at) {
  return (at > 0 && word[at - 1] === word[at]) || (at + 1 < word.length && word[at + 1] === word[at]) ? DOUBLED : EDIT;
}

/** The weighted distance from typed word `a` to `b` (UTF-8 bytes), or null when above `limit`. */
function distance(aBytes, bBytes, limit, prefix = false) {
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

// Bytes.
function isSeparator(byte) {
  return byte < 0x80 && !(byte >= 0x30 && byte <= 0x39) && !(byte >= 0x61 && byte <= 0x7a) && !(byte >= 0x41 && byte <= 0x5a);
}

function find(needle, haystack, from = 0) {
  if (needle.length === 0) return from <= haystack.length ? from : -1;
  const last = haystack.length - needle.length;
  outer: for (let start = from; start <= last; start++) {
    for (let k = 0; k < needle.length; k++) if (haystack[start + k] !== needle[k]) continue outer;
    return start;
  }
  return -1;
}

function startsWith(bytes, prefix) {
  if (prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

function equalBytes(a, b) {
  return a.length === b.length && startsWith(a, b);
}

function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function splitWords(bytes) {
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

function mask(bytes) {
  let low = 0;
  let high = 0;
  for (const byte of bytes) {
    if (byte >= 0x61 && byte <= 0x7a) low |= 1 << (byte - 0x61);
    else if (byte >= 0x30 && byte <= 0x39) high |= 1 << (byte - 0x30);
  }
  return [low >>> 0, high];
}

function popcount(x) {
  let count = 0;
  while (x) {
    x &= x - 1;
    count += 1;
  }
  return count;
}

/** "Item 2" before "Item 10": every run of digits prefixed by its length. */
function naturalKey(folded) {
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

/**
 * How many characters (grapheme clusters) `text` has; without a combining mark or a character
 * beyond U+02FF, as many as its UTF-16 units (most names: no segmenter needed).
 * @param {string} text
 */
export function characterCount(text) {
  return /^[\u0000-\u02ff]*$/.test(text) ? text.length : graphemes(text).length;
}

let segmenter;
/** The characters (grapheme clusters) of a string. */
export function graphemes(text) {
  // Printable characters up to U+02FF (Latin without combining marks: most queries): each
  // character is one grapheme, and the segmenter is not needed.
  if (/^[\u0020-\u02ff]*$/.test(text)) return Array.from(text);
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

const whiteSpace = /^\p{White_Space}/u;
const isWhiteSpaceChar = (char) => whiteSpace.test(char);

/** A parsed query (BasketSearch's Query). */
export class Query {
  constructor(text) {
    const free = [];
    this.words = [];
    this.phrases = [];
    this.anchors = [];
    this.excluded = [];
    this.state = null;
    this.category = null;
    const chars = graphemes(text);
    let i = 0;
    while (i < chars.length) {
      const first = chars[i];
      if (isWhiteSpaceChar(first)) {
        i += 1;
        continue;
      }
      if (first === '"') {
        let end = i + 1;
        while (end < chars.length && chars[end] !== '"') end += 1;
        const phrase = chars.slice(i + 1, end).join("");
        const folded = utf8.encode(normalize(phrase));
        if (folded.length > 0) {
          this.phrases.push(folded);
          free.push(phrase);
        }
        i = end < chars.length ? end + 1 : end;
        continue;
      }
      let end = i;
      while (end < chars.length && !isWhiteSpaceChar(chars[end])) end += 1;
      const tokenChars = chars.slice(i, end);
      const token = tokenChars.join("");
      i = end;
      const lower = token.toLowerCase();
      if (lower === "is:checked" || lower === "is:done") {
        this.state = "checked";
        continue;
      }
      if (lower === "is:unchecked" || lower === "is:todo") {
        this.state = "unchecked";
        continue;
      }
      if (lower.startsWith("in:") && tokenChars.length > 3) {
        const folded = utf8.encode(normalize(tokenChars.slice(3).join("")));
        if (folded.length > 0) {
          this.category = folded;
          continue;
        }
      }
      if (tokenChars.length > 1 && (token.startsWith("-") || token.startsWith("!"))) {
        const folded = utf8.encode(normalize(tokenChars.slice(1).join("")));
        if (folded.length > 0) this.excluded.push(folded);
        continue;
      }
      if (tokenChars.length > 1 && token.startsWith("^")) {
        const folded = utf8.encode(normalize(tokenChars.slice(1).join("")));
        if (folded.length > 0) {
          this.anchors.push(folded);
          free.push(tokenChars.slice(1).join(""));
        }
        continue;
      }
      free.push(token);
      for (const word of normalize(token).split(" ")) if (word !== "") this.words.push(utf8.encode(word));
    }
    this.freeText = free.join(" ");
    this.keyText = normalize(this.freeText);
    this.key = utf8.encode(this.keyText);
  }

  get hasText() {
    return this.words.length > 0 || this.phrases.length > 0 || this.anchors.length > 0;
  }

  get hasFilters() {
    return this.state !== null || this.category !== null || this.phrases.length > 0 || this.anchors.length > 0 || this.excluded.length > 0;
  }
}

/**
 * Searches `items` ({ id, name, checked, category }) for `text`. `lastUsed` maps item ids to when
 * they were last added (Unix ms). Returns { query, offer, matches: [{ item, tier, exact, score }] }.
 */
export function search(text, items, lastUsed = new Map(), limit = Infinity) {
  return new Index(items, lastUsed).search(new Query(text), limit);
}

/** How many hits a short answer keeps (a screen shows ten and asks for one more). */
const SHORT_ANSWER_DEPTH = 16;

/** Items folded once for searching (BasketSearch's SearchIndex, without the narrowing lists). */
export class Index {
  constructor(items, lastUsed = new Map()) {
    /** @type {Map<string, any[]> | null} the short answers asked for (shortAnswer) */
    this.shortAnswers = null;
    /** @type {{ low: number, high: number, indices: number[] } | undefined} the last query's candidates */
    this.lastCandidates = undefined;
    this.entries = [];
    this.keys = new Set();
    /** @type {Map<string, number>} German spellings without umlauts → entry (SearchIndex.spellings) */
    this.spellings = new Map();
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
        if (!words.has(text)) words.set(text, { word, entries: [] });
        words.get(text).entries.push(index);
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
    this.vocabulary = new Map();
    this.vocabularyBySecond = new Map();
    for (const { word, entries } of words.values()) {
      const entry = { word, mask: mask(word), entries };
      if (!this.vocabulary.has(word[0])) this.vocabulary.set(word[0], []);
      this.vocabulary.get(word[0]).push(entry);
      if (word.length >= 4) {
        if (!this.vocabularyBySecond.has(word[1])) this.vocabularyBySecond.set(word[1], []);
        this.vocabularyBySecond.get(word[1]).push(entry);
      }
    }
  }

  /**
   * Takes the items again after a change that kept every name (a check, a quantity, a note, a
   * category): the same ids and names in the same order. Returns false (nothing changed) when
   * they are not: then a new index is needed.
   * @param {any[]} items
   */
  refresh(items) {
    if (items.length !== this.entries.length) return false;
    for (let i = 0; i < items.length; i++) {
      const old = this.entries[i].item;
      if (old.id !== items[i].id || old.name !== items[i].name) return false;
    }
    for (let i = 0; i < items.length; i++) this.entries[i].item = items[i];
    this.shortAnswers = null;
    return true;
  }

  /**
   * Takes one item again after a change that kept its name: `item` replaces `before` at entry
   * `i` (the index's entries are in the order of the items it was made of).
   * @param {number} i
   * @param {any} before
   * @param {any} item
   */
  replace(i, before, item) {
    const entry = this.entries[i];
    if (entry !== undefined && entry.item.id === before.id && entry.item.name === item.name) entry.item = item;
    // A check moves the item in every ranking (to buy before checked): answers kept are stale.
    this.shortAnswers = null;
  }

  /**
   * The ranked hits of a query of one or two letters and nothing else, kept once asked (the
   * ShortAnswers of SearchIndex in Swift, which makes them ahead; here they are made when first
   * asked, as work in the background measured slower keystrokes on a slow phone): the first
   * letters of every word typed are the searches that look at most of a long list, and the same
   * few come back all day. Null for any other query, or a limit above SHORT_ANSWER_DEPTH.
   * @param {Query} query
   * @param {number} limit
   */
  shortAnswer(query, limit) {
    if (limit > SHORT_ANSWER_DEPTH || query.hasFilters || query.words.length !== 1 || query.key.length > 2) return null;
    this.shortAnswers ??= new Map();
    let hits = this.shortAnswers.get(query.keyText);
    if (hits === undefined) {
      hits = this.rankedHits(query, SHORT_ANSWER_DEPTH);
      this.shortAnswers.set(query.keyText, hits);
    }
    return hits.slice(0, limit);
  }

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
    let hits = this.shortAnswer(query, limit) ?? this.rankedHits(query, limit);
    if (spelled !== undefined) {
      // The query is an item's German spelling without umlauts: that item, as exact.
      hits = hits.filter((hit) => hit.entry !== spelled);
      hits.splice(hits.length > 0 && hits[0].tier === EXACT ? 1 : 0, 0, { entry: spelled, tier: EXACT, score: 0, position: 0 });
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

  rankedHits(query, limit) {
    const words = query.words;
    const hits = [];
    const fuzzyCandidates = [];
    const perTier = new Array(TIERS.length).fill(0);
    let worst = SUBSTRING;
    const found = (entry, tier, position, score = 0) => {
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
   * @param {{ entry: number, tier: number, score: number, position: number }[]} hits
   * @param {number} limit
   */
  topHits(hits, limit) {
    const rank = (/** @type {any} */ a, /** @type {any} */ b) => this.rank(a, b);
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

  covering(index, words) {
    return covering(
      words.reduce((sum, w) => sum + w.length, 0),
      this.entries[index].compact.length,
    );
  }

  typoMatches(queryWords, mayWiden) {
    const words = queryWords.flatMap((w) => splitWords(w));
    if (words.length === 0 || words.length >= 255) return [];
    const found = this.typoPass(words, false);
    return found.length === 0 && mayWiden ? this.typoPass(words, true) : found;
  }

  typoPass(words, widened) {
    const budget = words.reduce((sum, w) => sum + allowance(characters(w)), 0);
    const slipped = words.map((word, w) => {
      const length = characters(word);
      const allowed = widened && words.length > 1 && length >= 5 ? Math.max(2 * EDIT, allowance(length)) : allowance(length);
      return this.slips(word, allowed, w === words.length - 1, widened);
    });
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

  slips(word, allowed, unfinished, alwaysFirstLetter) {
    const best = new Map();
    const touched = [];
    const none = { score: -1, covered: 0, cost: 0 };
    const result = { touched, match: (entry) => best.get(entry) ?? none };
    if (allowed <= 0) return result;
    let heldAsTyped = false;
    const [lowMask, highMask] = mask(word);
    const consider = (candidates, sameFirst) => {
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

function wordPrefixPosition(key, words) {
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

function substringMatch(key, compact, words) {
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

function wordPrefixScore(key, words) {
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

function typedScore(key, word) {
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

function fuzzyScore(key, words) {
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

/** Sorts items as the CLI lists them: unchecked first, then by name without case, then by id. */
export function sortForDisplay(items) {
  // Each name's UTF-8 bytes once (not two encodings per comparison): 2,000 names sort in a frame.
  const keyed = items.map((item) => ({ item, name: utf8Of(item.name.toLowerCase()) }));
  keyed.sort((a, b) => {
    if (a.item.deleted !== b.item.deleted) return a.item.deleted ? 1 : -1;
    if (a.item.checked !== b.item.checked) return a.item.checked ? 1 : -1;
    const byName = compareBytes(a.name, b.name);
    if (byName !== 0) return byName;
    return a.item.id < b.item.id ? -1 : 1;
  });
  return keyed.map((k) => k.item);
}

/** @type {Map<string, Uint8Array>} the UTF-8 bytes of names sorted before (bounded) */
const utf8Cache = new Map();

/** @param {string} text */
function utf8Of(text) {
  let bytes = utf8Cache.get(text);
  if (bytes === undefined) {
    bytes = utf8.encode(text);
    if (utf8Cache.size >= 20000) utf8Cache.clear();
    utf8Cache.set(text, bytes);
  }
  return bytes;
}

/** @type {Map<string, string>} category → its key (few categories, many items) */
const categoryKeys = new Map();

/** @param {string} category */
function categoryKey(category) {
  let key = categoryKeys.get(category);
  if (key === undefined) {
    key = normalize(category);
    if (categoryKeys.size >= 5000) categoryKeys.clear();
    categoryKeys.set(category, key);
  }
  return key;
}

/** Groups items to buy by category in the aisle order, then other categories alphabetically,
 * then those without one (the CLI's `basket ls`): [{ category, items }]. */
export function groupByAisle(items, aisles, sorted = false) {
  const byKey = new Map();
  const uncategorised = [];
  // `sorted`: the items are in sortForDisplay's order already (a screen keeps them so).
  for (const item of sorted ? items : sortForDisplay(items)) {
    const key = item.category === null ? "" : categoryKey(item.category);
    if (key === "") {
      uncategorised.push(item);
      continue;
    }
    if (!byKey.has(key)) byKey.set(key, { category: item.category, items: [] });
    byKey.get(key).items.push(item);
  }
  const groups = [];
  for (const aisle of aisles) {
    const key = categoryKey(aisle);
    if (byKey.has(key)) {
      groups.push({ category: aisle, items: byKey.get(key).items });
      byKey.delete(key);
    }
  }
  const rest = [...byKey.entries()].sort((a, b) => compareUTF8(a[0], b[0]));
  for (const [, group] of rest) groups.push(group);
  if (uncategorised.length > 0) groups.push({ category: null, items: uncategorised });
  return groups;
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
  const table = { ä: "ae", ö: "oe", ü: "ue", Ä: "Ae", Ö: "Oe", Ü: "Ue", ß: "ss" };
  const spelled = composed.replace(/[äöüÄÖÜß]/gu, (c) => table[c]);
  const key = normalize(spelled);
  return key === normalize(name) ? null : key;
}

/**
 * What Enter does with what was typed (SearchResult.enter in Swift, pinned by the conformance
 * vectors): { existing: item } when an item has the query's key, { add: offer } for a new item
 * with what was typed, or null. Never a prefix, typo, fuzzy or history row.
 * @param {{ offer: string | null, matches: { item: any, exact: boolean }[] }} result
 * @returns {{ existing: any } | { add: string } | null}
 */
export function enterAction(result) {
  if (result.matches.length > 0 && result.matches[0].exact) return { existing: result.matches[0].item };
  if (result.offer !== null) return { add: result.offer };
  return null;
}

/**
 * When Enter adds something new, the closest item on the list ("did you mean …?"); else null.
 * @param {{ offer: string | null, matches: { item: any, exact: boolean }[] }} result
 */
export function didYouMean(result) {
  const enter = enterAction(result);
  return enter !== null && "add" in enter && result.matches.length > 0 ? result.matches[0].item : null;
}
