// The grocery catalogue: what families buy in nine languages, each grocery with its aisle and, where
// one emoji says it, its icon (BasketSearch's Catalogue). Its files (catalogue-LANG.json, made by Scripts/make-catalogue.py) are fetched when
// a language is first needed, not with the page: a phone loads only its own language's.
import { AISLE_KEYS, AISLE_NAMES } from "./aisles.js";
import { normalize } from "./key.js";
import { Query } from "./query.js";
import { Index } from "./search-index.js";
import { isCloseEnough } from "./offers.js";

/** The languages the catalogue has. */
export const LANGUAGES = ["de", "en", "es", "fr", "it", "ja", "nl", "pl", "pt"];

/**
 * The catalogue's language for the browser's languages ("de-AT" → "de"); English when it has none.
 * @param {readonly string[]} languages
 */
export function languageOf(languages) {
  for (const tag of languages) {
    const code = tag.split("-")[0].toLowerCase();
    if (LANGUAGES.includes(code)) return code;
  }
  return "en";
}

/**
 * What the catalogue knows of a grocery: its aisle, named in the language asked for, and its icon
 * (Catalogue.Grocery).
 * @typedef {{ aisle: string, icon: string | null }} Grocery
 */

/**
 * One entry of a language's catalogue: its aisle (an index into the aisles, the same in every
 * language) and its icon (Catalogue.Entry).
 * @typedef {{ aisle: number, icon: string | null }} Entry
 */

/**
 * One language's catalogue: its aisles in a shop's order, the names it suggests, and every name and
 * form it knows by key (Catalogue.Language).
 * @typedef {{ code: string, aisles: string[], names: string[], entries: Map<string, Entry>, index: Index }} Catalogue
 */

/**
 * A catalogue from its file's JSON ({ language, aisles, items: [[name, aisle, icon]], forms: [[name,
 * aisle, icon]] }), checked: names are strings, aisles in range; a second name with the same key is
 * left out (Catalogue.parse).
 * @param {any} json
 * @returns {Catalogue}
 */
export function fromJSON(json) {
  if (!json || !Array.isArray(json.aisles) || !Array.isArray(json.items) || !Array.isArray(json.forms)) {
    throw new Error("a catalogue file is malformed");
  }
  const aisles = json.aisles.filter((/** @type {unknown} */ a) => typeof a === "string");
  /** @type {string[]} */
  const names = [];
  /** @type {Map<string, Entry>} */
  const entries = new Map();
  for (const [section, suggested] of [[json.items, true], [json.forms, false]]) {
    for (const entry of section) {
      if (!Array.isArray(entry) || typeof entry[0] !== "string" || !Number.isInteger(entry[1]) || typeof entry[2] !== "string") continue;
      if (entry[1] < 0 || entry[1] >= aisles.length) continue;
      const key = normalize(entry[0]);
      if (key === "" || entries.has(key)) continue;
      entries.set(key, { aisle: entry[1], icon: entry[2] === "" ? null : entry[2] });
      if (suggested) names.push(entry[0]);
    }
  }
  const items = names.map((name) => ({ id: normalize(name), name, checked: false, category: null }));
  return { code: String(json.language ?? ""), aisles, names, entries, index: new Index(items) };
}

/**
 * The grocery `name` is, looked up in `catalogues` (a list's language first, English among them),
 * by the rule of Catalogue.grocery(_:in:): the name or a form of it; a word that says frozen; fewer
 * of its words, the ones a phrase is about first; the end of a compound word. The aisle is named in
 * the first catalogue's language, or in `namedIn` (the list's, whose catalogue may not be loaded
 * yet: every language has the same aisles in the same order). Null when none knows it.
 * @param {readonly Catalogue[]} catalogues
 * @param {string} name
 * @param {string | null} [namedIn]
 * @returns {Grocery | null}
 */
export function grocery(catalogues, name, namedIn = null) {
  const consulted = [...new Map(catalogues.map((c) => [c.code, c])).values()];
  const first = consulted[0];
  if (first === undefined) return null;
  const aisles = namedIn !== null && AISLE_NAMES[namedIn] !== undefined ? AISLE_NAMES[namedIn] : first.aisles;
  const entry = find(normalize(name), consulted);
  if (entry === null || entry.aisle >= aisles.length) return null;
  return { aisle: aisles[entry.aisle], icon: entry.icon };
}

/**
 * The aisle a typed aisle means ("milk @dairy"): one the list has already, with the same key
 * (`known`); else a catalogue aisle whose key, name in any language or first words it is, named in
 * `language`; else the aisle as typed (Catalogue.aisle(named:language:known:)).
 * @param {string} typed
 * @param {string} language
 * @param {readonly string[]} known
 * @returns {string}
 */
