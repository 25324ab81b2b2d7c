// One list on the phone: search-as-you-type over its items, Enter adds what was typed, the rows
// kept by id (a tap redraws one row, not 2,000), and everything the CLI can do with a list: edit
// an item, aisles and their order, clear checked, members and invites, archive, delete or leave.
import { hearTogether, showTogether } from "./together.js";
import { fileInbox } from "./inbox.js";
import { otherShopsButton, showWalk, walk, walkParts, walkedShop } from "./shop-walk.js";
import { h, Rows, Slots, reconcile, nextPaint, whenIdle } from "./ui.js";
import { Query } from "./query.js";
import { Index } from "./search-index.js";
import { groupByAisle, sortedForDisplay } from "./aisle-group.js";
import { didYouMean } from "./search.js";
import { editItem } from "./item-sheet.js";
import { listSettings, setArchived, confirmDialog } from "./list-settings.js";
import { share } from "./sharing-sheet.js";
import { entriesFor, rankedOffers, warmUpTexts } from "./list-entries.js";
import { isSeveralLines, showPastePreview, takeShared } from "./paste-sheet.js";
import { makeRow, refreshRow, listenToRows } from "./item-row.js";
import { kept } from "./list-data.js";
import { normalize } from "./key.js";
import { addMessage } from "./phrases.js";
import { refusedNotice } from "./refused-changes.js";

/** The most matches shown while typing: more than a phone shows above its keyboard (the best
 * come first; "More items match" says when there are more). A 390×844 phone with its keyboard up
 * keeps about 410 px of page (844 less a 47 px status bar, a 336 px keyboard with its word bar
 * and a 50 px browser bar); the matches begin 230 px down (336 under two offers): three rows of
 * 53 px, or two. Each row shown costs every keystroke's frame a row's style, layout and paint:
 * six instead of eight cut the main thread's work per keystroke at CPU 4× by an eighth. */
const MATCHES_SHOWN = 6;

/** Rows of the whole list drawn at first, and drawn more each time the end comes near (400 px
 * ahead): a slow phone lays out and paints 2,000 rows in a tenth of a second at every change, 40
 * in a few milliseconds, and a phone's screen holds 14. 24 fill a screen and a half; every row
 * drawn costs each tap's frame its share of the style, layout and hit tests (the same screen as
 * a static page tapped at 4×: 32 ms to the next paint with 40 rows, 24 with 10). */
const ROWS_AT_A_TIME = 24;
/** How long a tapped item stays in place before it moves to its section (ms). */
const STAY_MS = 1200;

/** @typedef {import("./state.js").Item} Item */
/** @typedef {import("./list-data.js").ListData} ListData */
/** @typedef {import("./list-data.js").Group} Group */
/** @typedef {import("./search-index.js").SearchResult} SearchResult */
/** @typedef {{ name: string, quantity: string | null, category?: string | null, note?: string | null, typed?: string | null }} Entry */
/** @typedef {{ className: string, label: string, action: () => void }} Offer */

/**
 * Shows the list `list`.
 * @param {import("./app.js").App} app
 * @param {string} list
 */
export function showList(app, list) {
  new ListScreen(app, list).mount();
}

/** The search field: what is typed is searched, and Enter adds it. */
function searchField() {
  return h("input", {
    id: "query",
    type: "search",
    placeholder: "Add or find an item",
    autocomplete: "off",
    autocapitalize: "sentences",
    enterkeyhint: "enter",
    "aria-describedby": "query-help",
    "aria-controls": "items",
  });
}

/**
 * One list's screen: its elements, what it computed of the list (`data`), and the state of its
 * taps, rows and offers. The sheets (item-sheet.js, list-settings.js, sharing-sheet.js,
 * refused-changes.js) are given it and use its app, list, replica, sync, run, current, itemNow,
 * readOnly and role.
 */
/**
 * How a list screen makes, refreshes and compares its rows: an item's name, quantity, note, check,
 * icon and what other devices did to it (news.js), locked or not.
 * @param {ListScreen} screen
 */
