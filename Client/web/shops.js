// Shops and usuals (BasketCore's Shops.swift, held to it by the conformance vectors): an item's
// shop marks and taught aisles, a shop's order learned from trips, the usuals and when each is due.

import { normalize } from "./key.js";

const hex32 = /^[0-9a-fA-F]{32}$/;

/** The most shops one item may be marked for (ShopMarks.maxShops). */
export const MAX_SHOPS = 16;

/**
 * The shop ids in an item's `shops` value, in order; a piece that is no id is skipped.
 * @param {string | null | undefined} text
 * @returns {string[]}
 */
export function parseMarks(text) {
  /** @type {string[]} */
  const ids = [];
  if (typeof text !== "string") return ids;
  for (const piece of text.split(",")) {
    if (piece.length === 0) continue;
    const id = piece.toLowerCase();
    if (hex32.test(piece) && !ids.includes(id)) ids.push(id);
    if (ids.length === MAX_SHOPS) break;
  }
  return ids;
}

/**
 * The `shops` value for `ids`: sorted, without repeats; null for none (bought anywhere).
 * @param {Iterable<string>} ids
 * @returns {string | null}
 */
export function formatMarks(ids) {
  const sorted = [...new Set([...ids].map((id) => id.toLowerCase()))].sort();
  return sorted.length === 0 ? null : sorted.join(",");
}

/**
 * Whether an item marked `marks` is shown at `shop` of a list whose shops are `shops`
 * (ShopMarks.isShown).
 * @param {string[]} marks
 * @param {string} shop
 * @param {Set<string>} shops
 * @returns {boolean}
 */
export function isShownAt(marks, shop, shops) {
  const live = marks.filter((id) => shops.has(id));
  return live.length === 0 || live.includes(shop);
}

/**
 * The aisle for each shop in an item's `places` value (ShopPlaces.parse).
 * @param {string | null | undefined} text
 * @returns {Map<string, string>}
 */
export function parsePlaces(text) {
  /** @type {Map<string, string>} */
  const places = new Map();
  if (typeof text !== "string") return places;
  for (const pair of text.split(";")) {
    const equals = pair.indexOf("=");
    if (equals < 0 || !hex32.test(pair.slice(0, equals))) continue;
    const aisle = pair.slice(equals + 1).split(" ").filter((w) => w.length > 0).join(" ");
    if (aisle.length > 0) places.set(pair.slice(0, equals).toLowerCase(), aisle);
  }
  return places;
}

/**
 * The `places` value for `places`, sorted by shop id; null for none (ShopPlaces.format).
 * @param {Map<string, string>} places
 * @returns {string | null}
 */
export function formatPlaces(places) {
  const pairs = [...places.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, aisle]) => `${id}=${aisle}`);
  return pairs.length === 0 ? null : pairs.join(";");
}

/** How much of the way a trip moves an aisle: one part in this many (ShopOrder.stepDivisor). */
export const STEP_DIVISOR = 4;
/** A place in the order is worth this many points of score (ShopOrder.placeScore). */
export const PLACE_SCORE = 1000;
/** The most aisles a learned order keeps (ShopOrder.maxAisles). */
export const MAX_AISLES = 64;

/**
 * What a shop's trips taught (ShopOrder.Learned).
 * @typedef {{ trips: number, last: number, scores: { aisle: string, score: number }[] }} Learned
 */

/**
 * A number as the learned order writes it: 1 to 15 decimal digits (ShopOrder.number).
 * @param {string} text
 * @returns {number | null}
 */
function number(text) {
  return /^[0-9]{1,15}$/.test(text) ? Number(text) : null;
}

/**
 * The learned order in a `learned` value; null when it is not one (ShopOrder.Learned(text:)).
 * @param {unknown} text
 * @returns {Learned | null}
 */
export function parseLearned(text) {
  if (typeof text !== "string") return null;
  const first = text.indexOf(" ");
  if (first < 0) return null;
  const second = text.indexOf(" ", first + 1);
  const trips = number(text.slice(0, first));
  const last = number(second < 0 ? text.slice(first + 1) : text.slice(first + 1, second));
  if (trips === null || last === null) return null;
  /** @type {{ aisle: string, score: number }[]} */
  const scores = [];
  const keys = new Set();
  const rest = second < 0 ? "" : text.slice(second + 1);
  for (const piece of rest.split(",")) {
    if (piece.length === 0) continue;
    const equals = piece.lastIndexOf("=");
    if (equals < 0) continue;
    const score = number(piece.slice(equals + 1));
    if (score === null) continue;
    const aisle = piece.slice(0, equals).split(" ").filter((w) => w.length > 0).join(" ");
    if (aisle.length === 0 || keys.has(normalize(aisle))) continue;
    keys.add(normalize(aisle));
    scores.push({ aisle, score });
    if (scores.length === MAX_AISLES) break;
  }
  return { trips, last, scores: sortedScores(scores) };
}

/**
 * The stored value of a learned order: `TRIPS LAST aisle=score, aisle=score`.
 * @param {Learned} learned
 * @returns {string}
 */
export function learnedText(learned) {
  return `${learned.trips} ${learned.last} ` + learned.scores.map((s) => `${s.aisle}=${s.score}`).join(", ");
}

/**
 * Scores by score, then as they were.
 * @param {{ aisle: string, score: number }[]} scores
 */
function sortedScores(scores) {
  return scores.map((s, i) => ({ s, i })).sort((a, b) => a.s.score - b.s.score || a.i - b.i).map(({ s }) => s);
}

