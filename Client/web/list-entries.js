// What the search field offers and adds on a list (BasketCLI's `basket add` with EntryParser,
// `basket suggest`): the entries Enter would add, removed items and the catalogue's names as
// suggestions, and the texts the search is warmed up with. `screen` is list-screen.js's.
import { parseAll, resolveSpellingsWith, spellingTable } from "./entry.js";
import { normalize } from "./key.js";
import * as catalogue from "./catalogue.js";
import { LIMIT, before, due as dueOffers, ranked } from "./offers.js";
import { dueUsuals } from "./usuals-sheet.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/** How many of the list's names the search is warmed up with when the field is focused. */
const WARM_UP_NAMES = 12;

/**
 * What the search is warmed up with: the letters the list's words begin with most often (the
 * likeliest first keys, whose answers the index then keeps), then the beginnings (1 to 9
 * letters) of names spread over the list, and each longer name with its third and fourth
 * letters swapped.
 * @param {{ name: string }[]} items
 * @returns {string[]}
 */
export function warmUpTexts(items) {
  /** @type {Map<string, number>} */
  const initials = new Map();
  for (const item of items) {
    for (const word of item.name.toLowerCase().split(/\s+/)) {
      const first = [...word][0];
      if (first !== undefined) initials.set(first, (initials.get(first) ?? 0) + 1);
    }
  }
  const texts = [...initials].sort((a, b) => b[1] - a[1]).slice(0, WARM_UP_NAMES).map(([letter]) => letter);
  const step = Math.max(1, Math.floor(items.length / WARM_UP_NAMES));
  for (let i = 0; i < items.length && texts.length < WARM_UP_NAMES * 11; i += step) {
    const letters = [...items[i].name.toLowerCase()];
    for (let n = 1; n <= Math.min(letters.length, 9); n++) texts.push(letters.slice(0, n).join(""));
    if (letters.length > 5) texts.push([...letters.slice(0, 2), letters[3], letters[2], ...letters.slice(4)].join(""));
  }
  return texts;
}

/**
 * What Enter would add for `text`: [{ name, quantity, category }], or null.
 * @param {ListScreen} screen
 * @param {string} text
 */
export function entriesFor(screen, text) {
  if (text.trim() === "") return null;
  const d = screen.current();
  // Every name's key (removed ones too) and their German spellings, once per change of the list.
  d.spellings ??= spellingTable(screen.replica.state(screen.list)?.allItems().map((i) => i.name) ?? []);
  const parsed = parseAll(text, d.spellings.keys);
  if (parsed.length === 0) return null;
  // "kaese" is Käse when it is on the list; an aisle typed after a name ("milk @dairy") is one the
  // list has or the catalogue's; an item without one takes the catalogue's aisle ("milk" lands in
  // dairy).
  const known = [...(screen.replica.state(screen.list)?.info.aisles ?? []), ...d.all.flatMap((i) => (i.category === null ? [] : [i.category]))];
  return resolveSpellingsWith(parsed, d.spellings).map((e) => ({
    ...e,
    category: e.category === null ? screen.app.aisleFor(screen.list, e.name) : screen.app.aisleNamed(screen.list, e.category, known),
  }));
}

/**
 * What is offered beside adding `text` (Offers.ranked): the list's closest item when Enter adds
 * something new (`meant`), removed items matching it (had it before), and the catalogue's names
 * the list never had; by how each matches, four at most.
 * @param {ListScreen} screen
 * @param {string} text
 * @param {import("./offers.js").Match | null} meant
 * @returns {import("./offers.js").Offer[]}
 */
export function rankedOffers(screen, text, meant) {
  const everything = screen.replica.state(screen.list)?.allItems() ?? [];
  const had = before(everything.filter((i) => i.deleted), text);
  const own = screen.app.ownCatalogue();
  const excluding = new Set(everything.map((i) => normalize(i.name)).concat([normalize(text)]));
  // A due usual not on the list to buy leads them all (Offers.due).
  const due = dueOffers(dueUsuals(screen), text);
  return ranked(meant, had, own === null ? [] : catalogue.suggestionMatches(own, text, excluding, 3), LIMIT, due);
}
