// The device's copy of its lists, in IndexedDB: every register, the operations not yet pushed
// (the outbox), each list's sync state, the clock and the account. Nothing of it lives in a URL
// or in localStorage.

const NAME = "basket";
const VERSION = 1;

/** Opens (and on first use creates) the database. */
export function open(name = NAME) {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      db.createObjectStore("meta");
      db.createObjectStore("lists", { keyPath: "id" });
      const registers = db.createObjectStore("registers", { keyPath: ["list", "item", "field"] });
      registers.createIndex("list", "list");
      const outbox = db.createObjectStore("outbox", { keyPath: ["list", "item", "field", "ts", "replica"] });
      outbox.createIndex("list", "list");
    };
    request.onsuccess = () => resolve(new Store(request.result));
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error("another tab holds an older version of Basket's data open"));
  });
}

function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

export class Store {
  constructor(db) {
    this.db = db;
  }

  /** Everything, to start with: { meta, lists, registers, outbox }. */
  async loadAll() {
    const tx = this.db.transaction(["meta", "lists", "registers", "outbox"], "readonly");
    const meta = {};
    const keys = await done(tx.objectStore("meta").getAllKeys());
    const values = await done(tx.objectStore("meta").getAll());
    keys.forEach((key, i) => (meta[key] = values[i]));
    const lists = await done(tx.objectStore("lists").getAll());
    const registers = await done(tx.objectStore("registers").getAll());
    const outbox = await done(tx.objectStore("outbox").getAll());
    return { meta, lists, registers, outbox };
  }

  /**
   * Writes in one transaction: `meta` entries, `lists` records, `registers` (ops that won their
   * register), outbox additions and removals. All of it or nothing.
   */
  write({ meta = {}, lists = [], registers = [], outboxAdd = [], outboxRemove = [], removeList = null }) {
    const tx = this.db.transaction(["meta", "lists", "registers", "outbox"], "readwrite");
    for (const [key, value] of Object.entries(meta)) {
      if (value === undefined) tx.objectStore("meta").delete(key);
      else tx.objectStore("meta").put(value, key);
    }
    for (const list of lists) tx.objectStore("lists").put(list);
    for (const op of registers) tx.objectStore("registers").put(op);
    for (const op of outboxAdd) tx.objectStore("outbox").put(op);
    for (const op of outboxRemove) tx.objectStore("outbox").delete([op.list, op.item, op.field, op.ts, op.replica]);
    if (removeList !== null) {
      tx.objectStore("lists").delete(removeList);
      const range = IDBKeyRange.only(removeList);
      for (const name of ["registers", "outbox"]) {
        const cursor = tx.objectStore(name).index("list").openKeyCursor(range);
        cursor.onsuccess = () => {
          if (cursor.result) {
            tx.objectStore(name).delete(cursor.result.primaryKey);
            cursor.result.continue();
          }
        };
      }
    }
    return new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("the write was aborted"));
    });
  }

  /** Forgets everything (signing out of this device). */
  async clear() {
    const tx = this.db.transaction(["meta", "lists", "registers", "outbox"], "readwrite");
    for (const name of ["meta", "lists", "registers", "outbox"]) tx.objectStore(name).clear();
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
  }
}
