// The device's replica (BasketReplica's Replica and its extensions): every list's registers in
// memory (ListState), saved to IndexedDB with each change, the outbox of local operations not yet
// pushed, the undo journal and the hybrid clock. Local writes follow BasketReplica's rules (adding
// a name that exists un-deletes and un-checks it, never a second row); remote operations merge by
// the registers' last-writer-wins order. One class, in the order of the Swift files: storage and
// reads (Replica.swift, Replica+Reads.swift), local writes and undo (Replica+Writes.swift,
// Replica+Undo.swift), sync bookkeeping (Replica+Sync.swift, Replica+Membership.swift).
import { adding } from "./quantity.js";
import { ListState, beats } from "./state.js";
import { LIST_ITEM, itemID, shopID as plainShopID, randomListID, randomReplicaID } from "./ids.js";
import { normalize, clean } from "./key.js";
import * as clock from "./clock.js";
import { validate, identity as identityOf } from "./ops.js";
import { ITEM_FIELDS, SETTABLE_ITEM_FIELDS, fieldCode, fieldInfo, initialValue } from "./field.js";
import { CannotUndo, MAX_CLOCK_CORRECTION, MAX_UNDOABLE_WRITES, ReplicaError, UNDO_DEPTH } from "./replica-types.js";
import { didPhrase } from "./phrases.js";
import { SealKeyring } from "./keyring.js";

/**
 * `raw` cleaned as a value of `field`; a refused value throws ReplicaError("invalid_name").
 * @param {string} raw
 * @param {string} field
 */
export function cleaned(raw, field) {
  try {
    return clean(raw, field);
  } catch (error) {
    throw new ReplicaError("invalid_name", error instanceof Error ? error.message : String(error));
  }
}

/**
 * The note an add leaves: `added` joined to the `existing` note of an item still to buy, unless it
 * is in it already or the two exceed a note's bytes (then the note stays) (Replica.note(_:adding:)).
 * @param {string} added
 * @param {string | null} existing
 */
function noteAdding(added, existing) {
  if (existing === null || existing === "") return added;
  if (existing.includes(added)) return existing;
  const joined = existing + "; " + added;
  return new TextEncoder().encode(joined).length <= (fieldInfo("note")?.maxBytes ?? 0) ? joined : existing;
}

/** @typedef {import("./ops.js").Op} Op */
/** @typedef {import("./ops.js").Value} Value */
/** @typedef {import("./state.js").Item} Item */
/** @typedef {import("./store.js").Store} Store */
/** @typedef {import("./store.js").SyncRecord} SyncRecord */
/** @typedef {import("./store.js").JournalStep} JournalStep */
/** @typedef {import("./phrases.js").Did} Did */
/** @typedef {import("./store.js").JournalRow} JournalRow */
/** @typedef {import("./store.js").Meta} Meta */
/** @typedef {import("./store.js").StoreWrite} StoreWrite */
/** @typedef {import("./replica-types.js").LostWrite} LostWrite */
/**
 * One list here: its registers and its sync state.
 * @typedef {{ state: ListState, sync: SyncRecord }} ListEntry
 */
/**
 * A local write before it is stamped: the register and the value.
 * @typedef {{ item: string, field: string, value: Value }} Write
 */
/**
 * What a list's sync state changes to (a part of SyncRecord).
 * @typedef {Partial<SyncRecord>} SyncChanges
 */
/**
 * Writes another tab made and saved, as it posts them: the list, the writes, the clock after,
 * the sync state after, and the writes they replace in their registers (a re-stamp).
 * @typedef {{ list: string, ops: Op[], clock?: string, sync?: SyncChanges, replaced?: Op[] }} TabMessage
 */
/**
 * What an add did to one entry (AddResult in Swift).
 * @typedef {{ item: Item, outcome: "added" | "restored" | "unchecked" | "alreadyOnList", quantityChanged: boolean, before: Item | null }} AddResult
 */

export class Replica {
  /**
   * @param {Store} store
   */
  constructor(store) {
    this.store = store;
    /** @type {Map<string, ListEntry>} every list here: its registers and its sync state */
    this.entries = new Map();
    /** @type {Map<string, Map<string, Op>>} list id → its pending writes by identity, in order */
    this.outbox = new Map();
    /** Lists this page forgot (deleted, removed from the device): an answer about one that
     * arrives after does not bring it back, until it is joined again. @type {Set<string>} */
    this.forgotten = new Set();
    /** @type {Set<(list: string | null) => void>} */
    this.listeners = new Set();
    /** @type {Meta} */
    this.meta = {};
    /** @type {BroadcastChannel | null} the other tabs of this device */
    this.channel = null;
    /**
     * The undo journal of this device, oldest first: one step per local command, with the
     * registers its writes replaced. A step that was too large is a barrier (`rows` null). Kept
     * in IndexedDB with the writes (`seq` orders the steps), so it outlives the page.
     * @type {JournalStep[]}
     */
    this.journal = [];
    /** The replica id this page writes under (open gives each page its own). */
    this.sessionReplica = "";
    /** The wall clock in Unix milliseconds (the conformance vectors set their own). */
    this.now = () => Date.now();
    /**
     * This device's writes that another member's later ones replaced, until the app tells them
     * (takeLostWrites): Replica+News.swift's `lost`.
     * @type {LostWrite[]}
     */
    this.lost = [];
    /** The keys of this device's encrypted lists (kept in `meta.keys`, loaded at open). */
    this.keyring = new SealKeyring();
  }

  /**
   * Keeps `text`, the keys of the encrypted list `list` (made here, or from an invite), in the
   * keyring and in this device's storage (Replica.saveKeys). Throws a SealError for text that is
   * not keys of `list`.
   * @param {string} text
   * @param {string} list
   */
  async saveKeys(text, list) {
    await this.keyring.load(text, list);
    const keys = { ...(this.meta.keys ?? {}), [list]: text };
    this.meta.keys = keys;
    await this.persist({ meta: { keys } });
  }