function rowMakers(screen) {
  const signature = (/** @type {Item} */ item) => [item.name, item.quantity, item.note, item.checked, screen.locked, screen.app.iconFor(item.name), screen.marks.get(item.id)].join("\u0000");
  const marked = (/** @type {Item} */ item) => (screen.marks.has(item.id) ? { ...item, mark: screen.marks.get(item.id) } : item);
  const make = (/** @type {Item} */ item) => makeRow(marked(item), screen.locked, screen.app.iconFor(item.name));
  const refresh = (/** @type {HTMLElement} */ row, /** @type {Item} */ item) => refreshRow(row, marked(item), screen.locked, screen.app.iconFor(item.name));
  return { make, refresh, signature };
}

export class ListScreen {
  /**
   * @param {import("./app.js").App} app
   * @param {string} list
   */
  constructor(app, list) {
    this.app = app;
    this.list = list;
    this.replica = app.replica;
    this.sync = app.sync;
    this.run = app.run;
    this.input = searchField();
    this.help = h("p", { id: "query-help", class: "hint" }, "Type to search (in:dairy, is:done); Enter adds what you typed. Commas add several: 2 milk, bread.");
    this.whole = h("div", { class: "whole" });
    this.found = h("div", { class: "found off", inert: true, "aria-hidden": "true" });
    this.items = h("div", { id: "items", class: "items", "aria-live": "off" }, this.whole, this.found);
    // Which part of the list is shown, as the CLI's Ctrl-S goes through it: everything, to buy,
    // checked, or one aisle; the same query tokens (is:todo, is:done, in:aisle) narrow the search.
    this.scope = h("select", { id: "scope", "aria-label": "Show", onchange: () => this.render() });
    this.heading = h("h1", { class: "list-title" });
    this.notice = h("p", { class: "hint notice", role: "note" });
    /** Marks of what other devices did since the list was last shown (news.js). @type {Map<string, string>} */
    this.marks = new Map();
    this.newsLine = h("p", { class: "hint news", role: "status", hidden: true });
    this.together = h("div", { class: "together", role: "status", hidden: true }); // who is shopping (together.js)
    // "At shop" (shop-walk.js): the trip this phone is on, the items for other shops one tap away, the usuals.
    this.walk = walkParts(this);
    this.settings = h("button", { class: "link", onclick: () => this.run(() => listSettings(this)) }, "List ⋯");

    // What the items are, computed again only when a register of the list changed (not on every
    // keystroke, nor when only the sync state moved): the items, their groups, the search index.
    /** @type {ListData | null} */
    this.data = null;
    /** Whether the search index is to be built when the phone is next idle. */
    this.indexPending = false;

    // Rows: the whole list's kept by item, the matches' by place; each brought up to date when its signature changes.
    this.locked = this.readOnly();
    const { make, refresh, signature } = rowMakers(this);
    this.rows = new Rows(make, refresh, signature);
    this.slots = new Slots(make, refresh, signature);

    // A tapped item stays where it was for a moment, checked or unchecked in place (a wrong tap is
    // undone where it happened), then moves to its section: id → where it is shown (checked or not).
    /** @type {Map<string, boolean>} */
    this.stay = new Map();
    /** @type {Map<string, ReturnType<typeof setTimeout>>} */
    this.staying = new Map();
    /** Taps on their way to storage: id → the value the last of them writes (a second tap
     * before the first is stored undoes it, as a second tap on a drawn row does).
     * @type {Map<string, boolean>} */
    this.tapped = new Map();

    /** Sections of the whole list (no text typed), kept by key: a group's heading and its rows.
     * @type {Map<string, { heading: HTMLElement, list: HTMLElement }>} */
    this.sections = new Map();
    this.matches = h("ul", { class: "rows", "aria-label": "Matches" });
    /** The matches shown last, for which query (a tapped match keeps its place while it stays). */
    this.lastMatches = { query: "", ids: /** @type {string[]} */ ([]) };
    // How many rows of the whole list are drawn; more when the button at the end is pressed or
    // scrolled into view.
    this.shown = ROWS_AT_A_TIME;
    this.more = h("button", { class: "more", onclick: () => this.showMore() });
    this.offers = h("div", { class: "offers" });
    // The offers are kept by place, as the matches are: a keystroke changes their text, not the
    // buttons (a button made again costs the frame its style and layout). One listener for all.
    /** @type {WeakMap<Element, () => void>} what each offer shown does */
    this.offerActions = new WeakMap();
    this.empty = h("p", { class: "hint empty" }, "Nothing on the list yet. Type a name above and press Enter.");
    this.noMatch = h("p", { class: "hint" }, "No items match.");
    this.moreMatches = h("p", { class: "hint" });

    /** What the screen was last drawn for: drawn again when what the list shows moved (a sync's bookkeeping: not). */
    this.drawnFor = "";
    // A tap shows on its own row at once; the rest of the list (its counts, the status, the toast)
    // is drawn after the browser painted that frame, which then holds one row's change.
    this.held = false;
    /** Whether the search was warmed up since the screen was shown (warmUp). */
    this.warmed = false;
    /** The page's keydown listener while the screen is shown (onUndoKey). */
    this.undoKey = (/** @type {KeyboardEvent} */ event) => this.onUndoKey(event);
    this.listen();
  }

