// The item sheet (BasketCLI's `basket set`, `basket rename` and `basket history`): an item's
// fields, and every write it received. `screen` is what the list screen shares (list-screen.js).
import { milliseconds } from "./clock.js";
import { field, h, openDialog, when } from "./ui.js";
import { SETTABLE_ITEM_FIELDS } from "./field.js";
import { aisleAt, markItem, shopsOf, teachAisle } from "./replica-shops.js";
import { parseMarks } from "./shops.js";
import { walkedShop } from "./shop-walk.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */

/**
 * The sheet of one item: its name, quantity, note and category, and what changed it last.
 * @param {ListScreen} screen
 * @param {string} id
 */
export async function editItem(screen, id) {
  const item = screen.itemNow(id);
  const [nameLabel, name] = field("edit-name", "Name", { value: item.name, required: true });
  const [quantityLabel, quantity] = field("edit-quantity", "Quantity", { value: item.quantity ?? "", placeholder: "2, 500 g, 1 pack" });
  const [noteLabel, note] = field("edit-note", "Note", { value: item.note ?? "", placeholder: "the organic one" });
  const [categoryLabel, category] = field("edit-category", "Category (aisle)", { value: item.category ?? "", list: "edit-categories" });
  const known = new Set([...(screen.replica.state(screen.list)?.info.aisles ?? []), ...screen.current().all.flatMap((i) => (i.category === null ? [] : [i.category])), ...screen.app.cataloguedAisles(screen.list)]);
  const options = h("datalist", { id: "edit-categories" }, ...[...known].map((c) => h("option", { value: c })));
  const error = h("p", { class: "error", role: "alert" });
  const shops = shopFields(screen, item);
  const form = h(
    "form",
    {
      onsubmit: (/** @type {SubmitEvent} */ event) => {
        event.preventDefault();
        screen.run(async () => {
          error.textContent = "";
          try {
            await shops.save();
            await saveItem(screen, id, { name: name.value, quantity: quantity.value, note: note.value, category: category.value });
            dialog.close();
          } catch (e) {
            error.textContent = e instanceof Error ? e.message : String(e);
          }
        });
      },
    },
    nameLabel, name, quantityLabel, quantity, noteLabel, note, categoryLabel, category, options, ...shops.elements,
    // The line it was added with, when it said more than the name: nothing typed is lost.
    item.typed === null ? null : h("p", { class: "hint typed" }, `Added as “${item.typed}”`),
    error,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save")),
  );
  const dialog = openDialog("edit-title", `Edit ${item.name}`, form, history(screen, id));
  name.focus();
}

/**
 * The item's shops in its sheet: which of the list's shops it is bought at (none ticked: any),
 * and, on a trip, its aisle at that shop ("wrong aisle?"); `save` writes what changed.
 * @param {ListScreen} screen
 * @param {import("./state.js").Item} item
 */
function shopFields(screen, item) {
  const shops = shopsOf(screen.replica, screen.list);
  const marks = new Set(parseMarks(item.shops));
  const boxes = shops.map((shop) => /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: `buy-at-${shop.id.slice(0, 8)}`, checked: marks.has(shop.id) })));
  const walked = walkedShop(screen);
  const [aisleLabel, aisle] = walked === null ? [null, null] : field("edit-aisle-here", `Aisle at ${walked.name}`, { value: aisleAt(walked, item) ?? "", placeholder: "Wrong aisle? Where it is here" });
  /** @type {HTMLElement[]} */
  const elements = [];
  if (shops.length > 0) {
    elements.push(h("fieldset", { class: "buy-at" }, h("legend", {}, "Buy at (none: any shop)"),
      ...shops.flatMap((shop, i) => [boxes[i], h("label", { for: boxes[i].id }, shop.name)])));
  }
  if (aisleLabel !== null && aisle !== null) elements.push(aisleLabel, aisle);
  const save = async () => {
    const wanted = shops.filter((_, i) => boxes[i].checked).map((s) => s.id);
    if (wanted.length !== [...marks].filter((m) => shops.some((s) => s.id === m)).length || wanted.some((m) => !marks.has(m))) {
      await markItem(screen.replica, screen.list, item.id, wanted);
    }
    if (walked !== null && aisle !== null && aisle.value.trim() !== (aisleAt(walked, item) ?? "")) {
      await teachAisle(screen.replica, screen.list, item.id, walked.id, aisle.value.trim() === "" ? null : aisle.value);
      screen.data = null;
    }
  };
  return { elements, save };
}

/**
 * Writes what the sheet changed, as one undo step per field the person changed.
 * @param {ListScreen} screen
 * @param {string} id
 * @param {Record<string, string> & { name: string }} values the name and each settable field, as typed
 */
export async function saveItem(screen, id, values) {
  let item = screen.itemNow(id);
  for (const fieldName of SETTABLE_ITEM_FIELDS) {
    const typed = values[fieldName] ?? "";
    const value = typed.trim() === "" ? null : typed;
    const now = /** @type {Record<string, unknown>} */ (item)[fieldName] ?? null;
    if (value !== now) item = await screen.replica.set(screen.list, id, fieldName, value);
  }
  if (values.name.trim() !== item.name) item = await screen.replica.rename(screen.list, item.id, values.name);
  screen.sync.send(screen.list);
  screen.app.showToast(`Saved ${item.name}`, screen.list);
}

/**
 * The item's history, as `basket history` shows it: every write seen on each field, newest
 * first, the one its register shows marked, who wrote it (this device or another) and why a
 * write lost. Read from IndexedDB when the sheet opens.
 * @param {ListScreen} screen
 * @param {string} id
 */
export function history(screen, id) {
  /** @type {Record<string, string>} */
  const words = { name: "Name", checked: "Checked", deleted: "On the list", quantity: "Quantity", note: "Note", category: "Category", typed: "Added as" };
  const said = (/** @type {string} */ f, /** @type {unknown} */ v) =>
    f === "deleted" ? (v ? "removed" : "added") : f === "checked" ? (v ? "checked" : "unchecked") : v === null ? "cleared" : String(v);
  const body = h("div", {}, h("p", { class: "hint" }, "Reading…"));
  screen.replica.history(screen.list, id).then((writes) => {
    const fields = Object.keys(words).filter((f) => writes.some((w) => w.field === f));
    body.replaceChildren(
      ...fields.map((f) =>
        h("section", {},
          h("h3", {}, words[f]),
          h("ul", {}, ...writes.filter((w) => w.field === f).reverse().map((w) =>
            h("li", { class: w.winner ? "winner" : "lost" },
              `${w.winner ? "✓ " : ""}${said(f, w.value)} · ${when(milliseconds(w.ts))} · ${screen.replica.isOwnReplica(w.replica) ? "this device" : "another device"}`,
              w.winner ? null : h("span", { class: "why" }, ` (${w.reason})`)))))),
    );
    if (fields.length === 0) body.replaceChildren(h("p", { class: "hint" }, "No writes kept."));
  }, (/** @type {unknown} */ error) => body.replaceChildren(h("p", { class: "error" }, `History cannot be read: ${error instanceof Error ? error.message : String(error)}`)));
  return h("details", { class: "history" }, h("summary", {}, "History"), body);
}