  /**
   * Whether `list` is encrypted end to end and this device holds its keys.
   * @param {string} list
   */
  isEncrypted(list) {
    return this.keyring.sealing(list) !== undefined;
  }

  /**
   * The id of the item with key `key` in `list`: keyed by the list's keys when it is encrypted.
   * @param {string} list
   * @param {string} key
   */
  async itemIDOf(list, key) {
    return (await this.keyring.sealing(list)?.itemID(key)) ?? itemID(list, key);
  }

  /**
   * The id of the shop with key `key` in `list`: keyed by the list's keys when it is encrypted.
   * @param {string} list
   * @param {string} key
   */
  async shopIDOf(list, key) {
    return (await this.keyring.sealing(list)?.shopID(key)) ?? plainShopID(list, key);
  }

  /**
   * Opens the replica kept in `store`.
   * @param {Store} store
   */
  static async open(store) {
    const replica = new Replica(store);
    const { meta, lists, registers, outbox, journal } = await store.loadAll();
    replica.meta = meta;
    for (const [list, text] of Object.entries(meta.keys ?? {})) {
      try {
        await replica.keyring.load(text, list);
      } catch {
        // Keys that are not keys: the list stays unreadable here, the others open.
      }
    }
    replica.journal = journal.sort((a, b) => a.seq - b.seq);
    if (!meta.clock) {
      replica.meta.clock = clock.ZERO;
      await store.write({ meta: { clock: clock.ZERO } });
    }
    // Each open page writes under a replica id of its own: two tabs share the IndexedDB data and
    // could otherwise stamp two different writes with the same (timestamp, replica), which the
    // server would keep only one of.
    replica.sessionReplica = randomReplicaID();
    await replica.rememberReplica();
    // Other tabs' writes, as they make them (they saved them already; the writer pushes them).
    if (typeof BroadcastChannel === "function") {
      replica.channel = new BroadcastChannel("basket-writes");
      replica.channel.onmessage = (event) => replica.receiveFromTab(event.data);
    }
    for (const sync of lists) replica.entries.set(sync.id, { state: new ListState(sync.id), sync: upgradeSync(sync) });
    for (const op of registers) replica.entry(op.list).state.merge(op);
    for (const sync of lists) replica.entry(sync.id).state.noteChecks(await store.checks(sync.id));
    for (const op of outbox) replica.pending(op.list).set(identityOf(op), op);
    return replica;
  }

  /**
   * Saves in IndexedDB at once, in the order the changes were made: IndexedDB runs read-write
   * transactions over the same stores in the order they were made (and a read after the writes
   * made before it), and every save is one over every store, made when asked for. Nothing waits
   * for a frame or for an earlier save to finish first: a write that waited was lost when the
   * page was reloaded, closed or killed meanwhile
   * (test_a_write_is_on_its_way_to_storage_when_the_tap_is_over).
   * @param {Parameters<import("./store.js").Store["write"]>[0]} changes
   */
  persist(changes) {
    return this.store.write(changes);
  }

  get replicaID() {
    return this.sessionReplica;
  }

  /** Keeps this page's replica id among the device's (the last 200): its history says "this device". */
  async rememberReplica() {
    const replicas = [...(this.meta.replicas ?? []), this.sessionReplica].slice(-200);
    this.meta.replicas = replicas;
    await this.persist({ meta: { replicas } });
  }

  /**
   * Whether this device wrote under `replica` (this page or an earlier one).
   * @param {string} replica
   */
  isOwnReplica(replica) {
    return replica === this.sessionReplica || (this.meta.replicas ?? []).includes(replica);
  }

  /**
   * Applies writes another tab made and saved ({ list, ops, clock }).
   * @param {TabMessage | null | undefined} message
   */
  receiveFromTab(message) {
    if (!message || typeof message.list !== "string" || !Array.isArray(message.ops)) return;
    const entry = this.entry(message.list);
    let changed = false;
    const replaced = Array.isArray(message.replaced) ? message.replaced : [];
    message.ops.forEach((/** @type {Op} */ op, /** @type {number} */ i) => {
      const old = replaced[i];
      if (old && entry.state.holds(old)) {
        entry.state.put(op);
        changed = true;
      } else changed = entry.state.merge(op) || changed;
    });
    entry.state.noteChecks(message.ops);
    if (typeof message.clock === "string" && message.clock > (this.meta.clock ?? clock.ZERO)) this.meta.clock = message.clock;
    if (message.sync) Object.assign(entry.sync, message.sync);
    if (changed || message.sync) this.notify(message.list);
  }

  /** Milliseconds now, corrected by what the server said its clock reads. */
  wall() {
    return this.now() + (this.meta.clockOffset ?? 0);
  }

  /**
   * @param {string} list
   * @returns {ListEntry}
   */
  entry(list) {
    let entry = this.entries.get(list);
    if (entry === undefined) {
      entry = { state: new ListState(list), sync: newSync(list) };
      this.entries.set(list, entry);
    }
    return entry;
  }

  /**
   * @param {string} list
   * @returns {Map<string, Op>}
   */
  pending(list) {
    let map = this.outbox.get(list);
    if (map === undefined) {
      map = new Map();
      this.outbox.set(list, map);
    }
    return map;
  }

  /**
   * Calls `listener(list)` after every change (null: the set of lists changed).
   * @param {(list: string | null) => void} listener
   */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * @param {string | null} list
   */
  notify(list) {
    for (const listener of this.listeners) listener(list);
  }

  // MARK: Reads

  /** Every list: [{ id, title, toBuy, total, role, archived, sync }], by title. */
  lists() {
    /** @type {{ id: string, title: string, toBuy: number, total: number, role: string | null, archived: boolean, sync: SyncRecord }[]} */
    const out = [];
    for (const [id, { state, sync }] of this.entries) {
      const items = state.allItems().filter((i) => !i.deleted);
      const info = state.info;
      out.push({
        id,
        title: info.title,
        toBuy: items.filter((i) => !i.checked).length,
        total: items.length,
        role: sync.role,
        archived: info.archived,
        sync,
      });
    }
    return out.sort((a, b) => a.title.toLowerCase().localeCompare(b.title.toLowerCase()) || (a.id < b.id ? -1 : 1));
  }