  // MARK: What the list is

  /** The screen's data for the list as it is now, computed again only after a change. */
  current() {
    const state = this.replica.state(this.list);
    const changes = state?.changes ?? -1;
    const data = this.data;
    if (data !== null && data.state === state && data.changes === changes) return data;
    if (data !== null && data.state === state && state && kept(data, state, (item) => this.placedChecked(item))) return data;
    const all = state?.allItems().filter((i) => !i.deleted) ?? [];
    // A check, a quantity or a category keeps every name: the index takes the items again, and
    // the order by name stands (only the names' order needs a sort).
    const sameNames = data?.index?.refresh(all) === true;
    const byID = new Map(all.map((i) => [i.id, i]));
    const sorted = sameNames && data?.byName ? data.byName : sortedForDisplay(all.map((i) => ({ ...i, checked: false })));
    const byName = sorted.map((i) => /** @type {Item} */ (byID.get(i.id)));
    /** @type {Map<string, { all: number, byName: number }>} */
    const at = new Map(all.map((item, i) => [item.id, { all: i, byName: 0 }]));
    byName.forEach((item, i) => (/** @type {{ byName: number }} */ (at.get(item.id)).byName = i));
    const index = sameNames ? data?.index ?? null : null;
    /** @type {ListData} */
    const made = { state: /** @type {import("./state.js").ListState} */ (state), changes, all, byID, byName, at, index, groups: null, checked: null, spellings: null };
    this.data = made;
    if (!sameNames) this.scheduleIndex();
    this.rows.keepOnly(new Set(byID.keys()));
    return made;
  }

  /** The search index of the list, made now when it is not yet. */
  index() {
    const d = this.current();
    if (d.index === null) d.index = new Index(d.all, this.replica.lastUsed(this.list));
    return d.index;
  }

  /** The whole list's groups (aisles, in the list's order) and its checked items, once per change. */
  grouped() {
    const d = this.current();
    if (d.groups === null || d.checked === null) {
      // In sortedForDisplay's order without sorting again: the items by name, to buy then checked.
      // At a shop: its order, each item in its aisle there, those for other shops left out.
      const walked = walk(this, d.byName.filter((i) => !this.placedChecked(i)), this.replica.state(this.list)?.info.aisles ?? []);
      const toBuy = walked.items;
      this.walk.hidden = walked.hidden;
      const groups = toBuy.some((i) => i.category !== null) ? groupByAisle(toBuy, walked.aisles, true) : [{ category: null, items: toBuy }];
      d.groups = groups.map((g) => ({ key: g.category === null ? "" : "aisle:" + normalize(g.category), ...g }));
      d.checked = d.byName.filter((item) => this.placedChecked(item));
    }
    return { groups: d.groups, checked: d.checked };
  }

  /** Builds the search index when the phone is idle after a change, not at the next keystroke. */
  scheduleIndex() {
    if (this.indexPending) return;
    this.indexPending = true;
    whenIdle(() => {
      this.indexPending = false;
      if (this.app.isShowing(this.list)) this.index();
    });
  }

  /** This account's role on the list. */
  role() {
    return this.replica.syncState(this.list)?.role;
  }

  /** Whether the list takes no changes here: a viewer's, no longer shared, or archived. */
  readOnly() {
    return this.role() === "viewer" || this.replica.syncState(this.list)?.noLongerMember === true || this.replica.state(this.list)?.info.archived === true;
  }

