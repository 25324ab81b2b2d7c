// Keeping a list screen's data (its items in order, by id and by name, their groups, the search
// index) up to date after a change that kept every name: a tap, a quantity, a category.
import { LIST_ITEM } from "./ids.js";

/** @typedef {import("./state.js").Item} Item */
/** @typedef {import("./state.js").ListState} ListState */
/**
 * The items of an aisle as the screen shows them: the group's key ("" for no aisle, else
 * "aisle:" and the category's key), its category, its items by name.
 * @typedef {{ key: string, category: string | null, items: Item[] }} Group
 */
/**
 * What a list screen computes once per change of the list (not per keystroke, nor when only
 * the sync state moved): its items in the state's order (`all`), by id and by name (checked
 * ones in place), where each is in both, the search index, and the groups and checked items
 * (null until asked for), and the German spellings of its names.
 * @typedef {{ state: ListState, changes: number, all: Item[], byID: Map<string, Item>,
 *   byName: Item[], at: Map<string, { all: number, byName: number }>,
 *   index: import("./search-index.js").Index | null, groups: Group[] | null, checked: Item[] | null,
 *   spellings: { keys: Set<string>, spellings: Map<string, string> } | null }} ListData
 */

/**
 * Brings `d` up to date in place when the last changes kept every item's name (a tap, a
 * quantity, a note, a category, the list's aisles): only the changed items are looked at.
 * Returns false when a new or removed item or a new name needs everything computed again.
 * @param {ListData} d the screen's data: items, by id, by name, their places, groups
 * @param {ListState} state
 * @param {(item: Item) => boolean} placedChecked where the screen shows an item: among the checked ones or not
 */
export function kept(d, state, placedChecked) {
  const ids = state.changedSince(d.changes);
  if (ids === null) return false;
  /** @type {[Item, Item][]} */
  const updates = [];
  // A shop's change (its order, what a trip taught, its removal) moves the groups of a walk.
  let shopChanged = false;
  for (const id of ids) {
    if (id === LIST_ITEM) continue;
    const before = d.byID.get(id);
    const now = state.item(id);
    if (before === undefined && now === undefined && state.items.get(id)?.shop !== undefined) shopChanged = true;
    if (before === undefined && (now === undefined || now.deleted)) continue;
    if (before === undefined || now === undefined || now.deleted || now.name !== before.name) return false;
    updates.push([before, now]);
  }
  for (const [before, now] of updates) {
    const at = /** @type {{ all: number, byName: number }} */ (d.at.get(now.id));
    d.all[at.all] = now;
    d.byName[at.byName] = now;
    d.byID.set(now.id, now);
    d.index?.replace(at.all, before, now);
  }
  d.changes = state.changes;
  // The groups stand when every changed item stays where it is shown (a tap: it stays in place
  // for a moment) and in its aisle: the new item takes the old one's place.
  // (Its aisle at a shop and the shops it is bought at place it on a walk as its category does.)
  const samePlace = updates.every(([before, now]) => before.category === now.category && before.places === now.places &&
    before.shops === now.shops && placedChecked(before) === placedChecked(now));
  if (d.groups !== null && d.checked !== null && samePlace && !shopChanged && !ids.has(LIST_ITEM)) {
    const checked = d.checked;
    const arrays = [...d.groups.map((g) => g.items), checked];
    for (const [before, now] of updates) {
      const array = arrays.find((a) => a.includes(before));
      if (array === undefined) {
        d.groups = null;
        break;
      }
      array[array.indexOf(before)] = now;
    }
  } else {
    d.groups = null;
  }
  if (d.groups === null) d.checked = null;
  return true;
}