  /**
   * @param {string} list
   */
  state(list) {
    return this.entries.get(list)?.state;
  }

  /**
   * @param {string} list
   */
  syncState(list) {
    return this.entries.get(list)?.sync;
  }

  /**
   * Changes waiting to be sent, as a person counts them: each item (or the list itself) with
   * writes not yet sent is one change, however many fields were written (Replica.pendingChanges).
   * @param {string | null} [list]
   */
  pendingChanges(list = null) {
    const lists = list === null ? [...this.outbox.keys()] : [list];
    let total = 0;
    for (const id of lists) {
      const items = new Set();
      for (const op of this.outbox.get(id)?.values() ?? []) items.add(op.item);
      total += items.size;
    }
    return total;
  }

  /**
   * When each item was last added (the time of its last `deleted = false`), for search ties.
   * @param {string} list
   */
  lastUsed(list) {
    /** @type {Map<string, number>} */
    const out = new Map();
    const state = this.state(list);
    if (!state) return out;
    for (const [item, registers] of state.items) {
      if (registers.deleted && registers.deleted.value === false) out.set(item, clock.milliseconds(registers.deleted.ts));
    }
    return out;
  }
  // MARK: Local writes (Replica+Writes.swift, Replica+Undo.swift)


  /**
   * Writes local operations: stamps them, applies them, saves registers, outbox and clock. With
   * a `label`, the registers they replace become one step of the undo journal.
   * @param {string} list
   * @param {Write[]} writes
   * @param {SyncChanges | null} [syncChanges]
   * @param {Did | null} [label] what the step did, said when it is undone ("Checked bread")
   * @param {number[]} [undone] the undo steps these writes undo (they leave the journal with them)
   */
  async performLocal(list, writes, syncChanges = null, label = null, undone = []) {
    this.checkWritable(list, writes);
    let last = this.meta.clock ?? clock.ZERO;
    // One reading of the clock for the whole command, as BasketReplica's LocalWriter.
    const wall = this.wall();
    /** @type {Op[]} */
    const ops = [];
    for (const { item, field, value } of writes) {
      last = clock.next(last, wall);
      const op = { list, item, field, value, ts: last, replica: this.replicaID };
      validate(op);
      ops.push(op);
    }
    const entry = this.entry(list);
    const journal = label !== null ? this.journalStep(list, label, ops, entry.state) : { add: [], remove: [] };
    journal.remove.push(...undone);
    const winners = entry.state.winners(ops);
    // The clock moves now: a write made while this one is stored is stamped after it.
    this.meta.clock = last;
    const sync = syncChanges ? { ...entry.sync, ...syncChanges } : entry.sync;
    const changesBefore = entry.state.changes;
    // Stored first, shown after: what the screen draws, or says "Added" for, survives a reload or
    // a closed page at any moment after it (a page that goes away aborts the transaction it left
    // unfinished, and a write drawn from memory before its commit was lost).
    // Counted as waiting from now (the status line never says "Synced" while it is stored); the
    // push that sends it comes after this resolves, and IndexedDB runs its removal after this.
    for (const op of ops) this.pending(list).set(identityOf(op), op);
    try {
      await this.persist({
        meta: { clock: last }, lists: [sync], registers: winners, outboxAdd: ops, history: ops,
        journalAdd: journal.add, journalRemove: journal.remove,
      });
    } catch (error) {
      for (const op of ops) this.pending(list).delete(identityOf(op));
      throw error;
    }
    if (syncChanges) Object.assign(entry.sync, syncChanges);
    for (const op of ops) entry.state.merge(op);
    entry.state.noteChecks(ops);
    if (entry.state.changes !== changesBefore + winners.length) {
      // Another write reached these registers while this one was stored (a pull, another tab):
      // the registers are stored again as they stand now, the later write in each.
      const touched = new Map(ops.map((op) => [op.item + "\u0000" + op.field, entry.state.register(op.item, op.field)]));
      await this.persist({ registers: [...touched.values()].flatMap((r) => (r === undefined ? [] : [r])) });
    }
    this.channel?.postMessage({ list, ops, clock: last, sync: { ...entry.sync } });
    this.notify(list);
    return ops;
  }

  /**
   * Refuses a write to a list this account may only view, that is no longer shared with it, or
   * that is archived (which takes nothing but its unarchiving): Replica.checkWritable in Swift.
   * @param {string} list
   * @param {Write[]} writes
   */
  checkWritable(list, writes) {
    if (writes.length === 0) return;
    const sync = this.syncState(list);
    if (sync?.noLongerMember) throw new ReplicaError("no_longer_member", "this list is no longer shared with you");
    if (sync?.role === "viewer") throw new ReplicaError("read_only", "you can only view this list");
    if (this.state(list)?.value(LIST_ITEM, "archived") === true &&
        writes.some((w) => !(w.item === LIST_ITEM && w.field === "archived" && w.value === false))) {
      throw new ReplicaError("archived", "this list is archived: unarchive it to change it");
    }
  }

  /**
   * Records the registers `ops` will replace, as one step (Replica.journal in Swift). Returns
   * the steps to save and the ones to forget (beyond the journal's depth), by `seq`.
   * @param {string} list
   * @param {Did} label
   * @param {Op[]} ops
   * @param {ListState} state
   * @returns {{ add: JournalStep[], remove: number[] }}
   */
  journalStep(list, label, ops, state) {
    // Ordered, and unlike another tab's (each tab keeps the journal it read at its start).
    const seq = Math.max((this.journal.at(-1)?.seq ?? 0) + 1, Date.now() * 1024 + Math.floor(Math.random() * 1024));
    if (ops.length > MAX_UNDOABLE_WRITES) {
      this.journal.push({ seq, list, label, rows: null });
    } else {
      /** @type {JournalRow[]} */
      const rows = [];
      const seen = new Set();
      for (const op of ops) {
        const key = op.item + " " + op.field;
        if (seen.has(key)) continue;
        seen.add(key);
        const registers = state.items.get(op.item);
        const existed = registers !== undefined && Object.keys(registers).length > 0;
        const before = registers?.[op.field];
        rows.push({ item: op.item, field: op.field, existed, before: before === undefined ? undefined : before.value });
      }
      this.journal.push({ seq, list, label, rows });
    }
    const dropped = this.journal.length > UNDO_DEPTH ? this.journal.splice(0, this.journal.length - UNDO_DEPTH) : [];
    return { add: [/** @type {JournalStep} */ (this.journal.at(-1))], remove: dropped.map((step) => step.seq) };
  }

