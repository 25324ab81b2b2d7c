// Keyed rows: a list of 2,000 items is not drawn again for one change. Each item keeps its row
// element; a change updates the rows whose item changed, in place, and moves, adds or removes
// only the rows whose place changed. What a slow phone can afford on every tap and keystroke.

/**
 * @template T
 * @typedef {{ element: HTMLElement, signature: string }} Kept
 */

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

  /** Forgets every row (the list's rules for rows changed: read-only, say). */
  clear() {
    this.kept.clear();
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
