// The ids a plain list's operations take when an owner encrypts it (BasketCore's
// ListConversion.swift, held to it by the seal vectors; docs/encryption.md, "Converting a plain
// list"): an item's from the key of its newest name, a shop's from its old id's hex, the list's
// registers unchanged, and the shop ids inside `shops` and `places` values moved with their shops.

import { fieldInfo } from "./field.js";
import { normalize } from "./key.js";
import { formatMarks, formatPlaces, parseMarks, parsePlaces } from "./shops.js";

/** @typedef {import("./ops.js").Op} Op */

/**
 * The shops an item's operation names in its value.
 * @param {Op} op
 * @returns {string[]}
 */
function shopsNamed(op) {
  if (typeof op.value !== "string") return [];
  if (op.field === "shops") return parseMarks(op.value);
  if (op.field === "places") return [...parsePlaces(op.value).keys()];
  return [];
}

/**
 * What the new ids of `ops` are derived from (ListConversion.keys(of:)): each item's key, and
 * each shop's (its old id's hex), shops named only inside `shops` and `places` values included.
 * @param {Op[]} ops
 * @returns {{ items: Map<string, string>, shops: Map<string, string> }}
 */
export function conversionKeys(ops) {
  /** @type {Map<string, { version: string, key: string }>} */
  const names = new Map();
  /** @type {Map<string, string>} */
  const items = new Map();
  /** @type {Map<string, string>} */
  const shops = new Map();
  for (const op of ops) {
    const target = fieldInfo(op.field).target;
    if (target === "list") continue;
    if (target === "shop") {
      shops.set(op.item, op.item);
      continue;
    }
    items.set(op.item, op.item);
    const version = op.ts + op.replica;
    const known = names.get(op.item);
    if (op.field === "name" && typeof op.value === "string" && (known === undefined || known.version < version)) {
      names.set(op.item, { version, key: normalize(op.value) });
    }
    for (const shop of shopsNamed(op)) shops.set(shop, shop);
  }
  for (const [item, name] of names) if (name.key.length > 0) items.set(item, name.key);
  return { items, shops };
}

/**
 * `ops` moved to the new ids (ListConversion.rekey): `items` and `shops` map each old id to its
 * new one; an id missing from them stays as it is.
 * @param {Op[]} ops
 * @param {Map<string, string>} items
 * @param {Map<string, string>} shops
 * @returns {Op[]}
 */
export function rekey(ops, items, shops) {
  return ops.map((op) => {
    const target = fieldInfo(op.field).target;
    if (target === "list") return op;
    const moved = { ...op, item: (target === "shop" ? shops : items).get(op.item) ?? op.item };
    if (typeof op.value === "string" && op.field === "shops") {
      moved.value = formatMarks(parseMarks(op.value).map((id) => shops.get(id) ?? id));
    } else if (typeof op.value === "string" && op.field === "places") {
      /** @type {Map<string, string>} */
      const places = new Map();
      for (const [id, aisle] of parsePlaces(op.value)) {
        const to = shops.get(id) ?? id;
        if (!places.has(to)) places.set(to, aisle);
      }
      moved.value = formatPlaces(places);
    }
    return moved;
  });
}

/**
 * A plain list's operations moved to the ids they take under `keys` (ListKeys.converted): the
 * items' names are read from `known` as well (the device's whole copy, for its unsent writes).
 * @param {import("./seal.js").ListKeys} keys
 * @param {Op[]} ops
 * @param {Op[]} [known]
 * @returns {Promise<Op[]>}
 */
export async function converted(keys, ops, known = []) {
  const { items, shops } = conversionKeys([...known, ...ops]);
  /** @type {Map<string, string>} */
  const itemIDs = new Map();
  for (const [id, key] of items) itemIDs.set(id, await keys.itemID(key));
  /** @type {Map<string, string>} */
  const shopIDs = new Map();
  for (const [id, key] of shops) shopIDs.set(id, await keys.shopID(key));
  return rekey(ops, itemIDs, shopIDs);
}