  /**
   * Whether `list` has a step to undo (the last step of another list does not count: undo is
   * bound to the list it was made on).
   * @param {string} list
   */
  canUndo(list) {
    return this.journal.some((step) => step.list === list);
  }

  /**
   * Undoes the last local command made on `list` that is not undone yet, as `basket undo` does:
   * every register it wrote gets the value it had before, by a new write (an item it added is
   * removed again; an item it removed comes back). Returns what the step did (phrases.js says
   * it), or null when there is nothing to undo on this list. Throws CannotUndo when that command
   * was too large.
   * @param {string} list
   * @returns {Promise<Did | null>}
   */
  async undo(list) {
    let index = -1;
    for (let i = this.journal.length - 1; i >= 0; i--) {
      if (this.journal[i].list === list) {
        index = i;
        break;
      }
    }
    if (index < 0) return null;
    const [step] = this.journal.splice(index, 1);
    if (step.rows === null) {
      const barred = this.journal.filter((s) => s.list === list).map((s) => s.seq);
      this.journal = this.journal.filter((s) => s.list !== list);
      await this.persist({ journalRemove: [step.seq, ...barred] });
      throw new CannotUndo(`“${didPhrase(step.label)}” changed more than undo keeps`);
    }
    /** @type {Write[]} */
    const writes = [];
    const removedAgain = new Set();
    // In the order BasketReplica reads its journal: by item id, then by the field's wire code.
    const rows = [...step.rows].sort((a, b) =>
      a.item < b.item ? -1 : a.item > b.item ? 1 : fieldCode(a.field) - fieldCode(b.field));
    for (const { item, field, existed, before } of rows) {
      if (!existed) {
        // The command made the item: undoing it removes it again (the list's own row: nothing).
        if (item !== LIST_ITEM && !removedAgain.has(item)) {
          removedAgain.add(item);
          writes.push({ item, field: "deleted", value: true });
        }
        continue;
      }
      if (before !== undefined) writes.push({ item, field, value: before });
      // Back to the value before any write; a name or a title has none to go back to.
      else if (fieldInfo(field)?.kind !== "text") writes.push({ item, field, value: initialValue(field) });
    }
    if (writes.length > 0) await this.performLocal(list, writes, null, null, [step.seq]);
    else await this.persist({ journalRemove: [step.seq] });
    return step.label;
  }

  /**
   * A new list on this device; the server learns of it at the next sync.
   * @param {string} title
   * @param {string | null} [language] the language its aisles are named in ("en"; Replica.createList)
   * @param {boolean} [encrypted] encrypted end to end: new keys, kept on this device
   */
  async createList(title, language = null, encrypted = false) {
    const value = cleaned(title, "title");
    const code = language === null ? null : checkedLanguage(language);
    const id = randomListID();
    if (encrypted) await this.saveKeys(await this.keyring.makeKeys(id), id);
    this.entry(id);
    /** @type {{ item: string, field: import("./field.js").Field, value: string }[]} */
    const writes = [{ item: LIST_ITEM, field: "title", value }];
    if (code !== null) writes.push({ item: LIST_ITEM, field: "language", value: code });
    await this.performLocal(id, writes, { role: "owner" });
    this.notify(null);
    return id;
  }

  /**
   * Sets the language a list's aisles are named in (an owner; Replica.setLanguage).
   * @param {string} list
   * @param {string} language
   */
  async setLanguage(list, language) {
    const value = checkedLanguage(language);
    const role = this.syncState(list)?.role ?? null;
    if (role !== null && role !== "owner") throw new ReplicaError("not_owner", "only an owner can change the list's language");
    await this.performLocal(list, [{ item: LIST_ITEM, field: "language", value }], null, { did: "language", language: value });
  }

  /**
   * @param {string} list
   * @param {string} title
   */
  async renameList(list, title) {
    const value = cleaned(title, "title");
    await this.performLocal(list, [{ item: LIST_ITEM, field: "title", value }], null, { did: "renamedList", title: value });
  }

  /**
   * The list's aisle order: category names, each once (by key), as Replica.setAisles.
   * @param {string} list
   * @param {string[]} aisles
   */
  async setAisles(list, aisles) {
    /** @type {string[]} */
    const names = [];
    const keys = new Set();
    for (const name of aisles) {
      const value = cleaned(name, "category");
      if (value.includes(",")) throw new ReplicaError("invalid_operation", "an aisle name holds no comma");
      if (!keys.has(normalize(value))) {
        keys.add(normalize(value));
        names.push(value);
      }
    }
    const text = names.join(", ");
    if (names.length > 0) cleaned(text, "aisles");
    await this.performLocal(list, [{ item: LIST_ITEM, field: "aisles", value: names.length === 0 ? null : text }], null, { did: "changedAisles" });
  }

  /**
   * Archives (read-only for everyone) or unarchives the list; only an owner may.
   * @param {string} list
   * @param {boolean} archived
   */
  async setArchived(list, archived) {
    const role = this.syncState(list)?.role;
    if (role && role !== "owner") throw new ReplicaError("forbidden", "only an owner can archive or unarchive the list");
    await this.performLocal(list, [{ item: LIST_ITEM, field: "archived", value: archived }], null, { did: "archived", archived });
  }

