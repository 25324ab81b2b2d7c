// Basket in the browser: sign in, lists, one list with search-as-you-type. Every value is put
// on the page as text (textContent, never HTML), the token stays in IndexedDB, and everything
// works offline: edits go to the replica and its outbox, and sync sends them when it can.
import { open } from "./store.js";
import { Replica, CannotUndo, addMessage } from "./replica.js";
import { Sync } from "./sync.js";
import { request, Unreachable } from "./api.js";
import { Index, Query, groupByAisle, sortForDisplay, didYouMean } from "./search.js";
import { parseAll, resolveSpellings } from "./entry.js";
import { normalize } from "./key.js";
import { isID128 } from "./ids.js";
import * as catalogue from "./catalogue.js";

const root = document.getElementById("app");
let replica;
let sync;
/** The screen on show: { name, list?, update() }. */
let screen = null;
let toastTimer = null;
/** This version's files ("/a/VERSION/"): where the catalogue's files are fetched from. */
const base = `/a/${document.querySelector("meta[name=basket-version]")?.getAttribute("content") ?? ""}/`;
/** The browser's language, as the catalogue has it. */
const language = catalogue.languageOf(navigator.languages?.length ? navigator.languages : [navigator.language ?? "en"]);
/** The catalogue of the browser's language and the English one (null until loaded, or offline on first use). */
const catalogues = { own: /** @type {catalogue.Catalogue | null} */ (null), english: /** @type {catalogue.Catalogue | null} */ (null) };

/** Loads the catalogues in the background; the list shows their suggestions once they are here. */
function loadCatalogues() {
  catalogue.load(language, base).then((c) => {
    catalogues.own = c;
    screen?.update();
  }, () => {});
  if (language !== "en") catalogue.load("en", base).then((c) => (catalogues.english = c), () => {});
}

/**
 * The catalogue's aisle for a name (null without a catalogue, or when it has not the name).
 * @param {string} name
 */
function aisleFor(name) {
  return catalogues.own === null ? null : catalogue.aisleOf(catalogues.own, catalogues.english, name);
}

/** An element: `h("button", { class: "x", onclick }, "text", child)`. Strings become text nodes. */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** "1 change", "3 changes". */
function changes(n) {
  return n === 1 ? "1 change" : `${n} changes`;
}

function statusText() {
  const { state, message, pending } = sync.status();
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
      return pending > 0 ? `Sending ${changes(pending)}…` : "Synced";
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
    line.textContent = statusText();
    line.dataset.state = sync.status().state;
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
    sync.kick(list);
    showToast(label === null ? "Nothing to undo" : `Undid: ${label}`, label === null ? null : list);
  } catch (error) {
    if (error instanceof CannotUndo) showToast(`Cannot undo: ${error.message}`);
    else throw error;
  }
}

/** Runs an action; a refused value or a failure is said in the toast, nothing is lost. */
async function run(action) {
  try {
    await action();
  } catch (error) {
    showToast(error?.message ?? String(error));
  }
}

function go(hash) {
  if (location.hash !== hash) location.hash = hash;
  else route();
}

// MARK: Screens

function route() {
  const hash = location.hash;
  const join = /^#join=([A-Za-z0-9 -]{1,64})$/.exec(hash);
  if (join) {
    sessionStorage.setItem("basket-join", join[1]);
    history.replaceState(null, "", "/#/");
  }
  if (!replica.meta.account?.token && (!replica.meta.account?.name || location.hash === "#/signin")) {
    return showSignIn(replica.meta.account?.name ? "Sign in again to sync this device's lists." : "");
  }
  const match = /^#\/list\/([0-9a-f]{32})$/.exec(location.hash);
  if (match && replica.state(match[1])) return showList(match[1]);
  showLists();
}

/**
 * Shows a screen: its update(), the list it shows (when one), and where focus goes (its heading
 * or first field), so a screen reader and the keyboard start at the new screen, not the page body.
 */
