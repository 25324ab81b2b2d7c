// Basket in the browser: sign in, lists, one list with search-as-you-type. Every value is put
// on the page as text (textContent, never HTML), the token stays in IndexedDB, and everything
// works offline: edits go to the replica and its outbox, and sync sends them when it can.
import { open } from "./store.js";
import { Replica } from "./replica.js";
import { CannotUndo } from "./replica-types.js";
import { Sync, refusedText } from "./sync.js";
import { Shopping } from "./shopping.js";
import { News } from "./news.js";
import { renew } from "./push-settings.js";
import { showList } from "./list-screen.js";
import { showSignIn } from "./sign-in-screen.js";
import { showLists } from "./lists-screen.js";
import { keepShared } from "./paste-sheet.js";
import { h } from "./ui.js";
import { changes, didPhrase } from "./phrases.js";
import * as catalogue from "./catalogue.js";

const root = /** @type {HTMLElement} */ (document.getElementById("app"));
/** @type {Replica} set by start() before anything reads it */
let replica;
/** @type {Sync} set by start() before anything reads it */
let sync;
/** @type {Shopping} who is shopping for each list; set by start() */
let shopping;
/** @type {News} what other devices did; set by start() */
let news;
/**
 * A screen on show: its name, the list it shows (when one), how it redraws after a change,
 * what it does when another takes its place, and where focus goes when it is shown.
 * @typedef {{ name: string, list?: string, update: () => void, leave?: () => void, focus?: HTMLElement | null,
 *   fileInbox?: () => void }} Screen
 */
/** @type {Screen | null} */
let screen = null;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let toastTimer;
/** This version's files ("/a/VERSION/"): where the catalogue's files are fetched from. */
const base = `/a/${document.querySelector("meta[name=basket-version]")?.getAttribute("content") ?? ""}/`;
/** The browser's language, as the catalogue has it. */
const language = catalogue.languageOf(navigator.languages?.length ? navigator.languages : [navigator.language ?? "en"]);
/** The catalogues loaded, by language (fetched when first needed; missing offline on first use). */
const loaded = new Map();
/** Languages asked for and not failed. */
const asked = new Set();
/** Icons already looked up, by name (a keystroke redraws a dozen rows): at most 2,000. */
const icons = new Map();
/** How many catalogues have come: a screen whose drawing is older draws its rows' icons again. */
let catalogueGeneration = 0;

/**
 * Loads the catalogue of `code` in the background (once; again after a failure); the list shows
 * what it gives once it is here.
 * @param {string} code
 */
function want(code) {
  if (asked.has(code) || !catalogue.LANGUAGES.includes(code)) return;
  asked.add(code);
  catalogue.load(code, base).then((c) => {
    loaded.set(code, c);
    icons.clear();
    // The rows drawn before it came get their icons now.
    catalogueGeneration += 1;
    screen?.update();
  }, () => asked.delete(code));
}

/**
 * Loads the catalogues a list needs when it is opened (the sign-in screen and the lists need
 * none: a first visit does not fetch them): the browser's language, English, and the list's.
 * @param {string} list
 */
function loadCatalogues(list) {
  want(language);
  want("en");
  want(aisleLanguage(list));
}

/**
 * The language a list's aisles are named in: its own, else the one its aisles are named in (a list
 * made before lists had one), else the browser's (Context.aisleLanguage).
 * @param {string} list
 * @returns {string}
 */
function aisleLanguage(list) {
  const state = replica.state(list);
  if (state === undefined) return language;
  const info = state.info;
  if (info.language !== null) return info.language;
  const categories = state.allItems().flatMap((i) => (i.category === null ? [] : [i.category]));
  return catalogue.languageOfAisles([...info.aisles, ...categories]) ?? language;
}

/**
 * The catalogue's aisle for a name on `list`, named in the list's language: looked up in the
 * list's language, the browser's and English, those loaded (null without a catalogue, or when
 * none has the name).
 * @param {string} list
 * @param {string} name
 */
function aisleFor(list, name) {
  const code = aisleLanguage(list);
  want(code);
  const cs = [code, language, "en"].flatMap((c) => loaded.get(c) ?? []);
  return cs.length === 0 ? null : (catalogue.grocery(cs, name, catalogue.LANGUAGES.includes(code) ? code : "en")?.aisle ?? null);
}

/**
 * The aisle a typed aisle means on `list` ("milk @dairy"): one of `known` (the list's), else the
 * catalogue's, named in the list's language.
 * @param {string} list
 * @param {string} typed
 * @param {readonly string[]} known
 */
function aisleNamed(list, typed, known) {
  return catalogue.aisleNamed(typed, aisleLanguage(list), known);
}

/**
 * The catalogue's aisles for `list`, in its language, in a shop's order (empty before loaded).
 * @param {string} list
 * @returns {string[]}
 */
function cataloguedAisles(list) {
  return loaded.get(aisleLanguage(list))?.aisles ?? [];
}

