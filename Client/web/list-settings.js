// The list's settings (BasketCLI's `basket list` commands, `basket aisles`, `basket clear`,
// `basket leave`): rename, aisle order, archive, clear checked, delete or leave.
import { render } from "./list-text.js";
import { members } from "./sharing-sheet.js";
import { ROUTES, Unreachable, request } from "./api.js";
import { normalize } from "./key.js";
import { field, h, openDialog } from "./ui.js";
import { notificationSettings } from "./push-settings.js";
import { makeAddOnlyKey } from "./inbox.js";
import { editShops } from "./shops-sheet.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */

/**
 * Archives or unarchives the list (an owner's).
 * @param {ListScreen} screen
 * @param {boolean} archived
 */
export async function setArchived(screen, archived) {
  await screen.replica.setArchived(screen.list, archived);
  screen.sync.send(screen.list);
  screen.app.showToast(archived ? "Archived the list" : "Unarchived the list", screen.list);
}

/**
 * Removes every checked item, as one undo step.
 * @param {ListScreen} screen
 */
export async function clearChecked(screen) {
  const n = await screen.replica.removeChecked(screen.list);
  screen.sync.send(screen.list);
  screen.app.showToast(n === 0 ? "Nothing checked to clear" : `Cleared ${n} checked item${n === 1 ? "" : "s"}`, screen.list);
}

/**
 * The list's sheet: rename, aisle order, members, clear checked, archive, delete or leave.
 * @param {ListScreen} screen
 */
export function listSettings(screen) {
  const owner = screen.role() === "owner" || screen.role() == null;
  const info = screen.replica.state(screen.list)?.info;
  const checked = screen.current().all.filter((i) => i.checked).length;
  const dialog = openDialog(
    "settings-title",
    "This list",
    h(
      "div",
      { class: "actions column" },
      h("button", { disabled: screen.readOnly(), onclick: () => { dialog.close(); screen.run(() => rename(screen)); } }, "Rename"),
      h("button", { disabled: screen.readOnly(), onclick: () => { dialog.close(); screen.run(() => editAisles(screen)); } }, "Aisle order"),
      h("button", { disabled: screen.readOnly(), onclick: () => { dialog.close(); screen.run(() => editShops(screen)); } }, "Shops"),
      h("button", { onclick: () => { dialog.close(); screen.run(() => copyList(screen)); } }, "Copy or share the list"),
      h("button", { onclick: () => { dialog.close(); screen.run(() => members(screen)); } }, "Members and invites"),
      h("button", { disabled: screen.replica.syncState(screen.list)?.isRegistered !== true, onclick: () => { dialog.close(); screen.run(() => notificationSettings(screen)); } }, "Notifications"),
      h("button", { disabled: screen.readOnly() || screen.replica.syncState(screen.list)?.isRegistered !== true, onclick: () => { dialog.close(); screen.run(() => makeAddOnlyKey(screen)); } }, "A key for a speaker"),
      h("button", { disabled: screen.readOnly() || checked === 0, onclick: () => { dialog.close(); screen.run(() => clearChecked(screen)); } }, `Clear checked (${checked})`),
      owner ? h("button", { disabled: screen.readOnly(), onclick: () => { dialog.close(); screen.run(() => chooseLanguage(screen)); } }, "Aisle language") : null,
      owner ? h("button", { onclick: () => { dialog.close(); screen.run(() => setArchived(screen, !info?.archived)); } }, info?.archived ? "Unarchive" : "Archive") : null,
      owner
        ? h("button", { class: "danger", onclick: () => { dialog.close(); screen.run(() => deleteList(screen)); } }, "Delete the list")
        : h("button", { class: "danger", onclick: () => { dialog.close(); screen.run(() => leaveList(screen)); } }, "Leave the list"),
    ),
  );
}

/**
 * The items to buy as text, by aisle, to paste into a chat or a note: shown to copy by hand,
 * copied with one tap, or handed to the phone's share sheet where the browser has one.
 * @param {ListScreen} screen
 */
export async function copyList(screen) {
  const info = screen.replica.state(screen.list)?.info;
  const format = /** @type {HTMLSelectElement} */ (
    h("select", { id: "copy-format" }, h("option", { value: "text" }, "Text"), h("option", { value: "markdown" }, "Markdown"))
  );
  const text = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "copy-text", readonly: true, rows: 10 }));
  const fill = () => (text.value = render(info?.title ?? "", screen.current().all, info?.aisles ?? [], format.value === "markdown" ? "markdown" : "text"));
  format.addEventListener("change", fill);
  fill();
  const share = typeof navigator.share === "function"
    ? h("button", { type: "button", onclick: () => screen.run(() => navigator.share({ title: info?.title ?? "", text: text.value })) }, "Share…")
    : null;
  openDialog(
    "copy-title",
    "Copy or share the list",
    h("label", { for: "copy-format" }, "Format"),
    format,
    h("label", { for: "copy-text" }, "What is to buy"),
    text,
    h(
      "div",
      { class: "actions" },
      h("button", {
        type: "button",
        class: "primary",
        onclick: () => screen.run(async () => {
          await navigator.clipboard.writeText(text.value);
          screen.app.showToast("Copied the list", screen.list);
        }),
      }, "Copy"),
      share,
    ),
  );
}

/** The catalogue's languages, by their own names. */
const LANGUAGE_NAMES = [["en", "English"], ["de", "Deutsch"], ["fr", "Français"], ["es", "Español"], ["it", "Italiano"], ["nl", "Nederlands"], ["pl", "Polski"], ["pt", "Português"], ["ja", "日本語"]];