function mount(next, ...children) {
  const changed = screen?.name !== next.name || screen?.list !== next.list;
  screen?.leave?.();
  screen = next;
  if (changed) hideToast();
  sync.watch(next.list ?? null);
  root.replaceChildren(...children);
  if (next.focus) {
    if (!next.focus.hasAttribute("tabindex") && !["INPUT", "BUTTON", "A"].includes(next.focus.tagName)) {
      next.focus.setAttribute("tabindex", "-1");
    }
    next.focus.focus({ preventScroll: false });
  }
}

/**
 * The account screen, in one of two modes a person cannot mix up: "Sign in" (an account that
 * exists) or "Create an account" (a new person), each with its own heading, button and Enter.
 * @param {string} [message]
 * @param {"signIn" | "create"} [mode]
 */
function showSignIn(message = "", mode = "signIn") {
  const creating = mode === "create";
  const name = h("input", { id: "name", name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false" });
  const password = h("input", {
    id: "password",
    name: "password",
    type: "password",
    autocomplete: creating ? "new-password" : "current-password",
    required: true,
    minlength: creating ? 8 : null,
  });
  const invite = h("input", { id: "invite", name: "invite", autocomplete: "off" });
  const error = h("p", { class: "error", role: "alert" }, message);
  const stored = replica.meta.account?.name ?? "";
  if (stored) name.value = stored;
  const waiting = replica.pendingChanges();

  /** The account whose lists this device holds, when another one signs in. */
  async function makeRoomFor(typed) {
    if (!stored || stored.toLowerCase() === typed.toLowerCase()) return true;
    if (replica.pendingChanges() > 0) {
      const n = replica.pendingChanges();
      error.replaceChildren(
        `This device holds ${changes(n)} of ${stored} not sent yet. Sign in as ${stored} to send them, or `,
        h("button", { type: "button", class: "link danger", onclick: () => run(async () => { await replica.forgetEverything(); showSignIn("", mode); }) }, `discard ${changes(n)}`),
        ".",
      );
      return false;
    }
    await replica.forgetEverything();
    return true;
  }

  async function submit() {
    error.textContent = "";
    const typed = name.value.trim();
    try {
      if (!(await makeRoomFor(typed))) return;
      if (creating) {
        const body = { name: typed, password: password.value };
        if (invite.value.trim()) body.invite = invite.value.trim();
        await request("POST", "/v1/accounts", { body });
      }
      const answer = await request("POST", "/v1/tokens", { body: { name: typed, password: password.value, device: "web" } });
      if (typeof answer.token !== "string") throw new Error("the server's answer has no token");
      await replica.setMeta({ account: { name: answer.account ?? typed, token: answer.token, tokenID: answer.id } });
      password.value = "";
      go("#/");
      sync.syncAll();
    } catch (e) {
      error.textContent = e instanceof Unreachable ? "Can't reach the server. Try again when online." : e.message;
    }
  }
  const heading = h("h1", { id: "account-title" }, creating ? "Create an account" : "Sign in");
  const form = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "account-title",
      onsubmit: (event) => {
        event.preventDefault();
        submit();
      },
    },
    h("p", { class: "brand" }, "Basket"),
    heading,
    h("p", { class: "hint" }, creating ? "A new account for the shared shopping list that works offline." : "The shared shopping list that works offline."),
    waiting > 0 && stored ? h("p", { class: "notice" }, `${changes(waiting)} of ${stored} wait on this device: sign in as ${stored} to send them.`) : null,
    h("label", { for: "name" }, "Account name"),
    name,
    h("label", { for: "password" }, creating ? "Choose a password (8 characters or more)" : "Password"),
    password,
    creating ? h("details", {}, h("summary", {}, "Have a signup invite?"), h("label", { for: "invite" }, "Invite code"), invite) : null,
    error,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, creating ? "Create account" : "Sign in")),
    h(
      "p",
      { class: "switch" },
      creating ? "Have an account already? " : "New to Basket? ",
      h("button", { type: "button", class: "link", onclick: () => showSignIn("", creating ? "signIn" : "create") }, creating ? "Sign in" : "Create an account"),
    ),
  );
  mount({ name: creating ? "create" : "signIn", update() {}, focus: stored && !creating ? password : name }, form);
}

