// A list's merged state: one last-writer-wins register per (item, field), as BasketCore's
// Register and the replica keep them. Applying the same operations in any order, any number of
// times, gives the same state.
import { LIST_ITEM } from "./ids.js";
import { ITEM_FIELDS, initialValue } from "./field.js";
import { parseLearned } from "./shops.js";
import { milliseconds } from "./clock.js";

/**
 * An item as the merged state shows it (BasketCore's Item): its id and one property per field of
 * ITEM_FIELDS, named as the field.
 * @typedef {{ id: string, name: string, checked: boolean, deleted: boolean, quantity: string | null, note: string | null, category: string | null, typed: string | null, shops: string | null, places: string | null, dismissed: string | null }} Item
 */
/** @typedef {import("./ops.js").Value} Value */
/** @typedef {import("./ops.js").Op} Op */
/**
 * A register: the winning write's stamp, replica and value (BasketCore's Register).
 * @typedef {{ ts: string, replica: string, value: Value }} Register
 */
/**
 * An item's registers by field.
 * @typedef {Record<string, Register>} Registers
 */

/** Orders values written with the same version (a correct replica never writes two):
 * null < false < true < text, texts by their UTF-8 bytes. Returns whether a < b. */
/**
 * @param {Value} a
 * @param {Value} b
 */
export function valueLess(a, b) {
  const rank = (/** @type {Value} */ v) => (v === null ? 0 : v === false ? 1 : v === true ? 2 : 3);
  if (rank(a) !== rank(b)) return rank(a) < rank(b);
  if (typeof a !== "string" || typeof b !== "string") return false;
  return compareUTF8(a, b) < 0;
}

const utf8 = new TextEncoder();

/**
 * Compares two strings by their UTF-8 bytes (JavaScript compares UTF-16 units).
 * @param {string} a
 * @param {string} b
 */
