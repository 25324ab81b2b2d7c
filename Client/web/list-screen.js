// One list on the phone: search-as-you-type over its items, Enter adds what was typed, the rows
// kept by id (a tap redraws one row, not 2,000), and everything the CLI can do with a list: edit
// an item, aisles and their order, clear checked, members and invites, archive, delete or leave.
import { h, changes, openDialog, field, when, Rows, Slots, reconcile, nextPaint, whenIdle } from "./ui.js";
import { Query } from "./query.js";
import { Index } from "./search-index.js";
import { groupByAisle, sortedForDisplay } from "./aisle-group.js";
import { didYouMean } from "./search.js";
import { editItem } from "./item-sheet.js";
import { listSettings, setArchived } from "./list-settings.js";
import { share } from "./sharing-sheet.js";
import { entriesFor, suggestionsFor, warmUpTexts } from "./list-entries.js";
import { makeRow, refreshRow, listenToRows } from "./item-row.js";
import { kept } from "./list-data.js";
import { parseAll, spellingTable, resolveSpellingsWith } from "./entry.js";
import { normalize } from "./key.js";
import { milliseconds } from "./clock.js";
import { LIST_ITEM } from "./ids.js";
import { addMessage } from "./replica-types.js";
import { request, Unreachable } from "./api.js";
import { refusedNotice } from "./refused-changes.js";
import { confirmDialog } from "./list-settings.js";
import * as catalogue from "./catalogue.js";

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


/**
 * Shows the list `list`.
 * @param {import("./app.js").App} app
 * @param {string} list
 */
