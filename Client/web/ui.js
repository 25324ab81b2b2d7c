// What every screen is made of: elements put together as text (never HTML), dialogs that take
// focus and give it back, and the words for counts.

/**
 * An element: `h("button", { class: "x", onclick }, "text", child)`. Strings become text nodes;
 * attributes set to false, null or undefined are left out.
 * @param {string} tag
 * @param {Record<string, any>} [attributes]
 * @param {...any} children
 * @returns {any} the element (any: a caller knows which kind it made)
 */
export function h(tag, attributes = {}, ...children) {
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
export function changes(n) {
  return n === 1 ? "1 change" : `${n} changes`;
}

/**
 * Opens a modal dialog titled `title` with `children` and a Close button; it is removed when
 * closed, and focus goes back where it was. Returns the dialog.
 * @param {string} id the id of its heading
 * @param {string} title
 * @param {...any} children
 * @returns {HTMLDialogElement}
 */
export function openDialog(id, title, ...children) {
  const before = /** @type {HTMLElement | null} */ (document.activeElement);
  const dialog = /** @type {HTMLDialogElement} */ (
    h(
      "dialog",
      { class: "card sheet", "aria-labelledby": id },
      h("h2", { id }, title),
      ...children,
      h("div", { class: "actions" }, h("button", { type: "button", onclick: () => dialog.close() }, "Close")),
    )
  );
  document.body.append(dialog);
  dialog.addEventListener("close", () => {
    dialog.remove();
    before?.focus?.();
  });
  dialog.showModal();
  return dialog;
}

/**
 * A labelled field: [label, input] with the input's id set.
 * @param {string} id
 * @param {string} label
 * @param {Record<string, any>} [attributes]
 * @returns {[HTMLElement, HTMLInputElement]}
 */
export function field(id, label, attributes = {}) {
  const input = /** @type {HTMLInputElement} */ (h("input", { id, autocomplete: "off", ...attributes }));
  return [h("label", { for: id }, label), input];
}

/**
 * A date as a person reads it: "3 Dec, 14:05" (today: "14:05").
 * @param {number} ms
 */
export function when(ms) {
  const date = new Date(ms);
  const today = new Date();
  const time = date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (date.toDateString() === today.toDateString()) return time;
  return `${date.toLocaleDateString(undefined, { day: "numeric", month: "short" })}, ${time}`;
}