/**
 * The catalogue's icon for a name (null without a catalogue, or when it has none for the name):
 * looked up in every catalogue loaded, the browser's language first.
 * @param {string} name
 * @returns {string | null}
 */
function iconFor(name) {
  const cs = [language, "en", ...loaded.keys()].flatMap((c) => loaded.get(c) ?? []);
  if (cs.length === 0) return null;
  const known = icons.get(name);
  if (known !== undefined) return known;
  const icon = catalogue.grocery(cs, name)?.icon ?? null;
  if (icons.size >= 2000) icons.clear();
  icons.set(name, icon);
  return icon;
}

function statusText() {
  const { state, message, pending, stuck, refused } = sync.status();
  const waiting = pending > 0 ? ` · ${changes(pending)} waiting` : "";
  switch (state) {
    case "offline":
      return `Offline${waiting}`;
    case "unreachable":
      return `Can't reach the server${waiting}`;
    case "signedOut":
      return `Signed out: sign in again to sync${waiting}`;
    case "error":
      return `Not synced: ${message}${waiting}`;
    case "syncing":
      return "Syncing…";
    default:
      // Synced, but for the lists the server refused: their changes are not sending.
      if (refused > 0) return `Not synced: ${refusedText(sync.failures)}${waiting}`;
      // Changes on lists the server will not take never leave: said so, not "Sending" forever.
      if (pending > stuck) return `Sending ${changes(pending - stuck)}…`;
      return stuck > 0 ? `Synced · ${changes(stuck)} not sent (see the list)` : "Synced";
  }
}

function statusLine() {
  return h(
    "footer",
    { class: "footer" },
    h("p", { id: "status", class: "status", role: "status", "aria-live": "polite" }, statusText()),
    h("a", { id: "signin-again", href: "#/signin", hidden: true }, "Sign in"),
  );
}

function updateStatus() {
  const line = document.getElementById("status");
  if (line) {
    // Unchanged, untouched: a keystroke redraws the list, not the footer.
    const text = statusText();
    if (line.textContent !== text) line.textContent = text;
    const state = sync.status().state;
    if (line.dataset.state !== state) line.dataset.state = state;
  }
  const again = document.getElementById("signin-again");
  if (again) again.hidden = Boolean(replica.meta.account?.token);
}

/**
 * Says what happened in the toast; with `list`, an Undo button that undoes the last step made on
 * that list (the toast goes when another screen is shown: undo never acts on another list).
 * @param {string} text
 * @param {string | null} [list]
 */
function showToast(text, list = null) {
  document.getElementById("toast")?.remove();
  clearTimeout(toastTimer);
  const toast = h(
    "div",
    { id: "toast", class: "toast", role: "status" },
    h("span", {}, text),
    list !== null && replica.canUndo(list)
      ? h("button", { class: "link", onclick: () => run(() => undoOn(list)) }, "Undo")
      : null,
  );
  document.body.append(toast);
  toastTimer = setTimeout(() => toast.remove(), 8000);
}

function hideToast() {
  clearTimeout(toastTimer);
  document.getElementById("toast")?.remove();
}

/**
 * Undoes the last step made on `list` (again: the one before), as `basket undo` does.
 * @param {string} list
 */
async function undoOn(list) {
  if (screen?.list !== list) return hideToast();
  try {
    const label = await replica.undo(list);
    sync.send(list);
    showToast(label === null ? "Nothing to undo" : `Undid: ${didPhrase(label)}`, label === null ? null : list);
  } catch (error) {
    if (error instanceof CannotUndo) showToast(`Cannot undo: ${error.message}`);
    else throw error;
  }
}

/**
 * Runs an action; a refused value or a failure is said in the toast, nothing is lost.
 * @param {() => unknown} action
 */
async function run(action) {
  try {
    await action();
  } catch (error) {
    showToast(error instanceof Error ? error.message : String(error));
  }
}

/**
 * What the next screen shown says in its toast (go's `said`), null for nothing.
 * @type {string | null}
 */
let pendingToast = null;

/**
 * Shows the screen of `hash`, now when it is the page's already, else at the hashchange; `said`
 * is said in the toast once that screen is shown (a toast shown before could be hidden by the
 * screen coming, and a hashchange awaited could have come already: a removed list's screen goes
 * to the lists by itself while the removal is stored).
 * @param {string} hash
 * @param {string | null} [said]
 */
function go(hash, said = null) {
  pendingToast = said;
  if (location.hash !== hash) location.hash = hash;
  else route();
}

// MARK: Screens

function route() {
  const hash = location.hash;
  // An encrypted list's code carries its keys after a dot (never sent: the fragment stays here).
  const join = /^#join=([A-Za-z0-9 -]{1,64}(?:\.k1\.[A-Za-z0-9_-]{91,811})?)$/.exec(hash);
  if (join) {
    sessionStorage.setItem("basket-join", join[1]);
    history.replaceState(null, "", "/#/");
  }
  if (!replica.meta.account?.token && (!replica.meta.account?.name || location.hash === "#/signin")) {
    return showSignIn(app, replica.meta.account?.name ? "Sign in again to sync this device's lists." : "");
  }
  const match = /^#\/list\/([0-9a-f]{32})$/.exec(location.hash);
  if (match && replica.state(match[1])) {
    loadCatalogues(match[1]);
    return showList(app, match[1]);
  }
  showLists(app);
}

