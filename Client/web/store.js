// The device's copy of its lists, in IndexedDB: every register, the operations not yet pushed
// (the outbox), every write seen on each item (history), the undo journal, each list's sync
// state, the clock and the account. Nothing of it lives in a URL or in localStorage.

/** @typedef {import("./ops.js").Op} Op */
/**
 * A list's sync state, as Swift's SyncState names it: the server's epoch and the cursor of the
 * last page pulled, whether the server knows the list, this account's role, whether it is no
 * longer a member, whether the history kept here lacks what a compaction dropped.
 * @typedef {{ id: string, role: string | null, epoch: string | null, cursor: number,
 *   isRegistered: boolean, noLongerMember: boolean, historyIncomplete: boolean,
 *   snapshotCursor?: number }} SyncRecord
 */
/**
 * One register a command's write replaced: the item and field, whether the item existed before,
 * and the value before (undefined: the register was never written).
 * @typedef {{ item: string, field: string, existed: boolean, before?: import("./ops.js").Value }} JournalRow
 */
/**
 * A step of the undo journal: one local command, with the registers its writes replaced (null: a
 * step too large to undo, a barrier).
 * @typedef {{ seq: number, list: string, label: import("./phrases.js").Did, rows: JournalRow[] | null }} JournalStep
 */
/**
 * What this phone hears by push notification (push-settings.js): the lists, the kinds, the
 * server's id of the subscription and the key it was made for.
 * @typedef {{ lists: string[], kinds: string[], id?: string, key?: string }} PushChoice
 */
/**
 * The device's settings: its clock, the replica ids its pages wrote under, the correction of its
 * wall clock, the account signed in, and the keys of its encrypted lists (text by list id).
 * @typedef {{ clock?: string, replicas?: string[], clockOffset?: number,
 *   account?: { name: string, token: string | null, tokenID?: string },
 *   push?: PushChoice, news?: Record<string, [string, string, boolean][]>,
 *   trips?: Record<string, { shop: string, started: number }>, keys?: Record<string, string>,
 *   accountKey?: string, delivered?: Record<string, number> }} Meta
 */
/**
 * What one `write` changes (see there).
 * @typedef {{ meta?: Record<string, any>, lists?: SyncRecord[], registers?: Op[],
 *   registersRemove?: { list: string, item: string, field: string }[], outboxAdd?: Op[], outboxRemove?: Op[],
 *   removeList?: string | null, history?: Op[], historyRemove?: Op[], journalAdd?: JournalStep[],
 *   journalRemove?: number[] }} StoreWrite
 */

import { LIST_ITEM } from "./ids.js";

const NAME = "basket";
const VERSION = 3;

/**
 * Opens (and on first use creates, or brings up to this version) the database.
 * @returns {Promise<Store>}
 */
export function open(name = NAME) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, VERSION);
    request.onupgradeneeded = (event) => {
      const db = request.result;
      if (event.oldVersion < 1) {
        db.createObjectStore("meta");
        db.createObjectStore("lists", { keyPath: "id" });
        const registers = db.createObjectStore("registers", { keyPath: ["list", "item", "field"] });
        registers.createIndex("list", "list");
        const outbox = db.createObjectStore("outbox", { keyPath: ["list", "item", "field", "ts", "replica"] });
        outbox.createIndex("list", "list");
      }
      if (event.oldVersion < 2) {
        // Version 2: every write seen on each item (its history, as the CLI's `history` shows
        // it), and the undo journal, which outlives the page.
        const history = db.createObjectStore("history", { keyPath: ["list", "item", "field", "ts", "replica"] });
        history.createIndex("list", "list");
        history.createIndex("item", ["list", "item"]);
        const journal = db.createObjectStore("journal", { keyPath: "seq" });
        journal.createIndex("list", "list");
        // What a version 1 device knew of its items' history: the writes in their registers.
        if (event.oldVersion >= 1) {
          const cursor = /** @type {IDBTransaction} */ (request.transaction).objectStore("registers").openCursor();
          cursor.onsuccess = () => {
            if (!cursor.result) return;
            history.put(cursor.result.value);
            cursor.result.continue();
          };
        }
      }
    };
    // Version 3: the history's check-offs found by list and field (shops and usuals: the times
    // items were bought, and the order a trip checked them off in), without reading every write.
    request.addEventListener("upgradeneeded", (event) => {
      if (event.oldVersion >= 3) return;
      /** @type {IDBTransaction} */ (request.transaction).objectStore("history").createIndex("field", ["list", "field"]);
    });
    request.onsuccess = () => resolve(new Store(request.result));
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error("another tab holds an older version of Basket's data open"));
  });
}

const STORES = ["meta", "lists", "registers", "outbox", "history", "journal"];

/**
 * @template T
 * @param {IDBRequest<T>} request
 * @returns {Promise<T>}
 */
function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

export class Store {
  /** @param {IDBDatabase} db */
  constructor(db) {
    this.db = db;
  }