export function compareUTF8(a, b) {
  if (a === b) return 0;
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * Whether a write (ts, replica, value) beats the register `current` ({ ts, replica, value }).
 * @param {{ ts: string, replica: string, value: Value }} write
 * @param {Register | undefined} current
 */
export function beats(write, current) {
  if (current === undefined) return true;
  if (write.ts !== current.ts) return write.ts > current.ts;
  if (write.replica !== current.replica) return write.replica > current.replica;
  return valueLess(current.value, write.value);
}

/** How many changes `ListState.changedSince` can name: more, and a screen looks at every item. */
const CHANGE_LOG = 256;

/**
 * A shop of a list (Replica+Shops.swift's Shop): its name, whether removed, its hand-set order,
 * pinned aisles and what trips taught.
 * @typedef {{ id: string, name: string, removed: boolean, order: string[], pinned: string[], learned: import("./shops.js").Learned | null }} Shop
 */

/** The registers of one list. */
export class ListState {
  /**
   * @param {string} list
   */
  constructor(list) {
    this.list = list;
    /** @type {Map<string, Registers>} item id → its registers */
    this.items = new Map();
    /** Every check-off seen (a `checked = true` write): item id → stamp → replica; what usuals
     * and a trip's order are found from (the `purchases` table in Swift).
     * @type {Map<string, Map<string, string>>} */
    this.checks = new Map();
    /** The same check-offs' milliseconds by item, in the order they were seen (what usuals read).
     * @type {Map<string, number[]>} */
    this.checkTimes = new Map();
    /** How many times a register changed: a screen recomputes what it shows only when it moved. */
    this.changes = 0;
    /** The items of the last changes, oldest first (at most CHANGE_LOG): what `changedSince` reads. */
    /** @type {string[]} */
    this.changeLog = [];
  }

  /**
   * Notes the check-offs among `ops` (writes seen, winning or not).
   * @param {Op[]} ops
   */
  noteChecks(ops) {
    for (const op of ops) {
      if (op.field !== "checked" || op.value !== true || op.item === LIST_ITEM) continue;
      let stamps = this.checks.get(op.item);
      if (stamps === undefined) this.checks.set(op.item, (stamps = new Map()));
      if (stamps.has(op.ts) && stamps.get(op.ts) === op.replica) continue;
      stamps.set(op.ts, op.replica);
      let times = this.checkTimes.get(op.item);
      if (times === undefined) this.checkTimes.set(op.item, (times = []));
      times.push(milliseconds(op.ts));
    }
  }

  /**
   * The list's shops, removed ones only with `removed`, by name (Replica.shops(in:removed:)).
   * @returns {Shop[]}
   */
  shops(removed = false) {
    /** @type {Shop[]} */
    const out = [];
    for (const [id, r] of this.items) {
      const name = r.shop?.value;
      if (id === LIST_ITEM || typeof name !== "string" || name === "") continue;
      const shop = {
        id, name, removed: r.shopRemoved?.value === true,
        order: typeof r.order?.value === "string" ? aisleNames(r.order.value) : [],
        pinned: typeof r.pinned?.value === "string" ? aisleNames(r.pinned.value) : [],
        learned: parseLearned(r.learned?.value),
      };
      if (removed || !shop.removed) out.push(shop);
    }
    return out.sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : a.id < b.id ? -1 : 1));
  }

  /** @param {string} item */
  changed(item) {
    this.changes += 1;
    this.changeLog.push(item);
    if (this.changeLog.length > 2 * CHANGE_LOG) this.changeLog.splice(0, this.changeLog.length - CHANGE_LOG);
  }

  /**
   * The items whose registers changed since the state's `changes` was `then`, or null when that
   * is too long ago to say (a screen then looks at every item again).
   * @param {number} then
   * @returns {Set<string> | null}
   */
  changedSince(then) {
    const count = this.changes - then;
    if (count < 0 || count > CHANGE_LOG || count > this.changeLog.length) return null;
    return new Set(this.changeLog.slice(this.changeLog.length - count));
  }

  /**
   * Merges one operation into its register (Register.merge in Swift); returns whether the
   * register changed.
   * @param {Op} op
   */
  merge(op) {
    let registers = this.items.get(op.item);
    if (registers === undefined) {
      registers = {};
      this.items.set(op.item, registers);
    }
    if (!beats(op, registers[op.field])) return false;
    registers[op.field] = { ts: op.ts, replica: op.replica, value: op.value };
    this.changed(op.item);
    return true;
  }

  /**
   * The writes of `ops` that would win their registers, taken in order, without applying them:
   * a local write is stored first and shown after (Replica.performLocal).
   * @param {Op[]} ops
   */
  winners(ops) {
    /** @type {Map<string, Register | undefined>} */
    const taken = new Map();
    return ops.filter((op) => {
      const key = op.item + "\u0000" + op.field;
      const current = taken.has(key) ? taken.get(key) : this.items.get(op.item)?.[op.field];
      if (!beats(op, current)) return false;
      taken.set(key, op);
      return true;
    });
  }

  /**
   * The register of an item's field as stored: { list, item, field, ts, replica, value }.
   * @param {string} item
   * @param {string} field
   */
  register(item, field) {
    const current = this.items.get(item)?.[field];
    return current === undefined ? undefined : { list: this.list, item, field, ...current };
  }

  /**
   * Whether the register of `op`'s item and field holds exactly this write (its stamp and replica).
   * @param {{ item: string, field: string, ts: string, replica: string }} op
   */
  holds(op) {
    const current = this.items.get(op.item)?.[op.field];
    return current !== undefined && current.ts === op.ts && current.replica === op.replica;
  }

  /**
   * Puts a write into its register whatever it holds: only for a write stamped anew that
   * replaces the register's own (Replica.restamp).
   * @param {Op} op
   */
  put(op) {
    let registers = this.items.get(op.item);
    if (registers === undefined) {
      registers = {};
      this.items.set(op.item, registers);
    }
    registers[op.field] = { ts: op.ts, replica: op.replica, value: op.value };
    this.changed(op.item);
  }

  /**
   * Sets every register of an item at once (none: the item is forgotten): what a discarded
   * change leaves (Replica.discardPending).
   * @param {string} item
   * @param {Registers} registers
   */
  replaceItem(item, registers) {
    if (Object.keys(registers).length === 0) this.items.delete(item);
    else this.items.set(item, { ...registers });
    this.changed(item);
  }

  /**
   * The value of a register (undefined when never written).
   * @param {string} item
   * @param {string} field
   * @returns {Value | undefined}
   */
  value(item, field) {
    return this.items.get(item)?.[field]?.value;
  }

  /** The list's title, aisle order (names), whether it is archived and its aisles' language (ListInfo). */
  get info() {
    const title = this.value(LIST_ITEM, "title");
    const aisles = this.value(LIST_ITEM, "aisles");
    const language = this.value(LIST_ITEM, "language");
    return {
      title: typeof title === "string" ? title : "(untitled)",
      aisles: typeof aisles === "string" ? aisleNames(aisles) : [],
      archived: this.value(LIST_ITEM, "archived") === true,
      language: typeof language === "string" && /^[a-z]{2,3}$/.test(language) ? language : null,
    };
  }

  /** Every item with a name (removed ones too), as { id, name, checked, deleted, quantity, note, category }. */
  allItems() {
    /** @type {Item[]} */
    const out = [];
    for (const [id, registers] of this.items) {
      if (id === LIST_ITEM || typeof registers.name?.value !== "string") continue;
      out.push(itemOf(id, registers));
    }
    return out;
  }

  /**
   * The item `id`, or undefined when it has no name.
   * @param {string} id
   * @returns {Item | undefined}
   */
  item(id) {
    const registers = this.items.get(id);
    if (registers === undefined || typeof registers.name?.value !== "string") return undefined;
    return itemOf(id, registers);
  }
}

/**
 * The item whose registers are `registers`: every field of ITEM_FIELDS, a field not written
 * holding its initial value (Item(id:values:) in Swift).
 * @param {string} id
 * @param {Registers} registers
 */
function itemOf(id, registers) {
  /** @type {Record<string, any>} */
  const item = { id };
  for (const field of ITEM_FIELDS) {
    const value = registers[field]?.value;
    item[field] = value === undefined ? initialValue(field) : value;
  }
  return /** @type {Item} */ (item);
}

/**
 * The category names of a stored aisle order ("produce, dairy").
 * @param {string} text
 */
export function aisleNames(text) {
  return text
    .split(",")
    .map((name) => name.split(" ").filter((word) => word !== "").join(" "))
    .filter((name) => name !== "");
}