/**
 * Shows a screen: its update(), the list it shows (when one), and where focus goes (its heading
 * or first field), so a screen reader and the keyboard start at the new screen, not the page body.
 * @param {Screen} next
 * @param {...(Node | string)} children
 */
function mount(next, ...children) {
  const changed = screen?.name !== next.name || screen?.list !== next.list;
  screen?.leave?.();
  screen = next;
  if (changed) hideToast();
  sync.watch(next.list ?? null);
  root.replaceChildren(...children);
  if (pendingToast !== null) {
    showToast(pendingToast, null);
    pendingToast = null;
  }
  if (next.focus) {
    if (!next.focus.hasAttribute("tabindex") && !["INPUT", "BUTTON", "A"].includes(next.focus.tagName)) {
      next.focus.setAttribute("tabindex", "-1");
    }
    next.focus.focus({ preventScroll: false });
  }
}

/**
 * @typedef {object} App what every screen is given (list-screen.js, lists-screen.js, …)
 * @property {import("./replica.js").Replica} replica
 * @property {import("./sync.js").Sync} sync
 * @property {import("./shopping.js").Shopping} shopping
 * @property {import("./news.js").News} news
 * @property {(screen: Screen, ...children: (Node | string)[]) => void} mount
 * @property {(hash: string, said?: string | null) => void} go
 * @property {(action: () => unknown) => Promise<void>} run
 * @property {(text: string, list?: string | null) => void} showToast
 * @property {(list: string, name: string) => string | null} aisleFor
 * @property {(name: string) => string | null} iconFor
 * @property {() => number} catalogueGeneration how many catalogues have come (the icons they give)
 * @property {(list: string, typed: string, known: readonly string[]) => string} aisleNamed
 * @property {(list: string) => string[]} cataloguedAisles
 * @property {(list: string) => string} aisleLanguageOf the language a list's aisles are named in
 * @property {() => catalogue.Catalogue | null} ownCatalogue the browser's language's, for suggestions
 * @property {string} language the browser's language, as the catalogue has it
 * @property {() => HTMLElement} statusLine
 * @property {() => void} updateStatus
 * @property {(list: string) => Promise<void>} undo
 * @property {(list: string) => boolean} isShowing whether the list's screen is the one shown
 */

/** What the screens use of the app. */
const app = {
  get replica() {
    return replica;
  },
  get sync() {
    return sync;
  },
  get shopping() {
    return shopping;
  },
  get news() {
    return news;
  },
  mount,
  go,
  run,
  showToast,
  aisleFor,
  iconFor,
  catalogueGeneration: () => catalogueGeneration,
  aisleNamed,
  cataloguedAisles,
  aisleLanguageOf: aisleLanguage,
  ownCatalogue: () => loaded.get(language) ?? null,
  language,
  statusLine,
  updateStatus,
  undo: undoOn,
  isShowing: (/** @type {string} */ list) => screen?.list === list,
};

// MARK: Start

async function start() {
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(() => {});
    // A notification tapped while the app is open: its list.
    navigator.serviceWorker.addEventListener("message", (event) => {
      const list = event.data?.open;
      if (typeof list === "string" && /^[0-9a-f]{32}$/.test(list)) go(`#/list/${list}`);
    });
  }
  let store;
  try {
    store = await open();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    root.replaceChildren(h("p", { class: "error" }, `Basket cannot keep data in this browser: ${why}`));
    return;
  }
  replica = await Replica.open(store);
  news = new News(replica);
  shopping = new Shopping(replica, () => {
    if (screen?.name === "list") screen.update();
  });
  sync = new Sync(replica, () => {
    updateStatus();
    // The lists screen marks each list whose sync was refused: a change of state may change them.
    if (screen?.name === "lists") screen.update();
  });
  sync.shopping = shopping;
  sync.onInbox = (/** @type {string} */ list) => {
    if (screen?.name === "list" && screen.list === list) screen.fileInbox?.();
  };
  let pending = false;
  replica.subscribe(() => {
    // A write of this device another's later one replaced: told once, quietly.
    if (replica.lost.length > 0) {
      news.lost().then((lines) => {
        if (lines.length > 0) showToast(lines.join("; "));
      }).catch(() => {});
    }
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      screen?.update();
    });
  });
  // Text shared from another app arrives as the share target's query (manifest.webmanifest).
  if (location.search !== "" && keepShared(new URLSearchParams(location.search))) history.replaceState(null, "", "/" + location.hash);
  addEventListener("hashchange", route);
  route();
  if (replica.meta.account?.token) {
    sync.syncAll();
    renew(replica).catch(() => {});
  }
  document.documentElement.dataset.ready = "true";
}

start();