export function showList(app, list) {
  const { replica, sync, run } = app;
  const input = /** @type {HTMLInputElement} */ (
    h("input", {
      id: "query",
      type: "search",
      placeholder: "Add or find an item",
      autocomplete: "off",
      autocapitalize: "sentences",
      enterkeyhint: "enter",
      "aria-describedby": "query-help",
      "aria-controls": "items",
    })
  );
  const help = h("p", { id: "query-help", class: "hint" }, "Type to search (in:dairy, is:done); Enter adds what you typed. Commas add several: 2 milk, bread.");
  const whole = h("div", { class: "whole" });
  const found = h("div", { class: "found off", inert: true, "aria-hidden": "true" });
  const items = h("div", { id: "items", class: "items", "aria-live": "off" }, whole, found);
  // Which part of the list is shown, as the CLI's Ctrl-S goes through it: everything, to buy,
  // checked, or one aisle; the same query tokens (is:todo, is:done, in:aisle) narrow the search.
  const scope = /** @type {HTMLSelectElement} */ (h("select", { id: "scope", "aria-label": "Show", onchange: () => render() }));
  const heading = h("h1", { class: "list-title" });
  const notice = h("p", { class: "hint notice", role: "note" });

  // What the items are, computed again only when a register of the list changed (not on every
  // keystroke, nor when only the sync state moved): the items, their groups, the search index.
  /**
   * @type {{ state: any, changes: number, all: any[], byID: Map<string, any>, index: Index | null,
   *   groups: { key: string, category: string | null, items: any[] }[] | null, checked: any[] | null,
   *   spellings: any, byName: any[], at: Map<string, { all: number, byName: number }> } | null}
   */
  let data = null;
  function current() {
    const state = replica.state(list);
    const changes = state?.changes ?? -1;
    if (data !== null && data.state === state && data.changes === changes) return data;
    if (data !== null && data.state === state && state && kept(data, state, placedChecked)) return data;
    const all = state?.allItems().filter((i) => !i.deleted) ?? [];
    // A check, a quantity or a category keeps every name: the index takes the items again, and
    // the order by name stands (only the names' order needs a sort).
    const sameNames = data?.index?.refresh(all) === true;
    const byID = new Map(all.map((i) => [i.id, i]));
    const byName = (sameNames && data?.byName ? data.byName : sortedForDisplay(all.map((i) => ({ ...i, checked: false })))).map((i) => byID.get(i.id));
    /** @type {Map<string, { all: number, byName: number }>} */
    const at = new Map(all.map((item, i) => [item.id, { all: i, byName: 0 }]));
    byName.forEach((item, i) => (/** @type {any} */ (at.get(item.id)).byName = i));
    data = { state, changes, all, byID, byName, at, index: sameNames ? data?.index ?? null : null, groups: null, checked: null, spellings: null };
    if (!sameNames) scheduleIndex();
    rows.keepOnly(new Set(byID.keys()));
    return data;
  }
  function index() {
    const d = current();
    if (d.index === null) d.index = new Index(d.all, replica.lastUsed(list));
    return d.index;
  }
  /** The whole list's groups (aisles, in the list's order) and its checked items, once per change. */
  function grouped() {
    const d = current();
    if (d.groups === null) {
      // In sortedForDisplay's order without sorting again: the items by name, to buy then checked.
      const toBuy = d.byName.filter((i) => !placedChecked(i));
      const aisles = replica.state(list)?.info.aisles ?? [];
      const groups = toBuy.some((i) => i.category !== null) ? groupByAisle(toBuy, aisles, true) : [{ category: null, items: toBuy }];
      d.groups = groups.map((g) => ({ key: g.category === null ? "" : "aisle:" + normalize(g.category), ...g }));
      d.checked = d.byName.filter(placedChecked);
    }
    return { groups: d.groups, checked: /** @type {any[]} */ (d.checked) };
  }
  // The search index is built when the phone is idle after a change, not at the next keystroke.
  let indexPending = false;
  function scheduleIndex() {
    if (indexPending) return;
    indexPending = true;
    const build = () => {
      indexPending = false;
      if (app.isShowing(list)) index();
    };
    whenIdle(build);
  }

  const role = () => replica.sync(list)?.role;
  const readOnly = () => role() === "viewer" || replica.sync(list)?.noLongerMember === true || replica.state(list)?.info.archived === true;

  // MARK: Rows

  let locked = readOnly();
  const rowSignature = (/** @type {any} */ item) => [item.name, item.quantity, item.note, item.checked, locked].join("\u0000");
  // The whole list's rows are kept by item (a tap moves one); the matches' rows by place.
  const makeRowNow = (/** @type {any} */ item) => makeRow(item, locked);
  const refreshRowNow = (/** @type {HTMLElement} */ row, /** @type {any} */ item) => refreshRow(row, item, locked);
  const rows = new Rows(makeRowNow, refreshRowNow, rowSignature);
  const slots = new Slots(makeRowNow, refreshRowNow, rowSignature);

  listenToRows(items, { run, toggle, edit: (id) => editItem(screen, id), remove: removeItem, readOnly });

  /** The item as it is now (a row's closure would hold it as it was). */
  function itemNow(id) {
    const item = replica.state(list)?.item(id);
    if (item === undefined || item.deleted) throw new Error("that item is no longer on the list");
    return item;
  }

  /**
   * Shows a local write as soon as it is stored: the replica stores it first and applies it in
   * memory after, so nothing is drawn that a reload could take back (issue 42).
   * @param {Promise<any>} writing
   */
  async function drawn(writing) {
    const result = await writing;
    render();
    return result;
  }

  // A tapped item stays where it was for a moment, checked or unchecked in place (a wrong tap is
  // undone where it happened), then moves to its section: id → where it is shown (checked or not).
  /** @type {Map<string, boolean>} */
  const stay = new Map();
  /** @type {Map<string, ReturnType<typeof setTimeout>>} */
  const staying = new Map();
  /**
   * Whether the whole list shows `item` among the checked ones: as it was tapped, while it stays.
   * @param {any} item
   */
  function placedChecked(item) {
    return stay.has(item.id) ? /** @type {boolean} */ (stay.get(item.id)) : item.checked;
  }
  /** Taps on their way to storage: id → the value the last of them writes (a second tap
   * before the first is stored undoes it, as a second tap on a drawn row does). */
  /** @type {Map<string, boolean>} */
  const tapped = new Map();
  async function toggle(id) {
    const item = itemNow(id);
    const checked = !(tapped.get(id) ?? item.checked);
    tapped.set(id, checked);
    if (!stay.has(id)) stay.set(id, item.checked);
    clearTimeout(staying.get(id));
    staying.set(id, setTimeout(() => {
      stay.delete(id);
      staying.delete(id);
      if (data !== null) data.groups = null;
      if (app.isShowing(list)) render();
    }, STAY_MS));
    // Stored first (IndexedDB's commit), then the row: what is drawn survives a reload.
    try {
      await replica.setChecked(list, id, checked);
    } finally {
      if (tapped.get(id) === checked) tapped.delete(id);
    }
    drawTheRestAfterPaint();
    const now = replica.state(list)?.item(id);
    if (now !== undefined) {
      for (const row of items.querySelectorAll(`li.item[data-id="${CSS.escape(id)}"]`)) refreshRowNow(/** @type {HTMLElement} */ (row), now);
    }
    sync.kick(list);
    app.showToast(`${checked ? "Checked" : "Unchecked"} ${item.name}`, list);
  }

  async function removeItem(id) {
    const item = itemNow(id);
    await drawn(replica.remove(list, id));
    sync.kick(list);
    app.showToast(`Removed ${item.name}`, list);
  }

  // MARK: Adding

  async function addEntries(entries) {
    const writing = replica.add(list, entries);
    input.value = "";
    const results = await drawn(writing);
    sync.kick(list);
    app.showToast(addMessage(results), list);
  }

  // MARK: Drawing

  /** Sections of the whole list (no text typed), kept by key: a group's heading and its rows. */
  /** @type {Map<string, { heading: HTMLElement, list: HTMLElement }>} */
  const sections = new Map();
  function section(key, title, label) {
    let s = sections.get(key);
    if (s === undefined) {
      s = { heading: h("h2", { class: "group" }), list: h("ul", { class: key === "checked" ? "rows done" : "rows" }) };
      sections.set(key, s);
    }
    if (s.heading.textContent !== title) s.heading.textContent = title;
    if (s.list.getAttribute("aria-label") !== label) s.list.setAttribute("aria-label", label);
    return s;
  }
  const matches = h("ul", { class: "rows", "aria-label": "Matches" });
  /** The matches shown last, for which query (a tapped match keeps its place while it stays). */
  let lastMatches = { query: "", ids: /** @type {string[]} */ ([]) };
  // How many rows of the whole list are drawn; more when the button at the end is pressed or
  // scrolled into view.
  let shown = ROWS_AT_A_TIME;
  const more = h("button", { class: "more", onclick: () => showMore() });
  function showMore() {
    shown += ROWS_AT_A_TIME;
    render();
  }
  if (typeof IntersectionObserver === "function") {
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && more.isConnected) showMore();
    }, { rootMargin: "400px" }).observe(more);
  }
  const offers = h("div", { class: "offers" });
  // The offers are kept by place, as the matches are: a keystroke changes their text, not the
  // buttons (a button made again costs the frame its style and layout). One listener for all.
  /** @type {WeakMap<Element, () => void>} what each offer shown does */
  const offerActions = new WeakMap();
  offers.addEventListener("click", (event) => {
    const button = /** @type {Element} */ (event.target).closest("button");
    const action = button === null ? undefined : offerActions.get(button);
    if (action !== undefined) action();
  });
  /** @param {{ className: string, label: string, action: () => void }[]} wanted */
  function showOffers(wanted) {
    const have = [...offers.children];
    wanted.forEach((offer, place) => {
      let button = have[place];
      if (button === undefined) {
        button = h("button", {});
        offers.append(button);
      }
      if (button.className !== offer.className) button.className = offer.className;
      if (button.textContent !== offer.label) button.textContent = offer.label;
      offerActions.set(button, offer.action);
    });
    for (const extra of have.slice(wanted.length)) extra.remove();
  }
  const empty = h("p", { class: "hint empty" }, "Nothing on the list yet. Type a name above and press Enter.");
  const noMatch = h("p", { class: "hint" }, "No items match.");
  const moreMatches = h("p", { class: "hint" });

  /** The replica changed: drawn again when what the list shows moved (a sync's bookkeeping: not). */
  let drawnFor = "";
  // A tap shows on its own row at once; the rest of the list (its counts, the status, the toast)
  // is drawn after the browser painted that frame, which then holds one row's change.
  let held = false;
  function drawTheRestAfterPaint() {
    if (held) return;
    held = true;
    nextPaint().then(() => {
      held = false;
      if (app.isShowing(list)) update();
    });
  }
  function update() {
    if (held) return;
    const state = replica.state(list);
    const where = replica.sync(list);
    const now = [state?.changes, where?.noLongerMember, where?.role, input.value].join("\u0000");
    if (now === drawnFor && state) return app.updateStatus();
    render();
  }

  /** Draws what the query asks for, keeping every row that did not change. */
  function render() {
    // A row that moves between sections leaves the document for a moment: focus goes back to it.
    const focusedRow = /** @type {HTMLElement | null} */ (document.activeElement?.closest?.("#items li.item") ?? null);
    const focusedButton = document.activeElement;
    const state = replica.state(list);
    if (!state) return app.go("#/");
    const info = state.info;
    if (heading.textContent !== info.title) heading.textContent = info.title;
    if (document.title !== `${info.title} · Basket`) document.title = `${info.title} · Basket`;
    const gone = replica.sync(list)?.noLongerMember === true;
    const nowLocked = readOnly();
    // A row's signature holds `locked`: each row shown is brought up to date by the renders below.
    locked = nowLocked;
    showNotice(gone, info);
    if (input.disabled !== locked) {
      input.disabled = locked;
      input.placeholder = locked ? "Find an item" : "Add or find an item";
    }
    if (settings.hidden !== gone) settings.hidden = gone;
    const { all, byID } = current();
    const text = input.value;
    drawnFor = [state.changes, gone, replica.sync(list)?.role, text].join("\u0000");
    refreshScopes();
    /** @type {Node[]} */
    const children = [];
    const searching = !(text.trim() === "" && scope.value === "");
    if (!searching) {
      const { groups, checked } = grouped();
      if (all.length === 0) children.push(empty);
      let room = shown;
      for (const group of groups) {
        if (room <= 0) break;
        const s = section(group.key, group.category ?? "No category", group.category ?? "To buy");
        if (groups.length > 1 || group.category !== null) children.push(s.heading);
        rows.render(s.list, group.items.slice(0, room));
        room -= group.items.length;
        children.push(s.list);
      }
      if (checked.length > 0 && room > 0) {
        const s = section("checked", `Checked (${checked.length})`, "Checked");
        rows.render(s.list, checked.slice(0, room));
        room -= checked.length;
        children.push(s.heading, s.list);
      }
      if (room < 0) {
        const left = -room;
        more.textContent = `Show ${Math.min(left, ROWS_AT_A_TIME)} more of ${left} (${all.length} items in all)`;
        children.push(more);
      }
    } else {
      // One more than is shown: whether to say there are more.
      const result = index().search(new Query(scope.value === "" ? text : `${text} ${scope.value}`.trim()), MATCHES_SHOWN + 1);
      showOffers(text.trim() === "" ? [] : offersFor(text, result));
      children.push(offers);
      let shownMatches = result.matches.slice(0, MATCHES_SHOWN).map((m) => byID.get(m.item.id) ?? m.item);
      // A tapped match stays at its place too while it stays (a check moves an item after the
      // unchecked ones it ties with): the same query keeps the order it had, for the same items.
      const query = `${text}\u0000${scope.value}`;
      if (stay.size > 0 && lastMatches.query === query) {
        const kept = lastMatches.ids.map((id) => byID.get(id)).filter((item) => item !== undefined);
        const same = new Set(kept.map((item) => item.id));
        if (kept.length === shownMatches.length && shownMatches.every((item) => same.has(item.id))) shownMatches = kept;
      }
      lastMatches = { query, ids: shownMatches.map((item) => item.id) };
      slots.render(matches, shownMatches);
      children.push(matches);
      if (result.matches.length > MATCHES_SHOWN) {
        moreMatches.textContent = "More items match: type more of the name to find them.";
        children.push(moreMatches);
      }
      if (result.matches.length === 0 && offers.childElementCount === 0) children.push(noMatch);
    }
    // The whole list and the matches are both kept in the document, the one not asked for
    // hidden with its layout kept (content-visibility): the first letter typed and the query
    // cleared show the other at once, without laying out its rows again.
    reconcile(searching ? found : whole, children);
    if (whole.classList.contains("off") !== searching) {
      for (const [part, off] of [[whole, searching], [found, !searching]]) {
        part.classList.toggle("off", off);
        part.inert = off;
        if (off) part.setAttribute("aria-hidden", "true");
        else part.removeAttribute("aria-hidden");
      }
    }
    // A row moved between sections keeps the keyboard where it was.
    if (focusedRow && focusedButton instanceof HTMLElement && document.activeElement !== focusedButton && focusedRow.isConnected) focusedButton.focus();
    app.updateStatus();
  }

  /** The scopes: everything, to buy, checked, then each aisle of the list (kept as chosen). */
  function refreshScopes() {
    const aisles = grouped().groups.map((g) => g.category).filter((c) => c !== null);
    const wanted = [["", "Everything"], ["is:todo", "To buy"], ["is:done", "Checked"], ...aisles.map((a) => [`in:${a.split(" ").join("-")}`, a])];
    const signature = wanted.map(([v]) => v).join("\n");
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
   * @param {any} result
   * @returns {{ className: string, label: string, action: () => void }[]}
   */
  function offersFor(text, result) {
    if (locked) return [];
    const entries = entriesFor(screen, text);
    if (entries === null) return [];
    if (entries.length > 1) {
      const label = entries.map((e) => (e.quantity ? `${e.name} (${e.quantity})` : e.name)).join(", ");
      return [{ className: "offer", label: `Add ${entries.length} items: ${label}`, action: () => run(() => addEntries(entries)) }];
    }
    if (result.offer === null) return [];
    const e = entries[0];
    const out = [{ className: "offer", label: `Add “${e.name}”${e.quantity ? ` (${e.quantity})` : ""}`, action: () => run(() => addEntries(entries)) }];
    const meant = didYouMean(result);
    if (meant !== null) {
      out.push({ className: "offer meant", label: `Did you mean “${meant.name}”?`, action: () => run(() => addEntries([{ name: meant.name, quantity: e.quantity }])) });
    }
    if (result.matches.length === 0) {
      for (const s of suggestionsFor(screen, text)) {
        out.push({
          className: "offer suggestion",
          label: s.before ? `↺ ${s.name} (had it before)` : `+ ${s.name}`,
          action: () => run(() => addEntries([{ name: s.name, quantity: e.quantity, category: app.aisleFor(s.name) }])),
        });
      }
    }
    return out;
  }

  function showNotice(gone, info) {
    const viewer = !gone && role() === "viewer";
    // What waits here that the server will not take: shown, with the ways out (refused-changes.js).
    const refused = gone || viewer ? refusedNotice(screen, gone) : { text: "", buttons: [] };
    const text = (gone
      ? "This list is no longer shared with you: it stays here, read-only. "
      : info.archived
        ? "This list is archived: read-only. "
        : viewer
          ? "You can view this list; its owners can let you change it. "
          : "") + refused.text;
    if (notice.dataset.text === text) return;
    notice.dataset.text = text;
    const buttons = [
      ...refused.buttons,
      gone ? h("button", { class: "link", onclick: () => run(() => removeFromDevice(refused.text)) }, "Remove it from this device") : null,
      info.archived && !gone && role() === "owner" ? h("button", { class: "link", onclick: () => run(() => setArchived(screen, false)) }, "Unarchive") : null,
    ];
    notice.replaceChildren(text, ...buttons.filter((b) => b !== null));
    notice.hidden = text === "";
  }

  /**
   * Removes a list that is no longer shared from this device; with changes that were not sent,
   * only once the person has seen them and said so.
   * @param {string} waiting what the notice says of them ("" when none)
   */
  async function removeFromDevice(waiting) {
    if (waiting !== "" && !(await confirmDialog(screen, "Remove it from this device?", `${waiting}They go with it.`, "Remove"))) return;
    await replica.forgetList(list);
    app.go("#/");
  }

  input.addEventListener("input", render);
  // Someone about to type: the search index is made now if it is not yet (not at the first key),
  // and while the keyboard comes up the search and the offers run, in idle moments, on what
  // warmUpTexts gives (the list's commonest initials, then beginnings of its names, as if typed):
  // the first keys of a page otherwise find the search's code not yet compiled by the browser (a
  // cold search takes 5–10 times as long as a warm one), and the first letters' answers not yet
  // kept. It stops at the first key typed or when the field loses focus: it never holds a
  // keystroke up for longer than one search.
  let warmed = false;
  input.addEventListener("focus", () => {
    if (!app.isShowing(list)) return;
    const made = index();
    if (warmed) return;
    warmed = true;
    const texts = warmUpTexts(current().all);
    let next = 0;
    const stop = () => (next = texts.length);
    input.addEventListener("input", stop, { once: true });
    input.addEventListener("blur", stop, { once: true });
    /** @param {() => number} timeLeft */
    const work = (timeLeft) => {
      while (next < texts.length && timeLeft() > 2 && app.isShowing(list)) {
        const text = texts[next++];
        offersFor(text, made.search(new Query(text), MATCHES_SHOWN + 1));
      }
      if (next < texts.length && app.isShowing(list)) whenIdle(work);
    };
    whenIdle(work);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      input.value = "";
      render();
    }
    if (event.key !== "Enter") return;
    event.preventDefault();
    const entries = entriesFor(screen, input.value);
    if (entries === null || readOnly()) return;
    run(() => addEntries(entries));
  });

  // MARK: The screen

  /** What the sheets (item-sheet.js, list-settings.js, sharing-sheet.js) use of this screen. */
  const screen = { app, list, replica, sync, run, current, itemNow, readOnly, role };

  const settings = h("button", { class: "link", onclick: () => run(() => listSettings(screen)) }, "List ⋯");
  const fine = typeof matchMedia === "function" && matchMedia("(pointer: fine)").matches;
  // Ctrl+Z (⌘Z) undoes the last change on this list, unless the field has text of its own to undo.
  const undoKey = (/** @type {KeyboardEvent} */ event) => {
    if (!(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "z" || event.shiftKey) return;
    const target = event.target;
    if (target instanceof HTMLInputElement && target.value !== "") return;
    if (document.querySelector("dialog[open]")) return;
    event.preventDefault();
    run(() => app.undo(list));
  };
  document.addEventListener("keydown", undoKey);
  app.mount(
    {
      name: "list",
      list,
      update,
      // A keyboard goes to the field; a phone's screen reader to the title (no keyboard popping up).
      focus: fine && !readOnly() ? input : heading,
      leave: () => document.removeEventListener("keydown", undoKey),
    },
    h(
      "header",
      { class: "bar list-bar" },
      h("a", { href: "#/", class: "back", "aria-label": "All lists" }, "‹ Lists"),
      h("span", { class: "spacer" }),
      h("button", { class: "link", onclick: () => run(() => share(screen)) }, "Share"),
      settings,
      heading,
    ),
    h("div", { class: "search" }, h("label", { for: "query", class: "visually-hidden" }, "Add or find an item"), h("div", { class: "row" }, input, scope)),
    help,
    notice,
    items,
    app.statusLine(),
  );
  update();
}