  /**
   * Adds entries ({ name, quantity, category, note, typed }) as BasketReplica's add does (a note
   * joins that of an item still to buy, a category is written when the item has none, the line
   * typed when it says more than the name); returns
   * [{ item, outcome: "added" | "restored" | "unchecked" | "alreadyOnList", quantityChanged, before }],
   * where `before` is the item before (null when it is new). One undo step.
   * @param {string} list
   * @param {{ name: string, quantity?: string | null, category?: string | null, note?: string | null, typed?: string | null }[]} entries
   */
  async add(list, entries) {
    const values = entries.map((e) => ({
      name: cleaned(e.name, "name"),
      quantity: e.quantity == null ? null : cleaned(e.quantity, "quantity"),
      category: e.category == null ? null : cleaned(e.category, "category"),
      note: e.note == null ? null : cleaned(e.note, "note"),
      typed: e.typed == null ? null : cleaned(e.typed, "typed"),
    }));
    const state = this.entry(list).state;
    /** @type {Write[]} */
    const writes = [];
    /** @type {AddResult[]} */
    const results = [];
    /** @type {Map<string, Item>} */
    const pending = new Map();
    for (const { name, quantity, category, note, typed } of values) {
      const id = await this.itemIDOf(list, normalize(name));
      const existing = pending.get(id) ?? state.item(id);
      /** @type {AddResult["outcome"]} */
      let outcome;
      /** @type {Item} */
      let item = { id, name, checked: false, deleted: false, quantity: null, note: null, category: null, typed: null, shops: null, places: null, dismissed: null };
      if (existing === undefined) {
        writes.push({ item: id, field: "name", value: name }, { item: id, field: "checked", value: false });
        writes.push({ item: id, field: "deleted", value: false });
        outcome = "added";
      } else if (existing.deleted) {
        if (existing.name !== name) writes.push({ item: id, field: "name", value: name });
        if (existing.checked) writes.push({ item: id, field: "checked", value: false });
        writes.push({ item: id, field: "deleted", value: false });
        item = { ...existing, name };
        outcome = "restored";
      } else if (existing.checked) {
        writes.push({ item: id, field: "checked", value: false }, { item: id, field: "deleted", value: false });
        item = { ...existing };
        outcome = "unchecked";
      } else {
        // Still written, so that adding wins over a remove or check made earlier on another device.
        writes.push({ item: id, field: "checked", value: false }, { item: id, field: "deleted", value: false });
        item = { ...existing };
        outcome = "alreadyOnList";
      }
      let quantityChanged = false;
      // An amount added to one still to buy is added to it ("2 milk" and "1 milk" make 3); a
      // restored or unchecked item's old amount was for a trip already made.
      const amount = quantity === null ? null : outcome === "alreadyOnList" && item.quantity !== null ? adding(quantity, item.quantity) : quantity;
      if (amount !== null && (amount !== item.quantity || existing === undefined)) {
        writes.push({ item: id, field: "quantity", value: amount });
        quantityChanged = existing !== undefined;
        item.quantity = amount;
      }
      // The catalogue's aisle for an item that has no category yet.
      if (category !== null && item.category === null) {
        writes.push({ item: id, field: "category", value: category });
        item.category = category;
      }
      const joined = note === null ? null : noteAdding(note, outcome === "alreadyOnList" ? item.note : null);
      if (joined !== null && joined !== item.note) {
        writes.push({ item: id, field: "note", value: joined });
        item.note = joined;
      }
      if (typed !== null && typed !== name && typed !== item.typed) {
        writes.push({ item: id, field: "typed", value: typed });
        item.typed = typed;
      }
      item.checked = false;
      item.deleted = false;
      pending.set(id, item);
      results.push({ item, outcome, quantityChanged, before: existing ?? null });
    }
    const said = results.map(({ item, outcome, quantityChanged }) => ({ item: { name: item.name, quantity: item.quantity }, outcome, quantityChanged }));
    await this.performLocal(list, writes, null, { did: "added", results: said });
    return results;
  }

  /**
   * Sets `checked` of an item; returns the item as it was.
   * @param {string} list
   * @param {string} id
   * @param {boolean} checked
   */
  async setChecked(list, id, checked) {
    const before = this.require(list, id);
    await this.performLocal(list, [{ item: id, field: "checked", value: checked }], null, { did: "checked", name: before.name, checked });
    return before;
  }

  /**
   * Checks an item (Replica.check); returns the item as it was.
   * @param {string} list
   * @param {string} id
   */
  check(list, id) {
    return this.setChecked(list, id, true);
  }

  /**
   * Unchecks an item (Replica.uncheck); returns the item as it was.
   * @param {string} list
   * @param {string} id
   */
  uncheck(list, id) {
    return this.setChecked(list, id, false);
  }

  /**
   * Removes an item (an add brings it back); returns the item as it was.
   * @param {string} list
   * @param {string} id
   */
  async remove(list, id) {
    const before = this.require(list, id);
    await this.performLocal(list, [{ item: id, field: "deleted", value: true }], null, { did: "removed", name: before.name });
    return before;
  }

  /**
   * Removes every checked item of the list (they come back when added again), as one undo step.
   * Returns how many.
   * @param {string} list
   */
  async removeChecked(list) {
    const checked = (this.state(list)?.allItems() ?? []).filter((i) => i.checked && !i.deleted);
    if (checked.length === 0) return 0;
    /** @type {Did} */
    const label = { did: "cleared", count: checked.length };
    await this.performLocal(list, checked.map((i) => ({ item: i.id, field: "deleted", value: true })), null, label);
    return checked.length;
  }

  /**
   * Removes the items that are on the list because one of `replicas` (a member's devices) added
   * them, or brought them back, at or after `since` (Unix ms): an owner's way out of a list a
   * removed member filled with junk (`basket members rm NAME --remove-their-items-since TIME`),
   * as one undo step. Removals are taken by a full list. Returns how many.
   * @param {string} list
   * @param {Iterable<string>} replicas
   * @param {number} since
   */
  async removeAddedBy(list, replicas, since) {
    const theirs = new Set(replicas);
    const state = this.state(list);
    if (state === undefined || theirs.size === 0) return 0;
    const from = clock.timestamp(Math.max(0, Math.floor(since)), 0);
    const added = state.allItems().filter((item) => {
      const presence = state.items.get(item.id)?.deleted;
      return !item.deleted && presence !== undefined && theirs.has(presence.replica) && presence.ts >= from;
    });
    if (added.length === 0) return 0;
    /** @type {Did} */
    const label = { did: "removedTheirs", count: added.length };
    await this.performLocal(list, added.map((i) => ({ item: i.id, field: "deleted", value: true })), null, label);
    return added.length;
  }