  /**
   * The item as it is now (a row's closure would hold it as it was).
   * @param {string} id
   */
  itemNow(id) {
    const item = this.replica.state(this.list)?.item(id);
    if (item === undefined || item.deleted) throw new Error("that item is no longer on the list");
    return item;
  }

  /**
   * Whether the whole list shows `item` among the checked ones: as it was tapped, while it stays.
   * @param {Item} item
   */
  placedChecked(item) {
    const stays = this.stay.get(item.id);
    return stays ?? item.checked;
  }

  // MARK: Writes

  /**
   * Shows a local write as soon as it is stored: the replica stores it first and applies it in
   * memory after, so nothing is drawn that a reload could take back.
   * @template T
   * @param {Promise<T>} writing
   */
  async drawn(writing) {
    const result = await writing;
    this.render();
    return result;
  }

  /**
   * Checks or unchecks an item; it stays in place for a moment.
   * @param {string} id
   */
  async toggle(id) {
    const item = this.itemNow(id);
    const checked = !(this.tapped.get(id) ?? item.checked);
    this.tapped.set(id, checked);
    if (!this.stay.has(id)) this.stay.set(id, item.checked);
    clearTimeout(this.staying.get(id));
    this.staying.set(id, setTimeout(() => {
      this.stay.delete(id);
      this.staying.delete(id);
      if (this.data !== null) this.data.groups = null;
      if (this.app.isShowing(this.list)) this.render();
    }, STAY_MS));
    // Stored first (IndexedDB's commit), then the row: what is drawn survives a reload.
    try {
      await (checked ? this.replica.check(this.list, id) : this.replica.uncheck(this.list, id));
    } finally {
      if (this.tapped.get(id) === checked) this.tapped.delete(id);
    }
    this.drawTheRestAfterPaint();
    // Through the rows' keepers, which remember what the row shows: a row refreshed behind their
    // back kept a check drawn after an add had unchecked the item (the add's render saw nothing
    // to change).
    const now = this.replica.state(this.list)?.item(id);
    if (now !== undefined) {
      for (const row of /** @type {NodeListOf<HTMLElement>} */ (this.items.querySelectorAll(`li.item[data-id="${CSS.escape(id)}"]`))) {
        (this.matches.contains(row) ? this.slots : this.rows).show(row, now);
      }
    }
    this.sync.send(this.list);
    this.app.showToast(`${checked ? "Checked" : "Unchecked"} ${item.name}`, this.list);
  }

  /** @param {string} id */
  async removeItem(id) {
    const item = this.itemNow(id);
    await this.drawn(this.replica.remove(this.list, id));
    this.sync.send(this.list);
    this.app.showToast(`Removed ${item.name}`, this.list);
  }

  /** @param {Entry[]} entries */
  async addEntries(entries) {
    const writing = this.replica.add(this.list, entries);
    this.input.value = "";
    const results = await this.drawn(writing);
    this.sync.send(this.list);
    this.app.showToast(addMessage(results), this.list);
  }

  /**
   * Removes a list that is no longer shared from this device; with changes that were not sent,
   * only once the person has seen them and said so.
   * @param {string} waiting what the notice says of them ("" when none)
   */
  async removeFromDevice(waiting) {
    if (waiting !== "" && !(await confirmDialog("Remove it from this device?", `${waiting}They go with it.`, "Remove"))) return;
    await this.replica.removeList(this.list);
    this.app.go("#/");
  }

  // MARK: Drawing

  /**
   * The section `key` of the whole list, its heading and label brought up to date.
   * @param {string} key
   * @param {string} title
   * @param {string} label
   */
  section(key, title, label) {
    let s = this.sections.get(key);
    if (s === undefined) {
      s = { heading: h("h2", { class: "group" }), list: h("ul", { class: key === "checked" ? "rows done" : "rows" }) };
      this.sections.set(key, s);
    }
    if (s.heading.textContent !== title) s.heading.textContent = title;
    if (s.list.getAttribute("aria-label") !== label) s.list.setAttribute("aria-label", label);
    return s;
  }

  showMore() {
    this.shown += ROWS_AT_A_TIME;
    this.render();
  }

