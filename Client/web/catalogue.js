// The grocery catalogue: everyday groceries in nine languages, each with its aisle (BasketSearch's
// Catalogue). Its files (catalogue-LANG.json, made by Scripts/make-catalogue.py) are fetched when
// a language is first needed, not with the page: a phone loads only its own language's.
import { normalize } from "./key.js";
import { Query } from "./query.js";
import { Index } from "./search-index.js";

/** The languages the catalogue has. */
export const LANGUAGES = ["de", "en", "es", "fr", "it", "ja", "nl", "pl", "pt"];

/**
 * @typedef {{ language: string, aisles: string[], names: string[], aisleByKey: Map<string, number>, index: Index }} Catalogue
 */

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
 * A catalogue from its file's JSON ({ language, aisles, items: [[name, aisle]] }), checked: names
 * are strings, aisles in range; a second name with the same key is left out (Catalogue.load).
 * @param {any} json
 * @returns {Catalogue}
 */
export function fromJSON(json) {
  if (!json || !Array.isArray(json.aisles) || !Array.isArray(json.items)) throw new Error("a catalogue file is malformed");
  const aisles = json.aisles.filter((/** @type {unknown} */ a) => typeof a === "string");
  const names = [];
  const aisleByKey = new Map();
  for (const entry of json.items) {
    if (!Array.isArray(entry) || typeof entry[0] !== "string" || !Number.isInteger(entry[1])) continue;
    if (entry[1] < 0 || entry[1] >= aisles.length) continue;
    const key = normalize(entry[0]);
    if (aisleByKey.has(key)) continue;
    names.push(entry[0]);
    aisleByKey.set(key, entry[1]);
  }
  const items = names.map((name) => ({ id: normalize(name), name, checked: false, category: null }));
  return { language: String(json.language ?? ""), aisles, names, aisleByKey, index: new Index(items) };
}

/**
 * The aisle of `name` in `catalogue`, named in its language; a name only `english` has takes the
 * same aisle (every language lists the same aisles in the same order). Null when neither has it.
 * @param {Catalogue} catalogue
 * @param {Catalogue | null} english
 * @param {string} name
 */
export function aisleOf(catalogue, english, name) {
  const keys = keysOf(name);
  for (const key of keys) {
    const own = catalogue.aisleByKey.get(key);
    if (own !== undefined) return catalogue.aisles[own];
  }
  for (const key of keys) {
    const other = english?.aisleByKey.get(key);
    if (other !== undefined && other < catalogue.aisles.length) return catalogue.aisles[other];
  }
  return null;
}

/**
 * The keys a name is looked up by: its own, then without a plural's "s" or "es" ("bananas",
 * "tomatoes"), for names of more than three letters (Catalogue.keys).
 * @param {string} name
 */
function keysOf(name) {
  const key = normalize(name);
  if ([...key].length <= 3) return [key];
  const out = [key];
  if (key.endsWith("s")) out.push(key.slice(0, -1));
  if (key.endsWith("es")) out.push(key.slice(0, -2));
  return out;
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
  const parsed = new Query(query);
  if (!parsed.hasText || limit <= 0) return [];
  return catalogue.index
    .search(parsed, limit + excluding.size + 16)
    .matches.filter((m) => m.tier !== "fuzzy" && m.tier !== "substring")
    .map((m) => m.item.name)
    .filter((name) => !excluding.has(normalize(name)))
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
