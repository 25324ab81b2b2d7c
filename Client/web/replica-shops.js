// Shops, their orders, item marks and taught aisles, trips and usuals on the phone
// (BasketReplica's Replica+Shops.swift, rule for rule): the writes go through the replica's
// performLocal like any other; what a trip taught and the usuals are computed here from the
// check-offs the replica keeps (ListState.checks).
import { normalize } from "./key.js";
import { milliseconds } from "./clock.js";
import { ReplicaError } from "./replica-types.js";
import { cleaned } from "./replica.js";
import { MAX_SHOPS, formatMarks, formatPlaces, isShownAt, learn, learnedText, parseLearned, parseMarks, parsePlaces, shopOrder, usualPattern, dismissedAt } from "./shops.js";
import { fieldInfo } from "./field.js";

/** @typedef {import("./replica.js").Replica} Replica */
/** @typedef {import("./state.js").Shop} Shop */
/** @typedef {import("./state.js").Item} Item */
/** @typedef {{ item: Item, pattern: import("./shops.js").UsualPattern }} Usual */
/**
 * A trip this device is on: the shop and when it began (device ms).
 * @typedef {{ shop: string, started: number }} Trip
 */

/**
 * The list's shops (not removed), by name.
 * @param {Replica} replica
 * @param {string} list
 * @returns {Shop[]}
 */
export function shopsOf(replica, list) {
  return replica.state(list)?.shops() ?? [];
}

/**
 * The order `shop` is walked in, for a list whose aisle order is `listAisles` (Shop.aisles).
 * @param {Shop} shop
 * @param {string[]} listAisles
 */
export function walkOrder(shop, listAisles) {
  return shopOrder(shop.order.length === 0 ? listAisles : shop.order, shop.pinned, shop.learned);
}

/**
 * The aisle `item` is in at `shop`: the one taught there, else its category (Shop.aisle(of:)).
 * @param {Shop} shop
 * @param {{ places: string | null, category: string | null }} item
 */
export function aisleAt(shop, item) {
  return parsePlaces(item.places).get(shop.id) ?? item.category;
}

/**
 * What `items` show at `shop`: those marked for other shops left out (unless `allShops`), each
 * item's category its aisle there; and how many were left out (ShopCommands.view).
 * @template {Item} T
 * @param {T[]} items
 * @param {Shop} shop
 * @param {Shop[]} shops
 * @param {boolean} allShops
 * @returns {{ items: T[], hidden: number }}
 */
export function shopView(items, shop, shops, allShops) {
  const live = new Set(shops.map((s) => s.id));
  /** @type {T[]} */
  const shown = [];
  let hidden = 0;
  for (const item of items) {
    if (!allShops && !isShownAt(parseMarks(item.shops), shop.id, live)) {
      hidden += 1;
      continue;
    }
    const aisle = aisleAt(shop, item);
    shown.push(aisle === item.category ? item : { ...item, category: aisle });
  }
  return { items: shown, hidden };
}

/**
 * Adds a shop (a removed one of the same name comes back, with its order).
 * @param {Replica} replica
 * @param {string} list
 * @param {string} name
 */
export async function addShop(replica, list, name) {
  const clean = cleaned(name, "shop");
  const key = normalize(clean);
  const all = replica.state(list)?.shops(true) ?? [];
  const live = all.find((s) => !s.removed && normalize(s.name) === key);
  if (live) throw new ReplicaError("name_taken", `'${live.name}' is already a shop of the list`);
  // The id of the name's key, unless a shop renamed since holds it: then the next free one.
  let id = await replica.shopIDOf(list, key);
  for (let n = 2; n <= 9; n++) {
    const holder = all.find((s) => s.id === id);
    if (!holder || holder.removed) break;
    id = await replica.shopIDOf(list, `${key} #${n}`);
  }
  await replica.performLocal(list, [{ item: id, field: "shop", value: clean }, { item: id, field: "shopRemoved", value: false }]);
  return id;
}