  /** @param {Offer[]} wanted */
  showOffers(wanted) {
    const have = [...this.offers.children];
    wanted.forEach((offer, place) => {
      let button = have[place];
      if (button === undefined) {
        button = h("button", {});
        this.offers.append(button);
      }
      if (button.className !== offer.className) button.className = offer.className;
      if (button.textContent !== offer.label) button.textContent = offer.label;
      this.offerActions.set(button, offer.action);
    });
    for (const extra of have.slice(wanted.length)) extra.remove();
  }

  drawTheRestAfterPaint() {
    if (this.held) return;
    this.held = true;
    nextPaint().then(() => {
      this.held = false;
      if (this.app.isShowing(this.list)) this.update();
    });
  }

  /** The replica changed: drawn again when what the list shows moved. */
  update() {
    if (this.held) return;
    const state = this.replica.state(this.list);
    const where = this.replica.syncState(this.list);
    const now = [state?.changes, where?.noLongerMember, where?.role, this.input.value, this.app.catalogueGeneration()].join("\u0000");
    showTogether(this);
    showWalk(this);
    if (this.replica.meta.news?.[this.list]?.length) this.hearNews();
    if (now === this.drawnFor && state) return this.app.updateStatus();
    this.render();
  }

  /** Takes what other devices did since the list was last shown: marks its rows and says it. */
  hearNews() {
    this.app.news.take(this.list).then((heard) => {
      if (heard === null || !this.app.isShowing(this.list)) return;
      for (const [item, mark] of heard.marks) this.marks.set(item, mark);
      const lines = [...(this.newsLine.textContent ? [this.newsLine.textContent] : []), ...heard.lines];
      this.newsLine.textContent = lines.join(" · ");
      this.newsLine.hidden = lines.length === 0;
      this.drawnFor = "";
      this.update();
    }).catch(() => {});
  }

  /** Draws what the query asks for, keeping every row that did not change. */
  render() {
    // A row that moves between sections leaves the document for a moment: focus goes back to it.
    const focusedRow = /** @type {HTMLElement | null} */ (document.activeElement?.closest?.("#items li.item") ?? null);
    const focusedButton = document.activeElement;
    const state = this.replica.state(this.list);
    if (!state) return this.app.go("#/");
    const info = state.info;
    if (this.heading.textContent !== info.title) this.heading.textContent = info.title;
    if (document.title !== `${info.title} · Basket`) document.title = `${info.title} · Basket`;
    const gone = this.replica.syncState(this.list)?.noLongerMember === true;
    this.locked = this.readOnly();
    this.showNotice(gone, info);
    if (this.input.disabled !== this.locked) {
      this.input.disabled = this.locked;
      this.input.placeholder = this.locked ? "Find an item" : "Add or find an item";
    }
    if (this.settings.hidden !== gone) this.settings.hidden = gone;
    const text = this.input.value;
    this.drawnFor = [state.changes, gone, this.replica.syncState(this.list)?.role, text, this.app.catalogueGeneration()].join("\u0000");
    this.refreshScopes();
    const searching = !(text.trim() === "" && this.scope.value === "");
    const children = searching ? this.matchesShown(text) : this.wholeList();
    // The whole list and the matches are both kept in the document, the one not asked for
    // hidden with its layout kept (content-visibility): the first letter typed and the query
    // cleared show the other at once, without laying out its rows again.
    reconcile(searching ? this.found : this.whole, children);
    if (this.whole.classList.contains("off") !== searching) {
      for (const [part, off] of /** @type {[HTMLElement, boolean][]} */ ([[this.whole, searching], [this.found, !searching]])) {
        part.classList.toggle("off", off);
        part.inert = off;
        if (off) part.setAttribute("aria-hidden", "true");
        else part.removeAttribute("aria-hidden");
      }
    }
    // A row moved between sections keeps the keyboard where it was.
    if (focusedRow && focusedButton instanceof HTMLElement && document.activeElement !== focusedButton && focusedRow.isConnected) focusedButton.focus();
    this.app.updateStatus();
  }