/**
 * An owner chooses the language the list's aisles are named in: every device then files what it
 * adds under aisles in it (Replica.setLanguage).
 * @param {ListScreen} screen
 */
export async function chooseLanguage(screen) {
  const current = screen.app.aisleLanguageOf(screen.list);
  const select = /** @type {HTMLSelectElement} */ (
    h("select", { id: "aisle-language" }, ...LANGUAGE_NAMES.map(([code, name]) => h("option", { value: code, selected: code === current }, name)))
  );
  const dialog = openDialog(
    "language-title",
    "Aisle language",
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          screen.run(async () => {
            await screen.replica.setLanguage(screen.list, select.value);
            screen.sync.send(screen.list);
            dialog.close();
            screen.app.showToast(`Aisles in ${LANGUAGE_NAMES.find(([code]) => code === select.value)?.[1] ?? select.value} from now on`, screen.list);
          });
        },
      },
      h("p", { class: "hint" }, "Every device files the items it adds under aisles in this language."),
      h("label", { for: "aisle-language" }, "Name the aisles in"),
      select,
      h("div", { class: "actions" }, h("button", { class: "primary" }, "Save")),
    ),
  );
}

/** @param {ListScreen} screen */
export async function rename(screen) {
  const [label, title] = field("rename", "Title", { value: screen.replica.state(screen.list)?.info.title ?? "", required: true });
  const dialog = openDialog(
    "rename-title",
    "Rename the list",
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          screen.run(async () => {
            await screen.replica.renameList(screen.list, title.value);
            screen.sync.send(screen.list);
            dialog.close();
          });
        },
      },
      label, title,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save")),
    ),
  );
  title.focus();
}

/**
 * The aisle order: the list's, then the categories its items have, then the catalogue's.
 * @param {ListScreen} screen
 */
export async function editAisles(screen) {
  const info = screen.replica.state(screen.list)?.info;
  /** @type {string[]} */
  const order = [];
  const seen = new Set();
  const add = (/** @type {string | null} */ name) => {
    if (name && !seen.has(normalize(name))) {
      seen.add(normalize(name));
      order.push(name);
    }
  };
  (info?.aisles ?? []).forEach(add);
  screen.current().all.forEach((i) => add(i.category));
  const listEl = h("ol", { class: "aisles", "aria-label": "Aisles in the order of the shop" });
  function draw() {
    listEl.replaceChildren(
      ...order.map((name, i) =>
        h("li", {},
          h("span", {}, name),
          h("button", { type: "button", "aria-label": `Move ${name} up`, disabled: i === 0, onclick: () => move(i, -1) }, "↑"),
          h("button", { type: "button", "aria-label": `Move ${name} down`, disabled: i === order.length - 1, onclick: () => move(i, 1) }, "↓"),
        ),
      ),
    );
  }
  /**
   * @param {number} i
   * @param {number} by -1 (up) or 1 (down)
   */
  function move(i, by) {
    [order[i], order[i + by]] = [order[i + by], order[i]];
    draw();
    /** @type {HTMLElement | null} */ (listEl.querySelectorAll("li")[i + by]?.querySelector(`button[aria-label^="Move"][aria-label$="${by < 0 ? "up" : "down"}"]`) ?? null)?.focus();
  }
  draw();
  const dialog = openDialog(
    "aisles-title",
    "Aisle order",
    h("p", { class: "hint" }, order.length === 0 ? "No item has a category yet." : "The list is walked in this order."),
    listEl,
    h("div", { class: "actions" }, h("button", { type: "button", class: "primary", disabled: order.length === 0, onclick: () => screen.run(async () => {
      await screen.replica.setAisles(screen.list, order);
      screen.sync.send(screen.list);
      dialog.close();
      screen.app.showToast("Saved the aisle order", screen.list);
    }) }, "Save the order")),
  );
}

/** @param {ListScreen} screen */
export async function deleteList(screen) {
  const title = screen.replica.state(screen.list)?.info.title ?? "this list";
  if (!(await confirmDialog(`Delete ${title}?`, "It goes for everyone who shares it, on every device.", "Delete"))) return;
  if (screen.replica.syncState(screen.list)?.isRegistered) {
    try {
      await request(ROUTES.deleteList, [screen.list], { token: screen.replica.meta.account?.token });
    } catch (error) {
      if (error instanceof Unreachable) throw new Error("Deleting a shared list needs the server: try again when online.");
      throw error;
    }
  }
  await screen.replica.removeList(screen.list);
  // Said on the lists screen, once it is drawn, with no Undo: a deleted list cannot come back,
  // and undo never reaches another list's change.
  screen.app.go("#/", `Deleted ${title}`);
}

/** @param {ListScreen} screen */
export async function leaveList(screen) {
  const me = screen.replica.meta.account?.name;
  if (!me || !(await confirmDialog("Leave this list?", "It stays on this device, read-only; the others keep it.", "Leave"))) return;
  await request(ROUTES.removeMember, [screen.list, me], { token: screen.replica.meta.account?.token });
  await screen.replica.saveSyncState(screen.list, { noLongerMember: true });
  screen.app.showToast("You left the list", null);
}

/**
 * Asks a yes/no question in a dialog; resolves true for the yes button.
 * @param {string} title
 * @param {string} text
 * @param {string} yes the yes button's label
 * @returns {Promise<boolean>}
 */
export function confirmDialog(title, text, yes) {
  return new Promise((resolve) => {
    const dialog = openDialog("confirm-title", title, h("p", {}, text), h("div", { class: "actions" }, h("button", { class: "danger", onclick: () => { resolve(true); dialog.close(); } }, yes)));
    dialog.addEventListener("close", () => resolve(false));
  });
}