function showLists() {
  const rows = h("ul", { class: "lists", "aria-label": "Your lists" });
  const title = h("input", { id: "new-list", placeholder: "New list, e.g. Groceries", autocomplete: "off", enterkeyhint: "done" });
  const code = h("input", { id: "join-code", placeholder: "XXXX-XXXX-XXXX-XXXX", autocomplete: "off", autocapitalize: "characters", enterkeyhint: "go" });
  function update() {
    const lists = replica.allLists();
    rows.replaceChildren(
      ...lists.map((list) =>
        h(
          "li",
          {},
          h(
            "a",
            { href: `#/list/${list.id}`, class: "list-row" },
            h("span", { class: "title" }, list.title, list.sync.gone ? h("span", { class: "hint" }, " · no longer shared") : null),
            h("span", { class: "count" }, list.total === 0 ? "empty" : `${list.toBuy} to buy`),
          ),
        ),
      ),
    );
    if (lists.length === 0) rows.append(h("li", { class: "hint" }, "No lists yet: make one below, or join one with a code."));
    updateStatus();
  }
  const account = replica.meta.account?.name ?? "";
  const heading = h("h1", {}, "Your lists");
  mount(
    { name: "lists", update, focus: heading },
    h(
      "header",
      { class: "bar" },
      heading,
      h("span", { class: "account" }, account),
      h("button", { class: "link", onclick: () => run(signOut) }, "Sign out"),
    ),
    rows,
    h(
      "form",
      {
        class: "inline",
        onsubmit: (event) => {
          event.preventDefault();
          run(async () => {
            const id = await replica.createList(title.value);
            title.value = "";
            sync.kick(id);
            go(`#/list/${id}`);
          });
        },
      },
      h("label", { for: "new-list" }, "New list"),
      h("div", { class: "row" }, title, h("button", { type: "submit" }, "Create")),
    ),
    h(
      "form",
      {
        class: "inline",
        onsubmit: (event) => {
          event.preventDefault();
          run(() => joinList(code.value));
        },
      },
      h("label", { for: "join-code" }, "Join a list with an invite code"),
      h("div", { class: "row" }, code, h("button", { type: "submit" }, "Join")),
    ),
    statusLine(),
  );
  update();
  const pendingJoin = sessionStorage.getItem("basket-join");
  if (pendingJoin) {
    sessionStorage.removeItem("basket-join");
    run(() => askToJoin(pendingJoin));
  }
}

/**
 * A `#join=` link asks before it joins: who invited to which list, as what (the server's
 * preview of the code), then Join or Not now. A link is something anyone can send; joining is
 * the person's own decision.
 * @param {string} code
 */
async function askToJoin(code) {
  let preview;
  try {
    preview = await request("POST", "/v1/invites/preview", { body: { code: code.trim() }, token: replica.meta.account?.token });
  } catch (error) {
    if (error instanceof Unreachable) throw new Error("Joining a list needs the server: open the link again when you are online.");
    throw error;
  }
  if (!isID128(preview?.list)) throw new Error("the server's answer has no list");
  if (preview.member === true && replica.state(preview.list)) return go(`#/list/${preview.list}`);
  const title = typeof preview.title === "string" && preview.title ? preview.title.slice(0, 500) : "a shared list";
  const who = typeof preview.createdBy === "string" && preview.createdBy ? preview.createdBy.slice(0, 64) : "Someone";
  const role = ["owner", "editor", "viewer"].includes(preview.role) ? preview.role : "member";
  const article = role === "viewer" || role === "member" ? "a" : "an";
  const dialog = h(
    "dialog",
    { class: "card", "aria-labelledby": "join-title", "aria-describedby": "join-question" },
    h("h2", { id: "join-title" }, "Join this list?"),
    h("p", { id: "join-question" }, `${who} invited you to ${title} as ${article} ${role}.`),
    h(
      "form",
      {
        method: "dialog",
        class: "actions",
        onsubmit: (event) => {
          if (event.submitter?.value === "join") run(() => joinList(code));
        },
      },
      h("button", { value: "join", class: "primary" }, "Join"),
      h("button", { value: "cancel" }, "Not now"),
    ),
  );
  document.body.append(dialog);
  dialog.addEventListener("close", () => dialog.remove());
  dialog.showModal();
}

