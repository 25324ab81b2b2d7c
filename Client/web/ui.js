// What every screen is made of: elements put together as text (never HTML), dialogs that take
// focus and give it back, the words for counts, and rows of items kept from one change to the next.

/**
 * An element: `h("button", { class: "x", onclick }, "text", child)`. Strings become text nodes;
 * attributes set to false, null or undefined are left out.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [attributes]
 * @param {...any} children
 * @returns {HTMLElementTagNameMap[K]}
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

/**
 * What an error says, for a person: its message (a thrown value that is no Error, as text).
 * @param {unknown} error
 */
export function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Opens a modal dialog titled `title` with `children` and a Close button; it is removed when
 * closed, and focus goes back where it was (or to the screen's heading). Returns the dialog.
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
    // Back where focus was; when that is gone (the screen changed behind the dialog), to the
    // heading the screen gave focus to.
    if (before?.isConnected) before.focus?.();
    else /** @type {HTMLElement | null} */ (document.querySelector("h1[tabindex]"))?.focus();
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

// MARK: Rows

// Keyed rows: a list of 2,000 items is not drawn again for one change. Each item keeps its row
// element; a change updates the rows whose item changed, in place, and moves, adds or removes
// only the rows whose place changed. What a slow phone can afford on every tap and keystroke.

/** Rows of items by id, made by `make`, brought up to date by `refresh` when `signature` changes. */
export class Rows {
  /**
   * @param {(item: any) => HTMLElement} make a new row for an item
   * @param {(element: HTMLElement, item: any) => void} refresh brings a row up to date with its item
   * @param {(item: any) => string} signature what the row shows of the item (equal: nothing to do)
   */
  constructor(make, refresh, signature) {
    this.make = make;
    this.refresh = refresh;
    this.signature = signature;
    /** @type {Map<string, { element: HTMLElement, signature: string }>} */
    this.kept = new Map();
  }

  /**
   * The row of `item`, made or brought up to date.
   * @param {{ id: string }} item
   */
  row(item) {
    const signature = this.signature(item);
    let kept = this.kept.get(item.id);
    if (kept === undefined) {
      kept = { element: this.make(item), signature };
      this.kept.set(item.id, kept);
    } else if (kept.signature !== signature) {
      this.refresh(kept.element, item);
      kept.signature = signature;
    }
    return kept.element;
  }

  /**
   * Brings `element`, the row of `item` drawn here, up to date now, out of a render (a tap shows
   * on its row at once); what it shows is remembered, so the next render neither draws it again
   * nor leaves it as it is when the item changed once more.
   * @param {HTMLElement} element
   * @param {{ id: string }} item
   */
  show(element, item) {
    this.refresh(element, item);
    const kept = this.kept.get(item.id);
    if (kept?.element === element) kept.signature = this.signature(item);
  }

  /**
   * Makes `container`'s children the rows of `items`, in order, touching only what differs.
   * @param {HTMLElement} container
   * @param {{ id: string }[]} items
   */
  render(container, items) {
    reconcile(container, items.map((item) => this.row(item)));
  }

  /**
   * Forgets the rows of items no longer on the list (the cache stays as large as the list).
   * @param {Set<string>} ids the items that may still be shown
   */
  keepOnly(ids) {
    for (const id of this.kept.keys()) if (!ids.has(id)) this.kept.delete(id);
  }
}

/**
 * Makes `container`'s children exactly `wanted`, in order: first the children that are not
 * wanted go, then each wanted node that is not in its place is moved there. A change of one row
 * moves one node; nothing that is in place is touched.
 * @param {Element} container
 * @param {Node[]} wanted
 */
export function reconcile(container, wanted) {
  const keep = new Set(wanted);
  for (const child of [...container.childNodes]) if (!keep.has(child)) child.remove();
  let current = container.firstChild;
  for (const node of wanted) {
    if (node === current) {
      current = current.nextSibling;
    } else {
      container.insertBefore(node, current);
    }
  }
}

/**
 * Rows by place, for matches that change order on every keystroke: the container keeps one row
 * per place and each is brought up to date with the item now at its place (a changed text costs
 * the browser less than a row made again, which a moved row is).
 */
export class Slots extends Rows {
  /** @type {WeakMap<Element, string>} what each row shows (`refresh` sets a row's id too) */
  shown = new WeakMap();

  /**
   * Makes `container`'s children one row for each of `items`, in order.
   * @param {HTMLElement} container
   * @param {{ id: string }[]} items
   */
  render(container, items) {
    while (container.childElementCount > items.length) container.lastElementChild?.remove();
    items.forEach((item, i) => {
      const signature = item.id + "\u0000" + this.signature(item);
      const element = container.children[i];
      if (element === undefined) {
        const made = this.make(item);
        this.shown.set(made, signature);
        container.append(made);
      } else if (this.shown.get(element) !== signature) {
        this.refresh(/** @type {HTMLElement} */ (element), item);
        this.shown.set(element, signature);
      }
    });
  }

  /**
   * Brings `element`, the row at one place here, up to date with `item` now (Rows.show).
   * @param {HTMLElement} element
   * @param {{ id: string }} item
   */
  show(element, item) {
    this.refresh(element, item);
    this.shown.set(element, item.id + "\u0000" + this.signature(item));
  }
}

/**
 * Resolves after the browser drew its next frame (at most 50 ms later, or at once in a hidden
 * page, which draws none).
 * @returns {Promise<void>}
 */
export function nextPaint() {
  return new Promise((resolve) => {
    if (typeof requestAnimationFrame !== "function" || typeof document === "undefined" || document.hidden) return resolve();
    const timer = setTimeout(resolve, 50);
    requestAnimationFrame(() => setTimeout(() => {
      clearTimeout(timer);
      resolve();
    }, 0));
  });
}

/**
 * Runs `work` when the page is idle, with how many milliseconds it may take before it should
 * give the page back (requestIdleCallback's deadline; where a browser has none, as Safari, a
 * timer and 8 ms).
 * @param {(timeLeft: () => number) => void} work
 */
export function whenIdle(work) {
  if (typeof requestIdleCallback === "function") {
    requestIdleCallback((deadline) => work(() => deadline.timeRemaining()), { timeout: 2000 });
  } else {
    setTimeout(() => {
      const until = performance.now() + 8;
      work(() => Math.max(0, until - performance.now()));
    }, 50);
  }
}