  /** Everything a start needs: { meta, lists, registers, outbox, journal } (history is read per item). */
  async loadAll() {
    const tx = this.db.transaction(["meta", "lists", "registers", "outbox", "journal"], "readonly");
    /** @type {Record<string, any>} */
    const meta = {};
    const keys = await done(tx.objectStore("meta").getAllKeys());
    const values = await done(tx.objectStore("meta").getAll());
    keys.forEach((key, i) => (meta[String(key)] = values[i]));
    const lists = await done(tx.objectStore("lists").getAll());
    const registers = await done(tx.objectStore("registers").getAll());
    const outbox = await done(tx.objectStore("outbox").getAll());
    const journal = await done(tx.objectStore("journal").getAll());
    return {
      meta: /** @type {Meta} */ (meta),
      lists: /** @type {SyncRecord[]} */ (lists),
      registers: /** @type {Op[]} */ (registers),
      outbox: /** @type {Op[]} */ (outbox),
      journal: /** @type {JournalStep[]} */ (journal),
    };
  }

  /**
   * The names of `items` of `list` this device has, the list's title, and its keys when it is
   * encrypted: what a push notification names and opens (the service worker reads them; it keeps
   * nothing of its own).
   * @param {string} list
   * @param {string[]} items
   * @returns {Promise<{ title: string | null, names: Map<string, string>, keys: string | null }>}
   */
  async names(list, items) {
    const tx = this.db.transaction(["registers", "meta"], "readonly");
    const registers = tx.objectStore("registers");
    const title = await done(registers.get([list, LIST_ITEM, "title"]));
    const keys = await done(tx.objectStore("meta").get("keys"));
    /** @type {Map<string, string>} */
    const names = new Map();
    for (const item of items) {
      const op = await done(registers.get([list, item, "name"]));
      if (op && typeof op.value === "string") names.set(item, op.value);
    }
    const text = keys && typeof keys === "object" ? keys[list] : undefined;
    return { title: title && typeof title.value === "string" ? title.value : null, names, keys: typeof text === "string" ? text : null };
  }

  /**
   * Every write of `checked` seen on a list's items (its history's), in no particular order.
   * @param {string} list
   * @returns {Promise<Op[]>}
   */
  async checks(list) {
    const tx = this.db.transaction(["history"], "readonly");
    return done(tx.objectStore("history").index("field").getAll(IDBKeyRange.only([list, "checked"])));
  }

  /**
   * Every write seen on one item of a list (its history), in no particular order.
   * @param {string} list
   * @param {string} item
   * @returns {Promise<Op[]>}
   */
  async history(list, item) {
    const tx = this.db.transaction(["history"], "readonly");
    return done(tx.objectStore("history").index("item").getAll(IDBKeyRange.only([list, item])));
  }

  /**
   * Writes in one transaction: `meta` entries, `lists` records, `registers` (ops that won their
   * register) and registers forgotten (`registersRemove`: { list, item, field }), outbox
   * additions and removals, writes seen (`history`) and writes forgotten
   * (`historyRemove`: re-stamped before anyone saw them), undo steps added and removed (by
   * `seq`). All of it or nothing.
   * @param {StoreWrite} changes
   * @returns {Promise<void>}
   */
  write({
    meta = {}, lists = [], registers = [], registersRemove = [], outboxAdd = [], outboxRemove = [], removeList = null,
    history = [], historyRemove = [], journalAdd = [], journalRemove = [],
  }) {
    const tx = this.db.transaction(STORES, "readwrite");
    for (const [key, value] of Object.entries(meta)) {
      if (value === undefined) tx.objectStore("meta").delete(key);
      else tx.objectStore("meta").put(value, key);
    }
    const key = (/** @type {Op} */ op) => [op.list, op.item, op.field, op.ts, op.replica];
    for (const list of lists) tx.objectStore("lists").put(list);
    for (const op of registers) tx.objectStore("registers").put(op);
    for (const r of registersRemove) tx.objectStore("registers").delete([r.list, r.item, r.field]);
    for (const op of outboxAdd) tx.objectStore("outbox").put(op);
    for (const op of outboxRemove) tx.objectStore("outbox").delete(key(op));
    for (const op of history) tx.objectStore("history").put({ list: op.list, item: op.item, field: op.field, ts: op.ts, replica: op.replica, value: op.value });
    for (const op of historyRemove) tx.objectStore("history").delete(key(op));
    for (const step of journalAdd) tx.objectStore("journal").put(step);
    for (const seq of journalRemove) tx.objectStore("journal").delete(seq);
    if (removeList !== null) {
      tx.objectStore("lists").delete(removeList);
      const range = IDBKeyRange.only(removeList);
      for (const name of ["registers", "outbox", "history", "journal"]) {
        const cursor = tx.objectStore(name).index("list").openKeyCursor(range);
        cursor.onsuccess = () => {
          if (cursor.result) {
            tx.objectStore(name).delete(cursor.result.primaryKey);
            cursor.result.continue();
          }
        };
      }
    }
    // Every request is made: committed now, not once the page has seen each of them succeed (a
    // local write is drawn only after its commit, so this wait is on the tap's way to the screen).
    // A list's removal walks cursors, which ask for more as they go: it commits by itself.
    if (removeList === null) tx.commit?.();
    return new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("the write was aborted"));
    });
  }

  /** Forgets everything (signing out of this device). */
  async clear() {
    const tx = this.db.transaction(STORES, "readwrite");
    for (const name of STORES) tx.objectStore(name).clear();
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
  }
}
