// Search over a list's items (BasketSearch's Search.swift): the query parsed, the index asked,
// and what Enter does with the result, as the CLI's `basket search` and interactive mode do.
import { Query } from "./query.js";
import { Index } from "./search-index.js";

/**
 * Searches `items` ({ id, name, checked, category }) for `text`. `lastUsed` maps item ids to when
 * they were last added (Unix ms). Returns { query, offer, matches: [{ item, tier, exact, score }] }.
 * @param {string} text
 * @param {Iterable<import("./search-index.js").SearchItem>} items
 * @param {Map<string, number>} [lastUsed]
 * @param {number} [limit]
 * @returns {import("./search-index.js").SearchResult}
 */
export function search(text, items, lastUsed = new Map(), limit = Infinity) {
  return new Index(items, lastUsed).search(new Query(text), limit);
}

/**
 * What Enter does with what was typed (SearchResult.enter in Swift, pinned by the conformance
 * vectors): { existing: item } when an item has the query's key, { add: offer } for a new item
 * with what was typed, or null. Never a prefix, typo, fuzzy or history row.
 * @param {{ offer: string | null, matches: { item: import("./search-index.js").SearchItem, exact: boolean }[] }} result
 * @returns {{ existing: import("./search-index.js").SearchItem } | { add: string } | null}
 */
export function enterAction(result) {
  if (result.matches.length > 0 && result.matches[0].exact) return { existing: result.matches[0].item };
  if (result.offer !== null) return { add: result.offer };
  return null;
}

/**
 * When Enter adds something new, the closest item on the list ("did you mean …?"); else null.
 * @param {{ offer: string | null, matches: { item: import("./search-index.js").SearchItem, exact: boolean }[] }} result
 */
export function didYouMean(result) {
  const enter = enterAction(result);
  return enter !== null && "add" in enter && result.matches.length > 0 ? result.matches[0].item : null;
}