  /**
   * Sets an optional field (quantity, note, category) of an item; null or "" clears it.
   * Returns the item after.
   * @param {string} list
   * @param {string} id
   * @param {string} field one of SETTABLE_ITEM_FIELDS
   * @param {string | null} value
   */
  async set(list, id, field, value) {
    if (!SETTABLE_ITEM_FIELDS.some((settable) => settable === field)) {
      const names = SETTABLE_ITEM_FIELDS;
      throw new ReplicaError("invalid_operation", `only ${names.slice(0, -1).join(", ")} and ${names.at(-1)} can be set this way`);
    }
    const text = value === null || value.trim() === "" ? null : cleaned(value, field);
    const item = this.require(list, id);
    await this.performLocal(list, [{ item: id, field, value: text }], null, { did: "changed", field, name: item.name });
    return { ...item, [field]: text };
  }

  /**
   * Renames an item, as Replica.rename: a name with the same key changes only how it is
   * written; another key moves the item (a new id with every field copied, the old one removed).
   * Throws ReplicaError("name_taken") when another item on the list has that key.
   * @param {string} list
   * @param {string} id
   * @param {string} newName
   */
  async rename(list, id, newName) {
    const name = cleaned(newName, "name");
    const item = this.require(list, id);
    const newID = await this.itemIDOf(list, normalize(name));
    /** @type {Did} */
    const label = { did: "renamed", from: item.name, to: name };
    if (newID === id) {
      if (item.name !== name) await this.performLocal(list, [{ item: id, field: "name", value: name }], null, label);
      return { ...item, name };
    }
    const other = this.state(list)?.item(newID);
    if (other !== undefined && !other.deleted) throw new ReplicaError("name_taken", `'${other.name}' is already on the list`);
    // Every field moves: a field added to ITEM_FIELDS is copied without a change here.
    const moved = { ...item, id: newID, name, deleted: false };
    const values = /** @type {Record<string, Value>} */ (moved);
    const writes = ITEM_FIELDS.map((field) => ({ item: newID, field, value: values[field] }));
    await this.performLocal(list, [...writes, { item: id, field: "deleted", value: true }], null, label);
    return moved;
  }

  /**
   * Every write seen on an item's registers, oldest first per field, the winner of each register
   * marked and why the others lost (Replica.history(of:in:) in Swift).
   * @param {string} list
   * @param {string} id
   * @returns {Promise<{ field: string, value: Value, ts: string, replica: string, winner: boolean, reason: string }[]>}
   */
  async history(list, id) {
    // Made after every save on its way, the read sees them (IndexedDB's order).
    const writes = await this.store.history(list, id);
    /** @type {Map<string, Op>} */
    const winners = new Map();
    for (const w of writes) if (beats(w, winners.get(w.field))) winners.set(w.field, w);
    const order = (/** @type {Op} */ a, /** @type {Op} */ b) =>
      a.field !== b.field ? fieldCode(a.field) - fieldCode(b.field) : a.ts !== b.ts ? (a.ts < b.ts ? -1 : 1) : a.replica < b.replica ? -1 : a.replica > b.replica ? 1 : 0;
    return writes.sort(order).map((w) => {
      const winner = /** @type {Op} */ (winners.get(w.field));
      const won = winner.ts === w.ts && winner.replica === w.replica;
      const reason = won
        ? "latest write: its register shows it"
        : winner.ts === w.ts
          ? `same timestamp as the winner; replica ${winner.replica} has the higher id and wins the tie`
          : `superseded by the later write of ${JSON.stringify(winner.value)} from replica ${winner.replica}`;
      return { field: w.field, value: w.value, ts: w.ts, replica: w.replica, winner: won, reason };
    });
  }

  /**
   * The item `id` of `list`; ReplicaError("no_such_item") when there is none.
   * @param {string} list
   * @param {string} id
   */
  require(list, id) {
    const item = this.state(list)?.item(id);
    if (item === undefined) throw new ReplicaError("no_such_item", "no such item");
    return item;
  }
  // MARK: Sync bookkeeping

  /**
   * Merges pulled operations and saves the list's sync state with them, in one transaction
   * (Replica.merge(_:saving:) in Swift). Throws ClockSkew (nothing applied) when one is over 5
   * minutes ahead of this device's clock. Returns how many won their registers.
   * @param {string} list
   * @param {Op[]} ops
   * @param {SyncChanges} syncChanges
   */
  async merge(list, ops, syncChanges) {
    // A page that arrives after its list left this device (deleted, removed) does not bring it back.
    if (this.forgotten.has(list)) return 0;
    const wall = this.wall();
    let last = this.meta.clock ?? clock.ZERO;
    for (const op of ops) last = clock.receive(last, op.ts, wall);
    const entry = this.entry(list);
    // What other devices did is noticed, unless this is the list's first pull here (NewsWatch).
    const noticing = syncChanges !== undefined && entry.sync.cursor > 0;
    const news = noticing ? { ...(this.meta.news ?? {}) } : null;
    /** @type {Op[]} */
    const winners = [];
    for (const op of ops) {
      const before = noticing ? entry.state.register(op.item, op.field) : undefined;
      if (!entry.state.merge(op)) continue;
      winners.push(op);
      if (news !== null) this.notice(news, op, before);
    }
    Object.assign(entry.sync, syncChanges);
    entry.state.noteChecks(ops);
    this.meta.clock = last;
    if (news !== null) this.meta.news = news;
    await this.persist({ meta: news === null ? { clock: last } : { clock: last, news }, lists: [entry.sync], registers: winners, history: ops });
    if (winners.length > 0 || syncChanges) this.notify(list);
    return winners.length;
  }

