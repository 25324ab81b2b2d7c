// What is offered beside adding what was typed, in one order on both clients (BasketSearch's
// Offers.swift, rule for rule): the list's closest item ("did you mean …?"), items had before,
// and the catalogue's names, ranked by how each matches what was typed (the search's tier), the
// list's item first among equals, then what was had before, then the catalogue; each name once.
// "choc" offers "+ chocolate" (a prefix) before "did you mean chicken breast?" (a typo). A usual
// that is due and not on the list to buy leads them all, whatever its tier.
import { normalize } from "./key.js";
import { Query } from "./query.js";
import { Index, TIERS } from "./search-index.js";

/** @typedef {"due" | "list" | "before" | "catalogue"} Source */
/** @typedef {{ name: string, source: Source, tier: string }} Offer */
/** @typedef {{ item: { name: string }, tier: string }} Match */

/** The most offers shown beside the offer to add (Offers.limit). */
export const LIMIT = 4;

/**
 * Whether a match is close enough to offer what the list does not have: not letters inside a
 * word or scattered over a name (Offers.isCloseEnough).
 * @param {string} tier
 */
export function isCloseEnough(tier) {
  return tier !== "fuzzy" && tier !== "substring";
}

/**
 * The offers, best first (Offers.ranked).
 * @param {Match | null} meant the list's closest item, whatever its tier
 * @param {Match[]} before items had before, best first
 * @param {Match[]} catalogue the catalogue's names, best first
 * @param {number} [limit]
 * @param {Match[]} [due] due usuals not on the list to buy, best first
 * @returns {Offer[]}
 */
export function ranked(meant, before, catalogue, limit = LIMIT, due = []) {
  /** @type {Offer[]} */
  const candidates = due.map((m) => ({ name: m.item.name, source: /** @type {Source} */ ("due"), tier: m.tier }));
  if (meant !== null) candidates.push({ name: meant.item.name, source: "list", tier: meant.tier });
  for (const m of before) candidates.push({ name: m.item.name, source: "before", tier: m.tier });
  for (const m of catalogue) candidates.push({ name: m.item.name, source: "catalogue", tier: m.tier });
  const seen = new Set();
  const unique = candidates.filter((o) => !seen.has(normalize(o.name)) && seen.add(normalize(o.name)));
  // A stable order: due usuals first, then by tier, then as listed.
  return unique
    .map((offer, index) => ({ offer, index, lead: offer.source === "due" ? 0 : 1, rank: TIERS.indexOf(offer.tier) }))
    .sort((a, b) => a.lead - b.lead || a.rank - b.rank || a.index - b.index)
    .slice(0, limit)
    .map((o) => o.offer);
}

/**
 * The items had before that match `query`, close enough to offer, best first (Offers.before).
 * @template {import("./search-index.js").SearchItem} T
 * @param {T[]} removed
 * @param {string} query
 * @param {number} [limit]
 */
export function before(removed, query, limit = 3) {
  const parsed = new Query(query);
  if (!parsed.hasText || removed.length === 0) return [];
  return new Index(removed).search(parsed).matches.filter((m) => isCloseEnough(m.tier)).slice(0, limit);
}

/**
 * The due usuals (not on the list to buy) matching `query` close enough, best first (Offers.due).
 * @template {import("./search-index.js").SearchItem} T
 * @param {T[]} usuals
 * @param {string} query
 * @param {number} [limit]
 */
export function due(usuals, query, limit = 2) {
  return before(usuals, query, limit);
}