export function aisleNamed(typed, language, known) {
  const key = normalize(typed);
  if (key === "") return typed;
  const own = known.find((name) => normalize(name) === key);
  if (own !== undefined) return own;
  const code = LANGUAGES.includes(language) ? language : "en";
  const aisles = AISLE_NAMES[code] ?? [];
  const index = AISLE_KEYS.indexOf(key);
  if (index >= 0 && index < aisles.length) return aisles[index];
  for (const other of [...new Set([code, ...LANGUAGES])]) {
    for (const [i, name] of (AISLE_NAMES[other] ?? []).entries()) {
      const aisle = normalize(name);
      if (i < aisles.length && (aisle === key || aisle.startsWith(key + " "))) return aisles[i];
    }
  }
  return typed;
}

/**
 * The language a list's aisles are named in when the list does not say: the language whose aisle
 * names most of `categories` are, null when none is; ties go to the first in LANGUAGES
 * (Catalogue.language(ofAisles:)).
 * @param {readonly string[]} categories
 * @returns {string | null}
 */
export function languageOfAisles(categories) {
  const keys = new Set(categories.map(normalize));
  /** @type {{ code: string, count: number } | null} */
  let best = null;
  for (const code of LANGUAGES) {
    const count = (AISLE_NAMES[code] ?? []).filter((name) => keys.has(normalize(name))).length;
    if (count > 0 && count > (best?.count ?? 0)) best = { code, count };
  }
  return best?.code ?? null;
}

/**
 * Endings a word of each language changes between singular and plural, swapped both ways
 * (Catalogue.endings).
 * @type {Record<string, [string, string][]>}
 */
const ENDINGS = {
  en: [["ies", "y"], ["oes", "o"], ["ves", "f"], ["es", ""], ["s", ""]],
  de: [["en", ""], ["n", ""], ["e", ""], ["s", ""], ["er", ""]],
  fr: [["s", ""], ["x", ""]],
  es: [["es", ""], ["s", ""]],
  it: [["i", "o"], ["i", "e"], ["e", "a"], ["he", "a"], ["chi", "co"]],
  nl: [["en", ""], ["s", ""], ["'s", ""], ["jes", ""], ["tjes", ""]],
  pl: [["y", "a"], ["i", "a"], ["e", "o"], ["y", ""], ["i", ""], ["ki", "ek"]],
  pt: [["oes", "ao"], ["aes", "ao"], ["s", ""], ["is", "l"]],
};
/** The shortest word an ending leaves (Catalogue.shortestStem). */
const SHORTEST_STEM = 3;
/** Words that say a grocery is frozen (Catalogue.frozenWords). */
const FROZEN_WORDS = new Set([
  "frozen", "tk", "tiefgekuhlt", "tiefgekuhlte", "tiefgekuhlter", "tiefgekuhltes", "gefroren", "gefrorene",
  "surgele", "surgelee", "surgeles", "surgelees", "congele", "congelee", "congeles", "congelees",
  "congelado", "congelada", "congelados", "congeladas", "surgelato", "surgelata", "surgelati", "surgelate",
  "congelato", "congelata", "congelati", "congelate", "bevroren", "diepvries", "mrozony", "mrozona",
  "mrozone", "mrozonych", "mrozonki",
]);
/** Beginnings of a compound word that say it is frozen (Catalogue.frozenPrefixes). */
const FROZEN_PREFIXES = ["tiefkuhl", "diepvries", "冷凍"];
/** Languages whose phrases put the word they are about first (Catalogue.headFirst). */
const HEAD_FIRST = new Set(["fr", "es", "it", "pt", "pl"]);
/** Languages that write compounds as one word, and the shortest end looked up (Catalogue.compounding). */
const COMPOUNDING = new Map([["de", 3], ["nl", 3], ["ja", 2]]);
/** The freezer's index among the aisles (Catalogue.frozenAisle). */
const FROZEN_AISLE = 5;

/**
 * The entry for `key` in `catalogues` (Catalogue.find).
 * @param {string} key
 * @param {Catalogue[]} catalogues
 * @returns {Entry | null}
 */
function find(key, catalogues) {
  if (key === "" || new TextEncoder().encode(key).length > 200) return null;
  const direct = named(key, catalogues);
  if (direct !== null) return direct;
  const words = key.split(" ");
  const cold = frozen(words, catalogues);
  if (cold !== null) return cold;
  if (words.length > 1) {
    for (const candidate of shorter(words, HEAD_FIRST.has(catalogues[0]?.code ?? ""))) {
      const entry = named(candidate, catalogues);
      if (entry !== null) return entry;
    }
  }
  for (const word of [...words].reverse()) {
    const entry = compound(word, catalogues);
    if (entry !== null) return entry;
  }
  return null;
}

/**
 * The key itself in each language, then with an ending swapped in each (Catalogue.named).
 * @param {string} key
 * @param {Catalogue[]} catalogues
 * @returns {Entry | null}
 */
function named(key, catalogues) {
  for (const c of catalogues) {
    const entry = c.entries.get(key);
    if (entry !== undefined) return entry;
  }
  for (const c of catalogues) {
    for (const form of formsOf(key, c.code)) {
      const entry = c.entries.get(form);
      if (entry !== undefined) return entry;
    }
  }
  return null;
}