/**
 * The live shop with id `id`, or an error.
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 */
function requireShop(replica, list, id) {
  const shop = shopsOf(replica, list).find((s) => s.id === id);
  if (!shop) throw new ReplicaError("no_such_shop", "no such shop on this list");
  return shop;
}

/**
 * Renames a shop; its id, order and marks stay.
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 * @param {string} name
 */
export async function renameShop(replica, list, id, name) {
  const clean = cleaned(name, "shop");
  requireShop(replica, list, id);
  const other = shopsOf(replica, list).find((s) => s.id !== id && normalize(s.name) === normalize(clean));
  if (other) throw new ReplicaError("name_taken", `'${other.name}' is already a shop of the list`);
  await replica.performLocal(list, [{ item: id, field: "shop", value: clean }]);
}

/**
 * Removes a shop: items marked for it alone are bought anywhere again.
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 */
export async function removeShop(replica, list, id) {
  requireShop(replica, list, id);
  await replica.performLocal(list, [{ item: id, field: "shopRemoved", value: true }]);
}

/**
 * Aisle names as a register keeps them ("produce, dairy"), each cleaned like a category and once;
 * null for none (Replica.aisleText).
 * @param {string[]} aisles
 * @param {string} field
 */
function aisleText(aisles, field) {
  /** @type {string[]} */
  const names = [];
  for (const name of aisles) {
    const clean = cleaned(name, "category");
    if (clean.includes(",")) throw new ReplicaError("invalid_operation", "an aisle name holds no comma");
    if (!names.some((n) => normalize(n) === normalize(clean))) names.push(clean);
  }
  if (names.length === 0) return null;
  return cleaned(names.join(", "), field);
}

/**
 * Sets a shop's aisle order by hand (empty: the list's), which starts its learning anew.
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 * @param {string[]} aisles
 */
export async function setShopOrder(replica, list, id, aisles) {
  const text = aisleText(aisles, "order");
  requireShop(replica, list, id);
  await replica.performLocal(list, [{ item: id, field: "order", value: text }, { item: id, field: "learned", value: null }]);
}

/**
 * Pins aisles of a shop (they keep their place in its hand-set order); owners only.
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 * @param {string[]} aisles
 */
export async function setPinned(replica, list, id, aisles) {
  const text = aisleText(aisles, "pinned");
  requireShop(replica, list, id);
  const role = replica.syncState(list)?.role ?? null;
  if (role !== null && role !== "owner") throw new ReplicaError("forbidden", "only an owner of the list can pin a shop's aisles");
  await replica.performLocal(list, [{ item: id, field: "pinned", value: text }]);
}

/**
 * Marks an item for some shops only (none: bought anywhere).
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 * @param {string[]} shops shop ids
 */
export async function markItem(replica, list, id, shops) {
  if (shops.length > MAX_SHOPS) throw new ReplicaError("invalid_operation", `an item is marked for at most ${MAX_SHOPS} shops`);
  replica.require(list, id);
  await replica.performLocal(list, [{ item: id, field: "shops", value: formatMarks(shops) }]);
}

/**
 * Teaches where an item is in a shop ("wrong aisle?"): `aisle` there from now on (null forgets).
 * @param {Replica} replica
 * @param {string} list
 * @param {string} id
 * @param {string} shop
 * @param {string | null} aisle
 */
export async function teachAisle(replica, list, id, shop, aisle) {
  const clean = aisle === null || aisle.trim() === "" ? null : cleaned(aisle, "category");
  if (clean !== null && (clean.includes(";") || clean.includes("="))) {
    throw new ReplicaError("invalid_operation", "an aisle taught at a shop holds no ';' or '='");
  }
  const item = replica.require(list, id);
  const places = parsePlaces(item.places);
  if (clean === null) places.delete(shop);
  else places.set(shop, clean);
  const text = formatPlaces(places);
  if (text !== null) cleaned(text, "places");
  await replica.performLocal(list, [{ item: id, field: "places", value: text }]);
}

/**
 * Says items are no usuals anymore (purchases until now stop counting), or (`back`) usuals again.
 * @param {Replica} replica
 * @param {string} list
 * @param {string[]} ids
 */