  /**
   * The whole list's parts when nothing is typed: its aisles in order, the checked items, and
   * the button that draws more.
   * @returns {Node[]}
   */
  wholeList() {
    /** @type {Node[]} */
    const children = [];
    const { all } = this.current();
    const { groups, checked } = this.grouped();
    if (all.length === 0) children.push(this.empty);
    let room = this.shown;
    const unknown = walkedShop(this) === null ? "No category" : "Unknown aisle";
    for (const group of groups) {
      if (room <= 0) break;
      const s = this.section(group.key, group.category ?? unknown, group.category ?? "To buy");
      if (groups.length > 1 || group.category !== null) children.push(s.heading);
      this.rows.render(s.list, group.items.slice(0, room));
      room -= group.items.length;
      children.push(s.list);
    }
    const others = otherShopsButton(this, this.walk.hidden);
    if (others !== null) children.push(others);
    if (checked.length > 0 && room > 0) {
      const s = this.section("checked", `Checked (${checked.length})`, "Checked");
      this.rows.render(s.list, checked.slice(0, room));
      room -= checked.length;
      children.push(s.heading, s.list);
    }
    if (room < 0) {
      const left = -room;
      this.more.textContent = `Show ${Math.min(left, ROWS_AT_A_TIME)} more of ${left} (${all.length} items in all)`;
      children.push(this.more);
    }
    return children;
  }

  /**
   * The parts shown for what is typed (or the scope chosen): the offers, the matches, and what
   * says there are more or none.
   * @param {string} text
   * @returns {Node[]}
   */
  matchesShown(text) {
    /** @type {Node[]} */
    const children = [];
    const { byID } = this.current();
    const scope = this.scope.value;
    // One more than is shown: whether to say there are more.
    const result = this.index().search(new Query(scope === "" ? text : `${text} ${scope}`.trim()), MATCHES_SHOWN + 1);
    this.showOffers(text.trim() === "" ? [] : this.offersFor(text, result));
    children.push(this.offers);
    let shownMatches = result.matches.slice(0, MATCHES_SHOWN).map((m) => byID.get(m.item.id) ?? /** @type {Item} */ (m.item));
    // A tapped match stays at its place too while it stays (a check moves an item after the
    // unchecked ones it ties with): the same query keeps the order it had, for the same items.
    const query = `${text}\u0000${scope}`;
    if (this.stay.size > 0 && this.lastMatches.query === query) {
      const kept = this.lastMatches.ids.map((id) => byID.get(id)).filter((item) => item !== undefined).map((item) => /** @type {Item} */ (item));
      const same = new Set(kept.map((item) => item.id));
      if (kept.length === shownMatches.length && shownMatches.every((item) => same.has(item.id))) shownMatches = kept;
    }
    this.lastMatches = { query, ids: shownMatches.map((item) => item.id) };
    this.slots.render(this.matches, shownMatches);
    children.push(this.matches);
    if (result.matches.length > MATCHES_SHOWN) {
      this.moreMatches.textContent = "More items match: type more of the name to find them.";
      children.push(this.moreMatches);
    }
    if (result.matches.length === 0 && this.offers.childElementCount === 0) children.push(this.noMatch);
    return children;
  }

  /** The scopes: everything, to buy, checked, then each aisle of the list (kept as chosen). */
  refreshScopes() {
    const aisles = this.grouped().groups.flatMap((g) => (g.category === null ? [] : [g.category]));
    const wanted = [["", "Everything"], ["is:todo", "To buy"], ["is:done", "Checked"], ...aisles.map((a) => [`in:${a.split(" ").join("-")}`, a])];
    const signature = wanted.map(([v]) => v).join("\n");
    const scope = this.scope;
    if (scope.dataset.signature === signature) return;
    const chosen = scope.value;
    scope.replaceChildren(...wanted.map(([value, label]) => h("option", { value }, label)));
    scope.dataset.signature = signature;
    scope.value = wanted.some(([v]) => v === chosen) ? chosen : "";
  }

