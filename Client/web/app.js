// Basket in the browser: sign in, lists, one list with search-as-you-type. Every value is put
// on the page as text (textContent, never HTML), the token stays in IndexedDB, and everything
// works offline: edits go to the replica and its outbox, and sync sends them when it can.
import { open } from "./store.js";
import { Replica, CannotUndo } from "./replica.js";
import { Sync } from "./sync.js";
import { request, Unreachable } from "./api.js";
import { isID128 } from "./ids.js";
import { showList } from "./list-screen.js";
import { h, changes, openDialog, field, when } from "./ui.js";
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

let cataloguesAsked = false;
/**
 * Loads the catalogues in the background when a list is first opened (the sign-in screen and
 * the lists need none: a first visit does not fetch them); the list shows their suggestions once
 * they are here.
 */
function loadCatalogues() {
  if (cataloguesAsked) return;
  cataloguesAsked = true;
  catalogue.load(language, base).then((c) => {
    catalogues.own = c;
    screen?.update();
  }, () => (cataloguesAsked = false));
  if (language !== "en") catalogue.load("en", base).then((c) => (catalogues.english = c), () => {});
}

/**
 * The catalogue's aisle for a name (null without a catalogue, or when it has not the name).
 * @param {string} name
 */
function aisleFor(name) {
  return catalogues.own === null ? null : catalogue.aisleOf(catalogues.own, catalogues.english, name);
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
  if (match && replica.state(match[1])) {
    loadCatalogues();
    return showList(app, match[1]);
  }
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
      h("button", { class: "link account", "aria-label": `Account ${account}`, onclick: () => run(accountSheet) }, account || "Account"),
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

/** The account: the devices signed in (each can be signed out) and the password. */
async function accountSheet() {
  const token = replica.meta.account?.token;
  const devices = h("ul", { class: "people", "aria-label": "Devices" }, h("li", {}, "Loading…"));
  const [currentLabel, current] = field("current-password", "Current password", { type: "password", autocomplete: "current-password", required: true });
  const [newLabel, fresh] = field("new-password", "New password (8 characters or more)", { type: "password", autocomplete: "new-password", minlength: 8, required: true });
  const message = h("p", { role: "alert" });
  openDialog(
    "account-title",
    `Account ${replica.meta.account?.name ?? ""}`,
    h("h3", {}, "Signed-in devices"),
    devices,
    h("h3", {}, "Change the password"),
    h(
      "form",
      {
        onsubmit: (event) => {
          event.preventDefault();
          run(async () => {
            message.textContent = "";
            message.className = "error";
            try {
              const answer = await request("POST", "/v1/account/password", { body: { password: current.value, newPassword: fresh.value }, token });
              current.value = fresh.value = "";
              message.className = "";
              message.textContent = `The password is changed; ${answer?.revoked ?? 0} other device(s) signed out.`;
              await listDevices();
            } catch (e) {
              message.textContent = e instanceof Unreachable ? "Changing the password needs the server." : e.message;
            }
          });
        },
      },
      currentLabel, current, newLabel, fresh, message,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Change the password")),
    ),
  );
  async function listDevices() {
    try {
      const answer = await request("GET", "/v1/tokens", { token });
      const tokens = (Array.isArray(answer.tokens) ? answer.tokens : []).slice(0, 1000).filter((t) => typeof t?.id === "string");
      devices.replaceChildren(
        ...tokens.map((t) =>
          h("li", {},
            h("span", { class: "who" }, `${String(t.device ?? "device").slice(0, 64)}${t.current ? " (this one)" : ""} · last used ${when(Number(t.lastUsed ?? t.created))}`),
            t.current ? null : h("button", { class: "link danger", "aria-label": `Sign out ${String(t.device ?? "device").slice(0, 64)}`, onclick: () => run(async () => {
              await request("DELETE", `/v1/tokens/${encodeURIComponent(t.id)}`, { token });
              showToast("Signed that device out");
              await listDevices();
            }) }, "Sign out"),
          ),
        ),
      );
    } catch (e) {
      devices.replaceChildren(h("li", { class: "error" }, e instanceof Unreachable ? "The devices need a connection to the server." : e.message));
    }
  }
  await listDevices();
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

/** What the list screen uses of the app (list-screen.js). */
const app = {
  get replica() {
    return replica;
  },
  get sync() {
    return sync;
  },
  mount,
  go,
  run,
  showToast,
  aisleFor,
  catalogues: () => catalogues,
  statusLine,
  updateStatus,
  undo: undoOn,
  isShowing: (/** @type {string} */ list) => screen?.list === list,
};

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
  document.documentElement.dataset.ready = "true";
}

start();
