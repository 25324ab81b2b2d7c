// One row of a list (an item: check, edit, remove) and the list's one set of listeners for all
// its rows. Rows are kept by ui.js's Rows (by item) and Slots (by place).
import { h } from "./ui.js";

/** What each row shows (refreshRow writes only what changed). @type {WeakMap<Element, any>} */
const shownInRow = new WeakMap();
// A row is three buttons and no listeners of its own: the list listens once for all of them
// (a row costs less to make and to drop, which a keystroke does to a dozen rows).
/**
 * @param {any} item
 * @param {boolean} locked
 * @param {string | null} icon the catalogue's emoji for the item, shown before its name
 */
export function makeRow(item, locked, icon) {
  const row = h("li", { class: "item", "data-id": item.id });
  row.append(
    h(
      "button",
      { class: "check", role: "checkbox" },
      h("span", { class: "icon", "aria-hidden": "true" }),
      h("span", { class: "name" }),
      h("span", { class: "details" }),
    ),
    h("button", { class: "edit" }, "✎"),
    h("button", { class: "remove" }, "×"),
  );
  refreshRow(row, item, locked, icon);
  return row;
}

/**
 * @param {HTMLElement} row
 * @param {any} item
 * @param {boolean} locked
 * @param {string | null} icon
 */
export function refreshRow(row, item, locked, icon) {
  // Only what differs from what the row shows is written (each write costs the page a call
  // into the browser, and a keystroke brings a dozen rows up to date).
  const before = shownInRow.get(row);
  const label = item.quantity ? `${item.quantity} ${item.name}` : item.name;
  const [check, edit, remove] = /** @type {HTMLButtonElement[]} */ ([...row.children]);
  if (before?.id !== item.id) row.dataset.id = item.id;
  if (before?.checked !== item.checked) {
    row.className = item.checked ? "item checked" : "item";
    check.setAttribute("aria-checked", item.checked ? "true" : "false");
  }
  if (before?.locked !== locked) {
    check.disabled = locked;
    edit.disabled = locked;
    remove.disabled = locked;
  }
  if (before?.label !== label) {
    edit.setAttribute("aria-label", `Edit ${label}`);
    remove.setAttribute("aria-label", `Remove ${label}`);
  }
  const [iconPart, name, details] = /** @type {HTMLElement[]} */ ([...check.children]);
  if (before?.icon !== icon) {
    iconPart.textContent = icon ?? "";
    iconPart.hidden = icon === null;
  }
  if (before?.name !== item.name) name.textContent = item.name;
  if (before?.quantity !== item.quantity || before?.note !== item.note || before?.mark !== item.mark) {
    // The same parts as before get their new text; other parts are made (a match's row
    // shows another item at each keystroke).
    // A mark says what another device did since the list was last shown ("new: anna").
    const parts = [...(item.quantity ? [["quantity", item.quantity]] : []), ...(item.note ? [["note", item.note]] : []), ...(item.mark ? [["mark", item.mark]] : [])];
    const have = [...details.children];
    if (have.length === parts.length && parts.every(([kind], i) => have[i].className === kind)) {
      parts.forEach(([, text], i) => {
        if (have[i].textContent !== text) have[i].textContent = text;
      });
    } else {
      details.replaceChildren(...parts.map(([kind, text]) => h("span", { class: kind }, text)));
    }
    details.hidden = parts.length === 0;
  }
  shownInRow.set(row, { id: item.id, checked: item.checked, locked, label, icon, name: item.name, quantity: item.quantity, note: item.note, mark: item.mark });
}

/**
 * The rows' buttons, and a swipe to the left that removes (touch and pen), heard once by the
 * list `items` for all its rows (a row has no listeners of its own: it costs less to make and to
 * drop, which a keystroke does to a dozen rows).
 * @param {HTMLElement} items
 * @param {{ run: (action: () => any) => any, toggle: (id: string) => any, edit: (id: string) => any,
 *   remove: (id: string) => any, readOnly: () => boolean }} actions
 */
export function listenToRows(items, { run, toggle, edit, remove, readOnly }) {
  /** @param {Event} event */
  const rowOf = (event) => {
    const row = /** @type {HTMLElement | null} */ (/** @type {Element} */ (event.target).closest?.("li.item[data-id]") ?? null);
    return row !== null && items.contains(row) ? row : null;
  };
  items.addEventListener("click", (event) => {
    const row = rowOf(event);
    const button = /** @type {Element} */ (event.target).closest("button");
    if (row === null || button === null || button.parentElement !== row) return;
    const id = /** @type {string} */ (row.dataset.id);
    if (button.classList.contains("check")) run(() => toggle(id));
    else if (button.classList.contains("edit")) run(() => edit(id));
    else if (button.classList.contains("remove")) run(() => remove(id));
  });
  /** @type {{ row: HTMLElement, x: number, y: number } | null} */
  let swipe = null;
  items.addEventListener("pointerdown", (event) => {
    const row = rowOf(event);
    swipe = row !== null && event.pointerType !== "mouse" ? { row, x: event.clientX, y: event.clientY } : null;
  });
  items.addEventListener("pointermove", (event) => {
    if (swipe === null) return;
    const dx = event.clientX - swipe.x;
    if (Math.abs(event.clientY - swipe.y) > 30) {
      swipe.row.style.transform = "";
      swipe = null;
    } else swipe.row.style.transform = dx < 0 ? `translateX(${dx}px)` : "";
  });
  items.addEventListener("pointerup", (event) => {
    if (swipe === null) return;
    const { row, x } = swipe;
    swipe = null;
    row.style.transform = "";
    if (event.clientX - x < -96 && !readOnly()) run(() => remove(/** @type {string} */ (row.dataset.id)));
  });
  items.addEventListener("pointercancel", () => {
    if (swipe !== null) swipe.row.style.transform = "";
    swipe = null;
  });
}