  /**
   * The offers above the matches: add what was typed, "did you mean …?", what the list had
   * before and the catalogue's, each one tap.
   * @param {string} text
   * @param {SearchResult} result
   * @returns {Offer[]}
   */
  offersFor(text, result) {
    if (this.locked) return [];
    const entries = entriesFor(this, text);
    if (entries === null) return [];
    const add = (/** @type {Entry[]} */ what) => () => this.run(() => this.addEntries(what));
    if (entries.length > 1) {
      const label = entries.map((e) => (e.quantity ? `${e.name} (${e.quantity})` : e.name)).join(", ");
      return [{ className: "offer", label: `Add ${entries.length} items: ${label}`, action: add(entries) }];
    }
    if (result.offer === null) return [];
    const e = entries[0];
    const out = [{ className: "offer", label: `Add “${e.name}”${e.quantity ? ` (${e.quantity})` : ""}`, action: add(entries) }];
    // The list's closest item, items had before and the catalogue's names, by how each matches
    // (Offers): a weak match on the list never hides the catalogue.
    const meant = didYouMean(result) === null ? null : result.matches[0];
    for (const o of rankedOffers(this, text, meant)) {
      out.push(
        o.source === "list"
          ? { className: "offer meant", label: `Did you mean “${o.name}”?`, action: add([{ name: o.name, quantity: e.quantity }]) }
          : {
              className: "offer suggestion",
              label: o.source === "before" ? `↺ ${o.name} (had it before)` : o.source === "due" ? `+ ${o.name} (due)` : `+ ${o.name}`,
              action: add([{ name: o.name, quantity: e.quantity, category: this.app.aisleFor(this.list, o.name) }]),
            },
      );
    }
    return out;
  }

  /**
   * The notice above the list: no longer shared, archived or a viewer's, with what waits here
   * that the server will not take and the ways out.
   * @param {boolean} gone
   * @param {{ archived: boolean }} info
   */
  showNotice(gone, info) {
    const viewer = !gone && this.role() === "viewer";
    // What waits here that the server will not take: shown, with the ways out (refused-changes.js).
    const refused = gone || viewer ? refusedNotice(this, gone) : { text: "", buttons: [] };
    const text = (gone
      ? "This list is no longer shared with you: it stays here, read-only. "
      : info.archived
        ? "This list is archived: read-only. "
        : viewer
          ? "You can view this list; its owners can let you change it. "
          : "") + refused.text;
    const notice = this.notice;
    if (notice.dataset.text === text) return;
    notice.dataset.text = text;
    const buttons = [
      ...refused.buttons,
      gone ? h("button", { class: "link", onclick: () => this.run(() => this.removeFromDevice(refused.text)) }, "Remove it from this device") : null,
      info.archived && !gone && this.role() === "owner" ? h("button", { class: "link", onclick: () => this.run(() => setArchived(this, false)) }, "Unarchive") : null,
    ];
    notice.replaceChildren(text, ...buttons.flatMap((b) => (b === null ? [] : [b])));
    notice.hidden = text === "";
  }

  // MARK: Listening

