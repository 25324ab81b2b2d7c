// A recipe or a chat message pasted into the add box, or shared from another app: one item per
// line, shown before anything is added and editable, optionally with the recipe's name as every
// item's note ("for: lasagne"). BasketCLI's `basket add -` and `--note`, over EntryParser.pieces.
import { pieces } from "./entry.js";
import { entriesFor } from "./list-entries.js";
import { h, openDialog } from "./ui.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/** @typedef {import("./list-screen.js").Entry} Entry */

/**
 * Whether a paste of `text` is previewed rather than typed into the field: two lines or more
 * that are not blank.
 * @param {string} text
 */
export function isSeveralLines(text) {
  return /[\n\r\u2028\u2029]/u.test(text) && pieces(text).length >= 2;
}

/**
 * The entries of `lines` with "for: NAME" joined to each one's note when `recipe` is given.
 * @param {ListScreen} screen
 * @param {string} lines
 * @param {string} recipe
 * @returns {Entry[]}
 */
export function pastedEntries(screen, lines, recipe) {
  const entries = entriesFor(screen, lines) ?? [];
  const name = recipe.trim();
  if (name === "") return entries;
  const note = `for: ${name}`;
  return entries.map((e) => ({ ...e, note: e.note === null ? note : `${e.note}; ${note}` }));
}

/**
 * One line of the preview: icon, name, amount, aisle and note, as the list will show them.
 * @param {ListScreen} screen
 * @param {Entry} entry
 */
function previewRow(screen, entry) {
  const icon = screen.app.iconFor(entry.name);
  const about = [entry.category, entry.note].filter((t) => t !== null && t !== undefined).join(" · ");
  return h(
    "li",
    { class: "preview-row" },
    h("span", { class: "icon", "aria-hidden": "true" }, icon ?? ""),
    entry.quantity === null ? null : h("span", { class: "quantity" }, entry.quantity),
    h("span", { class: "name" }, entry.name),
    about === "" ? null : h("span", { class: "about" }, about),
  );
}

/** Where text shared from another app waits until a list is open (sessionStorage). */
const SHARED_KEY = "basket-shared";
/** The most of shared text kept: a recipe or a long chat message fits; more is cut. */
const SHARED_MAX_CHARS = 16000;

/**
 * Keeps what another app shared (the share target's `title`, `text` and `url` in `query`) until a
 * list is open; returns whether there was any.
 * @param {URLSearchParams} query
 */
export function keepShared(query) {
  const title = (query.get("title") ?? "").trim();
  const lines = [query.get("text") ?? "", query.get("url") ?? ""].map((t) => t.trim()).filter((t) => t !== "");
  if (lines.length === 0) return false;
  sessionStorage.setItem(SHARED_KEY, JSON.stringify({ title: title.slice(0, 200), text: lines.join("\n").slice(0, SHARED_MAX_CHARS) }));
  return true;
}

/** Whether shared text waits for a list. */
export function hasShared() {
  return sessionStorage.getItem(SHARED_KEY) !== null;
}

/**
 * What was shared, taken (so it is previewed once): { title, text }, or null.
 * @returns {{ title: string, text: string } | null}
 */
export function takeShared() {
  const kept = sessionStorage.getItem(SHARED_KEY);
  sessionStorage.removeItem(SHARED_KEY);
  if (kept === null) return null;
  try {
    const value = JSON.parse(kept);
    return typeof value?.text === "string" ? { title: String(value.title ?? ""), text: value.text } : null;
  } catch {
    return null;
  }
}

/**
 * Opens the preview of `text` on the list of `screen`: the lines to edit, what they add, a field
 * for the recipe's name (filled with `title`, a shared page's), and "Add N items".
 * @param {ListScreen} screen
 * @param {string} text
 * @param {string} [title]
 */
export function showPastePreview(screen, text, title = "") {
  const lines = /** @type {HTMLTextAreaElement} */ (h("textarea", { id: "paste-lines", rows: 5, spellcheck: false }));
  lines.value = text.trim();
  const recipe = /** @type {HTMLInputElement} */ (h("input", { id: "paste-recipe", autocomplete: "off", placeholder: "lasagne" }));
  recipe.value = title;
  const list = h("ul", { class: "rows preview", "aria-label": "Items to add" });
  const add = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "primary" }, "Add"));
  const fill = () => {
    const entries = pastedEntries(screen, lines.value, recipe.value);
    list.replaceChildren(...entries.map((e) => previewRow(screen, e)));
    add.textContent = entries.length === 1 ? "Add 1 item" : `Add ${entries.length} items`;
    add.disabled = entries.length === 0;
  };
  lines.addEventListener("input", fill);
  recipe.addEventListener("input", fill);
  fill();
  const dialog = openDialog(
    "paste-title",
    "Add what was pasted",
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          const entries = pastedEntries(screen, lines.value, recipe.value);
          if (entries.length === 0) return;
          dialog.close();
          screen.run(() => screen.addEntries(entries));
        },
      },
      h("label", { for: "paste-lines" }, "One item per line"),
      lines,
      h("label", { for: "paste-recipe" }, "For (a note on every item, optional)"),
      recipe,
      list,
      h("div", { class: "actions" }, add),
    ),
  );
  lines.focus();
}
