// The item sheet (BasketCLI's `basket set`, `basket rename` and `basket history`): an item's
// fields, and every write it received. `screen` is what the list screen shares (list-screen.js).
import { milliseconds } from "./clock.js";
import { field, h, openDialog, when } from "./ui.js";
/** The sheet of one item: its name, quantity, note and category, and what changed it last. */
export async function editItem(screen, id) {
  const item = screen.itemNow(id);
  const [nameLabel, name] = field("edit-name", "Name", { value: item.name, required: true });
  const [quantityLabel, quantity] = field("edit-quantity", "Quantity", { value: item.quantity ?? "", placeholder: "2, 500 g, 1 pack" });
  const [noteLabel, note] = field("edit-note", "Note", { value: item.note ?? "", placeholder: "the organic one" });
  const [categoryLabel, category] = field("edit-category", "Category (aisle)", { value: item.category ?? "", list: "edit-categories" });
  const known = new Set([...(screen.replica.state(screen.list)?.info.aisles ?? []), ...screen.current().all.map((i) => i.category).filter(Boolean), ...(screen.app.catalogues().own?.aisles ?? [])]);
  const options = h("datalist", { id: "edit-categories" }, ...[...known].map((c) => h("option", { value: c })));
  const error = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault();
        screen.run(async () => {
          error.textContent = "";
          try {
            await saveItem(screen, id, { name: name.value, quantity: quantity.value, note: note.value, category: category.value });
            dialog.close();
          } catch (e) {
            error.textContent = e.message;
          }
        });
      },
    },
    nameLabel, name, quantityLabel, quantity, noteLabel, note, categoryLabel, category, options, error,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save")),
  );
  const dialog = openDialog("edit-title", `Edit ${item.name}`, form, history(screen, id));
  name.focus();
}

/** Writes what the sheet changed, as one undo step per field the person changed. */
export async function saveItem(screen, id, values) {
  let item = screen.itemNow(id);
  for (const fieldName of /** @type {const} */ (["quantity", "note", "category"])) {
    const value = values[fieldName].trim() === "" ? null : values[fieldName];
    if ((value ?? null) !== (item[fieldName] ?? null)) item = await screen.replica.setField(screen.list, id, fieldName, value);
  }
  if (values.name.trim() !== item.name) item = await screen.replica.rename(screen.list, item.id, values.name);
  screen.sync.kick(screen.list);
  screen.app.showToast(`Saved ${item.name}`, screen.list);
}

/** When each field of the item last changed, and whether this device or another changed it. */
/**
 * The item's history, as `basket history` shows it: every write seen on each field, newest
 * first, the one its register shows marked, who wrote it (this device or another) and why a
 * write lost. Read from IndexedDB when the sheet opens.
 * @param {string} id
 */
export function history(screen, id) {
  const words = { name: "Name", checked: "Checked", deleted: "On the list", quantity: "Quantity", note: "Note", category: "Category" };
  const said = (/** @type {string} */ f, /** @type {any} */ v) =>
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
  }, (error) => body.replaceChildren(h("p", { class: "error" }, `History cannot be read: ${error.message}`)));
  return h("details", { class: "history" }, h("summary", {}, "History"), body);
}