  /** The screen's listeners: rows, offers, the end of the list, the search field. */
  listen() {
    listenToRows(this.items, {
      run: this.run,
      toggle: (id) => this.toggle(id),
      edit: (id) => editItem(this, id),
      remove: (id) => this.removeItem(id),
      readOnly: () => this.readOnly(),
    });
    this.offers.addEventListener("keydown", (event) => {
      if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
      const buttons = [...this.offers.querySelectorAll("button")];
      const at = buttons.indexOf(/** @type {HTMLButtonElement} */ (event.target));
      if (at < 0) return;
      event.preventDefault();
      const to = event.key === "ArrowDown" ? buttons[Math.min(at + 1, buttons.length - 1)] : at <= 1 ? this.input : buttons[at - 1];
      to.focus();
    });
    this.offers.addEventListener("click", (event) => {
      const button = /** @type {Element} */ (event.target).closest("button");
      const action = button === null ? undefined : this.offerActions.get(button);
      if (action !== undefined) action();
    });
    if (typeof IntersectionObserver === "function") {
      new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting) && this.more.isConnected) this.showMore();
      }, { rootMargin: "400px" }).observe(this.more);
    }
    this.input.addEventListener("input", () => this.render());
    this.input.addEventListener("focus", () => this.warmUp());
    this.input.addEventListener("keydown", (event) => this.onKey(event));
    // A recipe or a chat message pasted: previewed, one item per line, before anything is added.
    this.input.addEventListener("paste", (event) => {
      const text = event.clipboardData?.getData("text/plain") ?? "";
      if (this.readOnly() || !isSeveralLines(text)) return;
      event.preventDefault();
      showPastePreview(this, text);
    });
  }

  /**
   * Someone about to type: the search index is made now if it is not yet (not at the first key),
   * and while the keyboard comes up the search and the offers run, in idle moments, on what
   * warmUpTexts gives (the list's commonest initials, then beginnings of its names, as if typed):
   * the first keys of a page otherwise find the search's code not yet compiled by the browser (a
   * cold search takes 5–10 times as long as a warm one), and the first letters' answers not yet
   * kept. It stops at the first key typed or when the field loses focus: it never holds a
   * keystroke up for longer than one search.
   */
  warmUp() {
    if (!this.app.isShowing(this.list)) return;
    const made = this.index();
    if (this.warmed) return;
    this.warmed = true;
    const texts = warmUpTexts(this.current().all);
    let next = 0;
    const stop = () => (next = texts.length);
    this.input.addEventListener("input", stop, { once: true });
    this.input.addEventListener("blur", stop, { once: true });
    /** @param {() => number} timeLeft */
    const work = (timeLeft) => {
      while (next < texts.length && timeLeft() > 2 && this.app.isShowing(this.list)) {
        const text = texts[next++];
        this.offersFor(text, made.search(new Query(text), MATCHES_SHOWN + 1));
      }
      if (next < texts.length && this.app.isShowing(this.list)) whenIdle(work);
    };
    whenIdle(work);
  }

  /**
   * Ctrl+Z (⌘Z) undoes the last change on this list, unless the field has text of its own to undo.
   * @param {KeyboardEvent} event
   */
  onUndoKey(event) {
    if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "z" || event.shiftKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement && target.value !== "") return;
    if (document.querySelector("dialog[open]")) return;
    event.preventDefault();
    this.run(() => this.app.undo(this.list));
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (event.key === "Escape") {
      this.input.value = "";
      this.render();
    }
    // ↓ goes to what is offered beside the offer to add ("Did you mean …?" first when it ranks
    // first), as in the terminal; ↑ and ↓ then move among the offers, ↑ from the first back here.
    if (event.key === "ArrowDown") {
      const buttons = /** @type {HTMLButtonElement[]} */ ([...this.offers.querySelectorAll("button")]);
      const next = buttons.length > 1 ? buttons[1] : buttons[0];
      if (next !== undefined) {
        event.preventDefault();
        next.focus();
      }
    }
    if (event.key !== "Enter") return;
    event.preventDefault();
    const entries = entriesFor(this, this.input.value);
    if (entries === null || this.readOnly()) return;
    this.run(() => this.addEntries(entries));
  }

  /** Puts the screen on the page. */
  mount() {
    const fine = typeof matchMedia === "function" && matchMedia("(pointer: fine)").matches;
    document.addEventListener("keydown", this.undoKey);
    this.app.mount(
      {
        name: "list",
        list: this.list,
        update: () => this.update(),
        // A keyboard goes to the field; a phone's screen reader to the title (no keyboard popping up).
        focus: fine && !this.readOnly() ? this.input : this.heading,
        leave: () => document.removeEventListener("keydown", this.undoKey),
        fileInbox: () => fileInbox(this).catch(() => {}),
      },
      h(
        "header",
        { class: "bar list-bar" },
        h("a", { href: "#/", class: "back", "aria-label": "All lists" }, "‹ Lists"),
        h("span", { class: "spacer" }),
        h("button", { class: "link", onclick: () => this.run(() => share(this)) }, "Share"),
        this.walk.usuals,
        this.settings,
        this.heading,
      ),
      h("div", { class: "search" }, h("label", { for: "query", class: "visually-hidden" }, "Add or find an item"), h("div", { class: "row" }, this.input, this.scope)),
      this.help,
      this.together,
      this.walk.element,
      this.newsLine,
      this.notice,
      this.items,
      this.app.statusLine(),
    );
    this.update();
    hearTogether(this);
    fileInbox(this).catch(() => {});
    // Text shared from another app (the PWA's share target) opens the same preview as a paste.
    const shared = this.readOnly() ? null : takeShared();
    if (shared !== null) showPastePreview(this, shared.text, shared.title);
  }
}