  /**
   * Notes what another replica's winning write `op` did (Replica+News.swift's NewsWatch): an
   * item added or changed since the list was last shown, and a write of this device replaced.
   * @param {Record<string, [string, string, boolean][]>} news list → [item, replica, added]
   * @param {Op} op
   * @param {{ replica: string, value: import("./ops.js").Value } | undefined} before
   */
  notice(news, op, before) {
    // A shop's registers (a trip's lesson above all) are the shop's, not news of an item.
    if (this.isOwnReplica(op.replica) || op.field === "typed" || fieldInfo(op.field)?.target === "shop") return;
    if (before !== undefined && this.isOwnReplica(before.replica) && before.value !== op.value && this.lost.length < 200) {
      this.lost.push({ list: op.list, item: op.item, field: op.field, mine: before.value, theirs: op.value, replica: op.replica });
    }
    if (op.item === LIST_ITEM) return;
    const added = op.field === "deleted" && op.value === false && (before === undefined || before.value === true);
    const entries = [...(news[op.list] ?? [])];
    const at = entries.findIndex(([item]) => item === op.item);
    if (at >= 0) {
      if (added) entries[at] = [op.item, op.replica, true];
    } else if (entries.length < 1000) {
      entries.push([op.item, op.replica, added]);
    }
    news[op.list] = entries;
  }

  /**
   * The items of `list` other devices added or changed since it was last shown here; taken (the
   * list is being shown).
   * @param {string} list
   * @returns {{ item: string, replica: string, added: boolean }[]}
   */
  takeNews(list) {
    const entries = this.meta.news?.[list] ?? [];
    if (entries.length === 0) return [];
    const news = { ...(this.meta.news ?? {}) };
    delete news[list];
    this.meta.news = news;
    this.persist({ meta: { news } }).catch(() => {});
    return entries.map(([item, replica, added]) => ({ item, replica, added }));
  }

  /** This device's writes others replaced since last asked: taken, so each is told once. */
  takeLostWrites() {
    const lost = this.lost;
    this.lost = [];
    return lost;
  }

  /**
   * Takes pushed operations out of the outbox.
   * @param {string} list
   * @param {Op[]} ops
   * @param {SyncChanges} [syncChanges]
   */
  async acknowledge(list, ops, syncChanges = {}) {
    if (this.forgotten.has(list)) return;
    const map = this.pending(list);
    for (const op of ops) map.delete(identityOf(op));
    const entry = this.entry(list);
    Object.assign(entry.sync, syncChanges);
    await this.persist({ lists: [entry.sync], outboxRemove: ops });
    this.notify(list);
  }

  /**
   * Saves what changed of a list's sync state.
   * @param {string} list
   * @param {SyncChanges} syncChanges
   */
  async saveSyncState(list, syncChanges) {
    // A list gone from this device (deleted here, or removed by its person) stays gone: the
    // server's 404 for it, arriving after, made it again as "(untitled) · no longer shared".
    // Joining it again (a registration) brings it back.
    if (this.forgotten.has(list)) {
      if (syncChanges.isRegistered !== true || syncChanges.noLongerMember === true) return;
      this.forgotten.delete(list);
    }
    const entry = this.entry(list);
    Object.assign(entry.sync, syncChanges);
    await this.persist({ lists: [entry.sync] });
    this.notify(list);
  }

  /**
   * Every register of a list as an operation: what a restored server must be told again.
   * @param {string} list
   */
  registersAsOps(list) {
    /** @type {Op[]} */
    const out = [];
    const state = this.state(list);
    if (!state) return out;
    for (const [item, registers] of state.items) {
      for (const [field, r] of Object.entries(registers)) {
        out.push({ list, item, field, ts: r.ts, replica: r.replica, value: r.value });
      }
    }
    return out;
  }

  /**
   * The server's clock is `serverTime` (ms), as Replica.correctClock in Swift: later timestamps
   * are taken from it, the hybrid clock starts again from it (the saved one may carry the skewed
   * time), and every pending write stamped beyond what the server accepts (more than 5 minutes
   * after its time) is stamped again, so a clock that was far ahead does not keep them refused.
   * Returns how many writes got a new stamp.
   * @param {number} serverTime
   */
  async correctClock(serverTime) {
    const offset = serverTime - this.now();
    // A server whose clock is a day away from this device's is not believed.
    if (!Number.isFinite(offset) || Math.abs(offset) > MAX_CLOCK_CORRECTION) {
      throw new Error("the server's clock is more than a day away from this device's: not corrected");
    }
    this.meta.clockOffset = offset;
    this.meta.clock = clock.timestamp(Math.floor(serverTime), 0);
    await this.persist({ meta: { clockOffset: offset, clock: this.meta.clock } });
    const limit = serverTime + clock.MAX_DRIFT;
    let restamped = 0;
    for (const list of [...this.outbox.keys()]) {
      const beyond = [...(this.outbox.get(list)?.values() ?? [])].filter((op) => clock.milliseconds(op.ts) > limit);
      restamped += await this.restamp(list, beyond, serverTime);
    }
    return restamped;
  }

  /**
   * Writes the list's pending operations again under new stamps (and, with `renewReplica`, under
   * a new replica id for this page), as Replica.restampPending does in Swift: after the server
   * refused one because another member pushed its identity, or this replica id, first. Returns
   * how many.
   * @param {string} list
   * @param {boolean} renewReplica
   */
  async restampPending(list, renewReplica) {
    if (renewReplica) {
      this.sessionReplica = randomReplicaID();
      await this.rememberReplica();
    }
    return this.restamp(list, [...(this.outbox.get(list)?.values() ?? [])], this.wall());
  }