/**
 * `key` with each of `language`'s endings swapped for its pair, both ways (Catalogue.forms).
 * @param {string} key
 * @param {string} language
 * @returns {string[]}
 */
export function formsOf(key, language) {
  /** @type {string[]} */
  const out = [];
  const chars = [...key];
  for (const [plural, singular] of ENDINGS[language] ?? []) {
    if (key.endsWith(plural) && chars.length - [...plural].length >= SHORTEST_STEM) {
      out.push(chars.slice(0, chars.length - [...plural].length).join("") + singular);
    }
    if (key.endsWith(singular) && chars.length - [...singular].length >= SHORTEST_STEM) {
      out.push(chars.slice(0, chars.length - [...singular].length).join("") + plural);
    }
  }
  return out;
}

/**
 * A frozen word makes it the freezer's, with the icon of what is frozen (Catalogue.frozen).
 * @param {string[]} words
 * @param {Catalogue[]} catalogues
 * @returns {Entry | null}
 */
function frozen(words, catalogues) {
  for (const [index, word] of words.entries()) {
    const rest = [...words];
    const prefix = FROZEN_PREFIXES.find((p) => word.startsWith(p));
    if (FROZEN_WORDS.has(word)) rest.splice(index, 1);
    else if (prefix !== undefined) rest[index] = word.slice(prefix.length);
    else continue;
    const what = rest.filter((w) => w !== "").join(" ");
    return { aisle: FROZEN_AISLE, icon: what === "" ? null : (named(what, catalogues)?.icon ?? null) };
  }
  return null;
}

/**
 * Shorter runs of the words, longest first: the words a phrase is about, then the others
 * (Catalogue.shorter).
 * @param {string[]} words
 * @param {boolean} headFirst
 * @returns {string[]}
 */
function shorter(words, headFirst) {
  const ends = [];
  const starts = [];
  for (let i = 1; i < words.length; i++) ends.push(words.slice(i).join(" "));
  for (let i = words.length - 1; i >= 1; i--) starts.push(words.slice(0, i).join(" "));
  return headFirst ? [...starts, ...ends] : [...ends, ...starts];
}

/**
 * The longest end of `word` that a compounding language knows as a name (Catalogue.compound).
 * @param {string} word
 * @param {Catalogue[]} catalogues
 * @returns {Entry | null}
 */
function compound(word, catalogues) {
  const chars = [...word];
  for (let start = 1; start < chars.length; start++) {
    const end = chars.slice(start).join("");
    for (const c of catalogues) {
      const shortest = COMPOUNDING.get(c.code);
      if (shortest === undefined || chars.length - start < shortest) continue;
      const entry = c.entries.get(end);
      if (entry !== undefined) return entry;
    }
  }
  return null;
}

/**
 * Catalogue names matching `query`, best first, without letters inside words or scattered ones
 * ("tea" is not in "steak"), leaving out those whose key is in `excluding` (Catalogue.suggestions).
 * @param {Catalogue} catalogue
 * @param {string} query
 * @param {Set<string>} [excluding]
 * @param {number} [limit]
 * @returns {string[]}
 */
export function suggestions(catalogue, query, excluding = new Set(), limit = 5) {
  return suggestionMatches(catalogue, query, excluding, limit).map((m) => m.item.name);
}

/**
 * suggestions with how each matched (its tier), which offers.js ranks by
 * (Catalogue.suggestionMatches).
 * @param {Catalogue} catalogue
 * @param {string} query
 * @param {Set<string>} [excluding]
 * @param {number} [limit]
 */
export function suggestionMatches(catalogue, query, excluding = new Set(), limit = 5) {
  const parsed = new Query(query);
  if (!parsed.hasText || limit <= 0) return [];
  return catalogue.index
    .search(parsed, limit + excluding.size + 16)
    .matches.filter((m) => isCloseEnough(m.tier) && !excluding.has(normalize(m.item.name)))
    .slice(0, limit);
}

/** @type {Map<string, Promise<Catalogue>>} */
const loading = new Map();

/**
 * The catalogue of `language`, fetched once (from this version's files, so the service worker
 * can keep it). Rejects when it cannot be had (offline on first use): callers go on without it.
 * @param {string} language
 * @param {string} base the address of this version's files ("/a/VERSION/")
 */
export function load(language, base) {
  if (!LANGUAGES.includes(language)) language = "en";
  let promise = loading.get(language);
  if (promise === undefined) {
    promise = fetch(`${base}catalogue-${language}.json`, { credentials: "omit" }).then(async (response) => {
      if (!response.ok) throw new Error(`the catalogue could not be loaded (${response.status})`);
      const text = await response.text();
      if (text.length > 1 << 20) throw new Error("the catalogue file is too large");
      return fromJSON(JSON.parse(text));
    });
    promise.catch(() => loading.delete(language));
    loading.set(language, promise);
  }
  return promise;
}