async function joinList(code) {
  const answer = await request("POST", "/v1/invites", { body: { code: code.trim() }, token: replica.meta.account?.token });
  if (!isID128(answer.id)) throw new Error("the server's answer has no list");
  await replica.saveSync(answer.id, { registered: true, role: answer.role, epoch: answer.epoch ?? null });
  await sync.syncList(answer.id);
  go(`#/list/${answer.id}`);
}

/**
 * Signs this device out. Nothing waiting is dropped silently: with changes not sent yet it asks
 * to send them first, or to keep them here until this account signs in again; discarding them
 * is a choice of its own, which names how many.
 */
async function signOut() {
  const waiting = replica.pendingChanges();
  if (waiting === 0) return forgetAndSignOut();
  const error = h("p", { class: "error", role: "alert" });
  const dialog = h(
    "dialog",
    { class: "card", "aria-labelledby": "signout-title", "aria-describedby": "signout-question" },
    h("h2", { id: "signout-title" }, "Sign out?"),
    h("p", { id: "signout-question" }, `${changes(waiting)} on this device ${waiting === 1 ? "has" : "have"} not reached the server yet.`),
    error,
    h(
      "div",
      { class: "actions column" },
      h("button", { class: "primary", onclick: () => run(sendThenSignOut) }, "Send them, then sign out"),
      h("button", { onclick: () => run(signOutKeeping) }, "Sign out, keep them on this device"),
      h("button", { class: "danger", onclick: () => run(forgetAndSignOut) }, `Discard ${changes(waiting)} and sign out`),
      h("button", { onclick: () => dialog.close() }, "Cancel"),
    ),
  );
  async function sendThenSignOut() {
    error.textContent = "Sending…";
    await sync.syncAll();
    const left = replica.pendingChanges();
    if (left === 0) return forgetAndSignOut();
    error.textContent =
      sync.status().state === "offline" || sync.status().state === "unreachable"
        ? `Can't reach the server: ${changes(left)} still wait here. Keep them on this device until you sign in again, or try later.`
        : `${changes(left)} could not be sent: ${sync.status().message}`;
  }
  document.body.append(dialog);
  dialog.addEventListener("close", () => dialog.remove());
  dialog.showModal();
}

/** Forgets the token (on the server too, when it can be reached). */
async function revokeToken() {
  const token = replica.meta.account?.token;
  if (!token) return;
  try {
    await request("DELETE", "/v1/tokens/current", { token });
  } catch {
    // Offline: the token stays valid on the server until it expires; this device forgets it.
  }
}

/** Signs out but keeps every list and change here: they are sent when this account signs in again. */
async function signOutKeeping() {
  await revokeToken();
  sync.stop();
  await replica.setMeta({ account: { name: replica.meta.account?.name ?? "", token: null } });
  location.hash = "#/signin";
  location.reload();
}

async function forgetAndSignOut() {
  await revokeToken();
  sync.stop();
  await replica.forgetEverything();
  location.hash = "#/";
  location.reload();
}