  /**
   * Gives each of `stale` (pending writes of `list`) a new stamp from the clock at `wall`: in the
   * outbox, and in its register when it holds the write (the new stamp may be earlier, after a
   * clock correction, and must replace it there too, as the CLI rebuilds the item's history).
   * @param {string} list
   * @param {Op[]} stale
   * @param {number} wall
   */
  async restamp(list, stale, wall) {
    if (stale.length === 0) return 0;
    const map = this.pending(list);
    const entry = this.entry(list);
    let last = this.meta.clock ?? clock.ZERO;
    /** @type {Op[]} */
    const fresh = [];
    /** @type {Op[]} */
    const winners = [];
    /** @type {Map<string, Op>} stale identity → the write stamped anew */
    const renewedOf = new Map();
    for (const op of stale) {
      last = clock.next(last, wall);
      const renewed = { ...op, ts: last, replica: this.replicaID };
      validate(renewed);
      renewedOf.set(identityOf(op), renewed);
      fresh.push(renewed);
      if (entry.state.holds(op)) {
        entry.state.put(renewed);
        winners.push(renewed);
      } else if (entry.state.merge(renewed)) winners.push(renewed);
    }
    // The outbox keeps its order: each write stamped anew takes its old one's place.
    const reordered = [...map.entries()].map(([identity, op]) => {
      const renewed = renewedOf.get(identity);
      return /** @type {[string, Op]} */ (renewed ? [identityOf(renewed), renewed] : [identity, op]);
    });
    map.clear();
    for (const [identity, op] of reordered) map.set(identity, op);
    this.meta.clock = last;
    await this.persist({
      meta: { clock: last }, registers: winners, outboxAdd: fresh, outboxRemove: stale, history: fresh, historyRemove: stale,
    });
    this.channel?.postMessage({ list, ops: fresh, replaced: stale, clock: last });
    this.notify(list);
    return stale.length;
  }

  /**
   * Keeps settings of the device (the account, …).
   * @param {Meta} changes
   */
  async setMeta(changes) {
    Object.assign(this.meta, changes);
    await this.persist({ meta: changes });
  }

  /**
   * Forgets every list, register and pending write, and the account (signing out); the clock
   * stays. The page writes on under a new replica id (startAsNewDevice).
   */
  async forgetEverything() {
    const kept = { clock: this.meta.clock ?? clock.ZERO };
    // After every save on its way: made after them, the clearing runs after them.
    await this.store.clear();
    await this.persist({ meta: kept });
    this.entries.clear();
    this.outbox.clear();
    this.journal = [];
    this.meta = kept;
    await this.startAsNewDevice();
    this.notify(null);
  }

  /**
   * Writes from now on under a new replica id (Replica.startAsNewDevice): the account that signs
   * in next is another device to the server. The members answer names each member's ids, so one
   * id written under two accounts would tell a member of both lists that they share a browser.
   */
  async startAsNewDevice() {
    this.sessionReplica = randomReplicaID();
    await this.rememberReplica();
  }

  /**
   * Drops the writes of `list` waiting in the outbox and puts every item they touched back to
   * what the other writes this device knows say, as if they had never been made: the copy ends
   * equal to the server's (Replica.discardPending in Swift). What a viewer's or a former
   * member's device does with the changes the server will not take. In one transaction.
   * @param {string} list
   * @returns {Promise<Op[]>} the dropped writes, oldest first
   */
  async discardPending(list) {
    const dropped = [...(this.outbox.get(list)?.values() ?? [])].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    if (dropped.length === 0) return [];
    const key = (/** @type {Op} */ w) => [w.item, w.field, w.ts, w.replica].join("\u0000");
    const drop = new Set(dropped.map(key));
    const state = this.entry(list).state;
    /** @type {Map<string, import("./state.js").Registers>} */
    const rebuilt = new Map();
    /** @type {Op[]} */
    const registers = [];
    /** @type {{ list: string, item: string, field: string }[]} */
    const registersRemove = [];
    for (const item of new Set(dropped.map((op) => op.item))) {
      /** @type {import("./state.js").Registers} */
      const fields = {};
      for (const w of await this.store.history(list, item)) {
        if (!drop.has(key(w)) && beats(w, fields[w.field])) fields[w.field] = { ts: w.ts, replica: w.replica, value: w.value };
      }
      rebuilt.set(item, fields);
      for (const field of Object.keys(state.items.get(item) ?? {})) {
        if (fields[field] === undefined) registersRemove.push({ list, item, field });
      }
      for (const [field, register] of Object.entries(fields)) registers.push({ list, item, field, ...register });
    }
    await this.persist({ registers, registersRemove, outboxRemove: dropped, historyRemove: dropped });
    this.outbox.delete(list);
    for (const [item, fields] of rebuilt) state.replaceItem(item, fields);
    this.notify(list);
    return dropped;
  }

  /**
   * Forgets a list on this device (it was deleted, or this account was removed from it):
   * Replica.removeList in Swift.
   * @param {string} list
   */
  async removeList(list) {
    this.forgotten.add(list);
    this.entries.delete(list);
    this.outbox.delete(list);
    this.journal = this.journal.filter((step) => step.list !== list);
    await this.persist({ removeList: list });
    this.notify(null);
  }
}

/**
 * A list's sync state under the names Swift's `SyncState` gives them: pages before this one
 * stored `registered`, `gone` and `historyComplete`, read here as `isRegistered`,
 * `noLongerMember` and `historyIncomplete`.
 * @param {any} sync a record as an older page stored it
 * @returns {SyncRecord}
 */
function upgradeSync(sync) {
  if ("registered" in sync) { sync.isRegistered = sync.registered; delete sync.registered; }
  if ("gone" in sync) { sync.noLongerMember = sync.gone; delete sync.gone; }
  if ("historyComplete" in sync) { sync.historyIncomplete = sync.historyComplete === false; delete sync.historyComplete; }
  return sync;
}

/**
 * The sync state of a list new to this device.
 * @param {string} list
 * @returns {SyncRecord}
 */
function newSync(list) {
  return { id: list, role: null, epoch: null, cursor: 0, isRegistered: false, noLongerMember: false, historyIncomplete: false };
}

/**
 * A language's code as a list keeps it: 2 or 3 letters a–z (Replica.checkedLanguage).
 * @param {string} code
 */
function checkedLanguage(code) {
  if (!/^[a-z]{2,3}$/.test(code)) throw new ReplicaError("invalid_operation", `a language is 2 or 3 letters a–z ('en', 'de'), not '${code}'`);
  return code;
}
