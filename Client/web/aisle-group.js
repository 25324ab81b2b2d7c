// Items in the order a shop walk shows them (in Swift, BasketReplica's [Item].sortedForDisplay()
// and AisleGroup.grouping(_:aisles:)).
import { normalize } from "./key.js";
import { compareBytes, utf8 } from "./search-bytes.js";
import { compareUTF8 } from "./state.js";
/**
 * Sorts items as the CLI lists them: unchecked first, then by name without case, then by id.
 * @template {{ id: string, name: string, checked: boolean, deleted?: boolean }} T
 * @param {readonly T[]} items
 * @returns {T[]}
 */
export function sortedForDisplay(items) {
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

/**
 * Groups items to buy by category in the aisle order, then other categories alphabetically,
 * then those without one (the CLI's `basket ls`): [{ category, items }].
 * @template {{ id: string, name: string, checked: boolean, deleted?: boolean, category: string | null }} T
 * @param {readonly T[]} items
 * @param {readonly string[]} aisles
 * @returns {{ category: string | null, items: T[] }[]}
 */
export function groupByAisle(items, aisles, sorted = false) {
  /** @type {Map<string, { category: string | null, items: T[] }>} */
  const byKey = new Map();
  /** @type {T[]} */
  const uncategorised = [];
  // `sorted`: the items are in sortedForDisplay's order already (a screen keeps them so).
  for (const item of sorted ? items : sortedForDisplay(items)) {
    const key = item.category === null ? "" : categoryKey(item.category);
    if (key === "") {
      uncategorised.push(item);
      continue;
    }
    let group = byKey.get(key);
    if (group === undefined) byKey.set(key, (group = { category: item.category, items: [] }));
    group.items.push(item);
  }
  /** @type {{ category: string | null, items: T[] }[]} */
  const groups = [];
  for (const aisle of aisles) {
    const key = categoryKey(aisle);
    const group = byKey.get(key);
    if (group !== undefined) {
      groups.push({ category: aisle, items: group.items });
      byKey.delete(key);
    }
  }
  const rest = [...byKey.entries()].sort((a, b) => compareUTF8(a[0], b[0]));
  for (const [, group] of rest) groups.push(group);
  if (uncategorised.length > 0) groups.push({ category: null, items: uncategorised });
  return groups;
}