export async function dismissUsuals(replica, list, ids, back = false) {
  for (const id of ids) replica.require(list, id);
  const value = back ? null : String(replica.wall());
  await replica.performLocal(list, ids.map((id) => ({ item: id, field: "dismissed", value })));
}

/**
 * The usuals of `list`, due ones first (the longest due first), then by when they are due
 * (Replica.usuals(in:)).
 * @param {Replica} replica
 * @param {string} list
 * @returns {Usual[]}
 */
export function usualsOf(replica, list) {
  const state = replica.state(list);
  if (!state) return [];
  /** @type {Usual[]} */
  const usuals = [];
  for (const [id, times] of state.checkTimes) {
    if (times.length < 3) continue;
    const item = state.item(id);
    if (item === undefined) continue;
    const pattern = usualPattern(times, dismissedAt(item.dismissed));
    if (pattern !== null) usuals.push({ item, pattern });
  }
  return usuals.sort((a, b) => a.pattern.due - b.pattern.due || (a.item.name.toLowerCase() < b.item.name.toLowerCase() ? -1 : 1));
}

/**
 * Whether a usual is due at `now` (device ms).
 * @param {Usual} usual
 * @param {number} now
 */
export function isDue(usual, now) {
  return now >= usual.pattern.due;
}

/**
 * Whether a usual's item is on the list to buy.
 * @param {Usual} usual
 */
export function isOnList(usual) {
  return !usual.item.deleted && !usual.item.checked;
}

/**
 * The trip this device is on for `list`, if any.
 * @param {Replica} replica
 * @param {string} list
 * @returns {Trip | null}
 */
export function tripOf(replica, list) {
  const trip = replica.meta.trips?.[list];
  return trip && typeof trip.shop === "string" && Number.isFinite(trip.started) ? trip : null;
}

/**
 * Begins a trip to `shop`: what this device checks off from now on teaches the shop's order.
 * @param {Replica} replica
 * @param {string} list
 * @param {string} shop
 */
export async function startTrip(replica, list, shop) {
  await replica.setMeta({ trips: { ...(replica.meta.trips ?? {}), [list]: { shop, started: replica.wall() } } });
}

/**
 * Ends the trip this device is on for `list`: the aisles it checked items off in, in that order,
 * move the shop's learned order when they are two or more (Replica.finishTrip(in:)). Returns the
 * shop with what it learned, or null when there was no trip or it taught nothing.
 * @param {Replica} replica
 * @param {string} list
 * @returns {Promise<Shop | null>}
 */
export async function finishTrip(replica, list) {
  const trip = tripOf(replica, list);
  if (trip === null) return null;
  const trips = { ...(replica.meta.trips ?? {}) };
  delete trips[list];
  await replica.setMeta({ trips });
  const state = replica.state(list);
  const shop = shopsOf(replica, list).find((s) => s.id === trip.shop);
  if (!state || !shop) return null;
  /** @type {{ ts: string, item: string }[]} */
  const mine = [];
  for (const [item, stamps] of state.checks) {
    for (const [ts, by] of stamps) if (replica.isOwnReplica(by) && milliseconds(ts) >= trip.started) mine.push({ ts, item });
  }
  mine.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  /** @type {string[]} */
  const visited = [];
  for (const { item } of mine) {
    const it = state.item(item);
    const aisle = it === undefined ? null : aisleAt(shop, it);
    if (aisle !== null) visited.push(aisle);
  }
  if (new Set(visited.map(normalize)).size < 2) return null;
  const learned = learn(visited, shop.order.length === 0 ? state.info.aisles : shop.order, shop.pinned, shop.learned, replica.wall());
  let text = learnedText(learned);
  const max = fieldInfo("learned")?.maxBytes ?? 4096;
  while (new TextEncoder().encode(text).length > max && text.includes(",")) text = text.slice(0, text.lastIndexOf(","));
  await replica.performLocal(list, [{ item: shop.id, field: "learned", value: text }]);
  return { ...shop, learned: parseLearned(text) };
}