function showList(list) {
  const input = h("input", {
    id: "query",
    type: "search",
    placeholder: "Add or find an item",
    autocomplete: "off",
    autocapitalize: "sentences",
    enterkeyhint: "enter",
    "aria-describedby": "query-help",
    "aria-controls": "items",
  });
  const help = h("p", { id: "query-help", class: "hint" }, "Type to search; Enter adds what you typed. Commas add several: 2 milk, bread.");
  const items = h("div", { id: "items", class: "items", "aria-live": "off" });
  const heading = h("h1", { class: "list-title" });
  const notice = h("p", { class: "hint notice", role: "note" });
  let index = null;
  let indexVersion = -1;
  let version = 0;

  function role() {
    return replica.sync(list)?.role;
  }

  function readOnly() {
    return role() === "viewer" || replica.sync(list)?.gone === true || replica.state(list)?.info.archived === true;
  }

  function itemRow(item) {
    const label = item.quantity ? `${item.quantity} ${item.name}` : item.name;
    const row = h(
      "li",
      { class: item.checked ? "item checked" : "item", "data-id": item.id },
      h(
        "button",
        {
          class: "check",
          role: "checkbox",
          "aria-checked": item.checked ? "true" : "false",
          disabled: readOnly(),
          onclick: () => run(() => toggle(item)),
        },
        h("span", { class: "box", "aria-hidden": "true" }),
        h(
          "span",
          { class: "label" },
          h("span", { class: "name" }, item.name),
          item.quantity || item.note
            ? h("span", { class: "details" }, item.quantity ? h("span", { class: "quantity" }, item.quantity) : null, item.note ? h("span", { class: "note" }, item.note) : null)
            : null,
        ),
      ),
      h(
        "button",
        { class: "remove", "aria-label": `Remove ${label}`, title: "Remove", disabled: readOnly(), onclick: () => run(() => removeItem(item)) },
        "×",
      ),
    );
    swipeToRemove(row, item);
    return row;
  }

  async function toggle(item) {
    await replica.setChecked(list, item.id, !item.checked);
    sync.kick(list);
    showToast(`${item.checked ? "Unchecked" : "Checked"} ${item.name}`, list);
  }

  async function removeItem(item) {
    await replica.remove(list, item.id);
    sync.kick(list);
    showToast(`Removed ${item.name}`, list);
  }

  function swipeToRemove(row, item) {
    let start = null;
    row.addEventListener("pointerdown", (event) => {
      if (event.pointerType !== "mouse") start = { x: event.clientX, y: event.clientY };
    });
    row.addEventListener("pointermove", (event) => {
      if (!start) return;
      const dx = event.clientX - start.x;
      if (Math.abs(event.clientY - start.y) > 30) start = null;
      else row.style.transform = dx < 0 ? `translateX(${dx}px)` : "";
    });
    const end = (event) => {
      if (!start) return;
      const dx = event.clientX - start.x;
      start = null;
      row.style.transform = "";
      if (dx < -96 && !readOnly()) run(() => removeItem(item));
    };
    row.addEventListener("pointerup", end);
    row.addEventListener("pointercancel", () => {
      start = null;
      row.style.transform = "";
    });
  }

  function currentIndex(all) {
    if (indexVersion !== version) {
      index = new Index(all, replica.lastUsed(list));
      indexVersion = version;
    }
    return index;
  }

  /** What Enter would do with the text: [{ name, quantity }] to add, or null. */
  function entriesFor(text, all) {
    if (text.trim() === "") return null;
    // The index holds every name's key already: typing does not fold the whole list again.
    const parsed = parseAll(text, currentIndex(all).keys);
    if (parsed.length === 0) return null;
    // "kaese" is Käse when it is on the list, removed ones too (the German spelling without umlauts);
    // an item without a category takes the catalogue's aisle ("milk" lands in dairy).
    return resolveSpellings(parsed, replica.state(list).allItems().map((i) => i.name)).map((e) => ({ ...e, category: aisleFor(e.name) }));
  }

  /**
   * Removed items matching `text` (had it before), then the catalogue's names the list never had:
   * three at most.
   * @param {string} text
   * @param {any[]} all the items on the list
   * @returns {{ name: string, before: boolean }[]}
   */
  function suggestionsFor(text, all) {
    const removed = replica.state(list).allItems().filter((i) => i.deleted);
    const query = new Query(text);
    const before = removed.length === 0 ? [] : new Index(removed).search(query, 3).matches.filter((m) => m.tier !== "fuzzy").map((m) => m.item.name);
    const out = before.map((name) => ({ name, before: true }));
    if (catalogues.own !== null && out.length < 3) {
      const excluding = new Set([...all, ...removed].map((i) => normalize(i.name)).concat([normalize(text)]));
      for (const name of catalogue.suggestions(catalogues.own, text, excluding, 3 - out.length)) out.push({ name, before: false });
    }
    return out;
  }

  async function addEntries(entries) {
    const results = await replica.add(list, entries);
    sync.kick(list);
    input.value = "";
    update();
    showToast(addMessage(results), list);
  }

  function update() {
    version += 1;
    const state = replica.state(list);
    if (!state) return go("#/");
    const info = state.info;
    heading.textContent = info.title;
    document.title = `${info.title} · Basket`;
    const all = state.allItems().filter((i) => !i.deleted);
    const text = input.value;
    const gone = replica.sync(list)?.gone === true;
    const locked = role() === "viewer" || info.archived || gone;
    notice.replaceChildren(
      ...(gone
        ? [
            "This list is no longer shared with you: it stays here, read-only. ",
            h("button", { class: "link", onclick: () => run(async () => { await replica.forgetList(list); go("#/"); }) }, "Remove it from this device"),
          ]
        : info.archived
          ? ["This list is archived: read-only."]
          : role() === "viewer"
            ? ["You can view this list; its owners can let you change it."]
            : []),
    );
    input.disabled = locked;
    input.placeholder = locked ? "Find an item" : "Add or find an item";
    const children = [];
    if (text.trim() === "") {
      const toBuy = all.filter((i) => !i.checked);
      const checked = sortForDisplay(all.filter((i) => i.checked));
      if (all.length === 0) children.push(h("p", { class: "hint empty" }, "Nothing on the list yet. Type a name above and press Enter."));
      const grouped = toBuy.some((i) => i.category !== null) ? groupByAisle(toBuy, info.aisles) : [{ category: null, items: sortForDisplay(toBuy) }];
      for (const group of grouped) {
        if (grouped.length > 1 || group.category !== null) children.push(h("h2", { class: "group" }, group.category ?? "No category"));
        children.push(h("ul", { class: "rows", "aria-label": group.category ?? "To buy" }, group.items.map(itemRow)));
      }
      if (checked.length > 0) {
        children.push(h("h2", { class: "group" }, `Checked (${checked.length})`));
        children.push(h("ul", { class: "rows done", "aria-label": "Checked" }, checked.map(itemRow)));
      }
    } else {
      const entries = locked ? null : entriesFor(text, all);
      const several = entries !== null && entries.length > 1;
      const result = currentIndex(all).search(new Query(text));
      if (several) {
        const label = entries.map((e) => (e.quantity ? `${e.name} (${e.quantity})` : e.name)).join(", ");
        children.push(h("button", { class: "offer", onclick: () => run(() => addEntries(entries)) }, `Add ${entries.length} items: ${label}`));
      } else if (!locked && result.offer !== null && entries !== null) {
        const e = entries[0];
        children.push(
          h("button", { class: "offer", onclick: () => run(() => addEntries(entries)) }, `Add “${e.name}”`, e.quantity ? ` (${e.quantity})` : ""),
        );
        // Enter adds what was typed; the closest item is one tap (or Tab) away.
        const meant = didYouMean(result);
        if (meant !== null) {
          children.push(
            h("button", { class: "offer meant", onclick: () => run(() => addEntries([{ name: meant.name, quantity: e.quantity }])) }, `Did you mean “${meant.name}”?`),
          );
        }
        // Nothing on the list matches: what it had before, then the catalogue's, one tap each.
        if (result.matches.length === 0) {
          for (const name of suggestionsFor(text, all)) {
            children.push(
              h("button", { class: "offer suggestion", onclick: () => run(() => addEntries([{ name: name.name, quantity: e.quantity, category: aisleFor(name.name) }])) },
                name.before ? `↺ ${name.name} (had it before)` : `+ ${name.name}`),
            );
          }
        }
      }
      children.push(h("ul", { class: "rows", "aria-label": "Matches" }, result.matches.slice(0, 50).map((m) => itemRow(m.item))));
      if (result.matches.length === 0 && (locked || result.offer === null)) children.push(h("p", { class: "hint" }, "No items match."));
    }
    // Keep the keyboard where it was: the rows are new elements after every change.
    const focused = /** @type {HTMLElement | null | undefined} */ (document.activeElement?.closest?.("#items li.item"));
    const focusedClass = document.activeElement?.classList?.[0];
    const focusedID = focused?.dataset.id;
    items.replaceChildren(...children);
    if (focusedID) items.querySelector(`li.item[data-id="${focusedID}"] button.${focusedClass}`)?.focus();
    updateStatus();
  }

  input.addEventListener("input", update);
  // Ctrl+Z (⌘Z) undoes the last change on this list, unless the field has text of its own to undo.
  const undoKey = (/** @type {KeyboardEvent} */ event) => {
    if (screen?.list !== list || !(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "z" || event.shiftKey) return;
    const target = /** @type {HTMLElement | null} */ (event.target);
    if (target instanceof HTMLInputElement && target.value !== "") return;
    if (document.querySelector("dialog[open]")) return;
    event.preventDefault();
    run(() => undoOn(list));
  };
  document.addEventListener("keydown", undoKey);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      input.value = "";
      update();
    }
    if (event.key !== "Enter") return;
    event.preventDefault();
    const state = replica.state(list);
    const all = state.allItems().filter((i) => !i.deleted);
    const entries = entriesFor(input.value, all);
    if (entries === null || readOnly()) return;
    run(() => addEntries(entries));
  });

  async function share() {
    const dialog = h("dialog", { class: "card", "aria-labelledby": "share-title" });
    const body = h("div", {}, h("p", {}, "Making an invite…"));
    dialog.append(h("h2", { id: "share-title" }, "Share this list"), body, h("form", { method: "dialog" }, h("button", {}, "Close")));
    document.body.append(dialog);
    dialog.addEventListener("close", () => dialog.remove());
    dialog.showModal();
    try {
      await sync.syncList(list);
      const title = replica.state(list)?.info.title;
      const invitation = title ? { role: "editor", title } : { role: "editor" };
      const invite = await request("POST", `/v1/lists/${list}/invites`, { body: invitation, token: replica.meta.account?.token });
      const link = `${location.origin}/#join=${invite.code}`;
      body.replaceChildren(
        h("p", {}, "Anyone with this code can join as an editor, once, for 7 days:"),
        h("p", { class: "code", id: "invite-code" }, invite.code),
        h("p", {}, "Or send this link:"),
        h("input", { class: "link-text", readonly: true, value: link, "aria-label": "Invite link", onfocus: (e) => e.target.select() }),
      );
    } catch (error) {
      body.replaceChildren(h("p", { class: "error", role: "alert" }, error instanceof Unreachable ? "Sharing needs a connection to the server." : error.message));
    }
  }

  async function rename() {
    const field = h("input", { id: "rename", value: replica.state(list).info.title, autocomplete: "off" });
    const dialog = h(
      "dialog",
      { class: "card", "aria-labelledby": "rename-title" },
      h(
        "form",
        {
          method: "dialog",
          onsubmit: (event) => {
            if (event.submitter?.value !== "save") return;
            run(async () => {
              await replica.renameList(list, field.value);
              sync.kick(list);
            });
          },
        },
        h("h2", { id: "rename-title" }, "Rename the list"),
        h("label", { for: "rename" }, "Title"),
        field,
        h("div", { class: "actions" }, h("button", { value: "save", class: "primary" }, "Save"), h("button", { value: "cancel" }, "Cancel")),
      ),
    );
    document.body.append(dialog);
    dialog.addEventListener("close", () => dialog.remove());
    dialog.showModal();
  }

  const fine = typeof matchMedia === "function" && matchMedia("(pointer: fine)").matches;
  mount(
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
      h("button", { class: "link", onclick: () => run(rename) }, "Rename"),
      h("button", { class: "link", onclick: () => run(share) }, "Share"),
      heading,
    ),
    h("div", { class: "search" }, h("label", { for: "query", class: "visually-hidden" }, "Add or find an item"), input),
    help,
    notice,
    items,
    statusLine(),
  );
  update();
}

// MARK: Start

async function start() {
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(() => {});
  }
  let store;
  try {
    store = await open();
  } catch (error) {
    root.replaceChildren(h("p", { class: "error" }, `Basket cannot keep data in this browser: ${error.message}`));
    return;
  }
  replica = await Replica.open(store);
  sync = new Sync(replica, () => updateStatus());
  let pending = false;
  replica.subscribe(() => {
    if (pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      screen?.update();
    });
  });
  addEventListener("hashchange", route);
  route();
  if (replica.meta.account?.token) sync.syncAll();
  loadCatalogues();
  document.documentElement.dataset.ready = "true";
}

start();