/**
 * The aisles without repeats (by key), each once as first spelled.
 * @param {string[]} aisles
 * @returns {string[]}
 */
function unique(aisles) {
  const keys = new Set();
  return aisles.filter((a) => {
    if (a.length === 0) return false;
    const k = normalize(a);
    if (keys.has(k)) return false;
    keys.add(k);
    return true;
  });
}

/**
 * The pinned aisles' keys that `base` holds.
 * @param {string[]} base
 * @param {string[]} pinned
 */
function pinnedKeys(base, pinned) {
  const inBase = new Set(unique(base).map(normalize));
  return new Set(pinned.map(normalize).filter((k) => inBase.has(k)));
}

/**
 * The shop's order: the learned order (else `base`), the aisles of `base` it does not know after
 * it, each pinned aisle at its place in `base` (ShopOrder.order).
 * @param {string[]} base
 * @param {string[]} pinned
 * @param {Learned | null} learned
 * @returns {string[]}
 */
export function shopOrder(base, pinned, learned) {
  const baseAisles = unique(base);
  const pins = pinnedKeys(baseAisles, pinned);
  const free = unique([...(learned?.scores.map((s) => s.aisle) ?? []), ...baseAisles]).filter((a) => !pins.has(normalize(a)));
  baseAisles.forEach((aisle, place) => {
    if (pins.has(normalize(aisle))) free.splice(Math.min(place, free.length), 0, aisle);
  });
  return free;
}

/**
 * The learned order after one more trip that visited `trip`'s aisles in that order, ending at
 * `at` (ShopOrder.learn).
 * @param {string[]} trip
 * @param {string[]} base
 * @param {string[]} pinned
 * @param {Learned | null} learned
 * @param {number} at
 * @returns {Learned}
 */
export function learn(trip, base, pinned, learned, at) {
  const pins = pinnedKeys(base, pinned);
  const teaches = (/** @type {string} */ a) => !a.includes(",") && !a.includes("=");
  const visited = unique(trip.filter(teaches)).filter((a) => !pins.has(normalize(a)));
  let current = shopOrder(base, pinned, learned).filter((a) => !pins.has(normalize(a)) && teaches(a));
  current = unique([...current, ...visited]).slice(0, MAX_AISLES);
  /** @type {Map<string, number>} */
  const place = new Map();
  current.forEach((a, i) => { if (!place.has(normalize(a))) place.set(normalize(a), i); });
  /** @type {Map<string, number>} */
  const known = new Map();
  for (const s of learned?.scores ?? []) if (!known.has(normalize(s.aisle))) known.set(normalize(s.aisle), s.score);
  const scores = current.map((aisle, i) => ({ aisle, score: known.get(normalize(aisle)) ?? i * PLACE_SCORE }));
  const moving = visited.filter((a) => place.has(normalize(a)));
  if (moving.length >= 2) {
    const slots = moving.map((a) => /** @type {number} */ (place.get(normalize(a)))).sort((a, b) => a - b);
    moving.forEach((aisle, n) => {
      const index = /** @type {number} */ (place.get(normalize(aisle)));
      const target = slots[n] * PLACE_SCORE;
      scores[index].score += Math.trunc((target - scores[index].score) / STEP_DIVISOR);
    });
  }
  return { trips: (learned?.trips ?? 0) + 1, last: at, scores: sortedScores(scores) };
}

/** Purchases an item needs to be a usual (Usuals.minimumPurchases). */
export const MINIMUM_PURCHASES = 3;
/** Check-offs this close after a counted one are the same purchase: 12 hours (Usuals.sameTrip). */
export const SAME_TRIP = 12 * 3600000;
/** The most recent purchases the interval is taken from (Usuals.window). */
export const WINDOW = 16;

/**
 * What makes an item a usual (Usuals.Pattern), times in Unix ms.
 * @typedef {{ purchases: number, interval: number, last: number, due: number }} UsualPattern
 */

/**
 * The pattern of an item checked off at `checks` (Unix ms), dismissed at `dismissed`; null when
 * fewer than three purchases count (Usuals.pattern).
 * @param {number[]} checks
 * @param {number | null} dismissed
 * @returns {UsualPattern | null}
 */
export function usualPattern(checks, dismissed) {
  /** @type {number[]} */
  let purchases = [];
  for (const at of [...checks].sort((a, b) => a - b)) {
    if (dismissed !== null && at <= dismissed) continue;
    if (purchases.length > 0 && at - purchases[purchases.length - 1] < SAME_TRIP) continue;
    purchases.push(at);
  }
  if (purchases.length > WINDOW) purchases = purchases.slice(purchases.length - WINDOW);
  if (purchases.length < MINIMUM_PURCHASES) return null;
  const gaps = purchases.slice(1).map((at, i) => at - purchases[i]).sort((a, b) => a - b);
  const middle = Math.floor(gaps.length / 2);
  const interval = gaps.length % 2 === 1 ? gaps[middle] : Math.floor((gaps[middle - 1] + gaps[middle]) / 2);
  const last = purchases[purchases.length - 1];
  return { purchases: purchases.length, interval, last, due: last + interval };
}

/**
 * The time in a `dismissed` value; null when none or not a number (Usuals.dismissedAt).
 * @param {string | null | undefined} text
 * @returns {number | null}
 */
export function dismissedAt(text) {
  return typeof text === "string" && /^[0-9]{1,15}$/.test(text) ? Number(text) : null;
}
