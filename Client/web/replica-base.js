// The replica's storage and reads (BasketReplica's Replica.swift and Replica+Reads.swift):
// every list's registers in memory (ListState), saved to IndexedDB with each change, the outbox
// of local operations not yet pushed, and the hybrid clock. Writes are in replica-writes.js,
// sync bookkeeping in replica.js.
import { ListState, beats } from "./state.js";
import { LIST_ITEM, itemID, randomListID, randomReplicaID } from "./ids.js";
import { normalize, clean } from "./key.js";
import * as clock from "./clock.js";
import { validate, identity as identityOf } from "./ops.js";

export class ReplicaBase {
  constructor(store) {
    this.store = store;
    this.lists = new Map(); // id → { state: ListState, sync: {…} }
    this.outbox = new Map(); // list id → Map(identity → op)
    /** Lists this page forgot (deleted, removed from the device): an answer about one that
     * arrives after does not bring it back, until it is joined again. @type {Set<string>} */
    this.forgotten = new Set();
    this.listeners = new Set();
    this.meta = {};
    /** @type {BroadcastChannel | null} the other tabs of this device */
    this.channel = null;
    /**
     * The undo journal of this device, oldest first: one step per local command, with the
     * registers its writes replaced. A step that was too large is a barrier (`rows` null). Kept
     * in IndexedDB with the writes (`seq` orders the steps), so it outlives the page.
     * @type {{ seq: number, list: string, label: string, rows: { item: string, field: string, existed: boolean, before: any }[] | null }[]}
     */
    this.journal = [];
    /** The replica id this page writes under (open gives each page its own). */
    this.sessionReplica = "";
    /** The wall clock in Unix milliseconds (the conformance vectors set their own). */
    this.now = () => Date.now();
  }

  static async open(store) {
    const replica = new this(store);
    const { meta, lists, registers, outbox, journal } = await store.loadAll();
    replica.meta = meta;
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
    for (const sync of lists) replica.lists.set(sync.id, { state: new ListState(sync.id), sync: upgradeSync(sync) });
    for (const op of registers) replica.entry(op.list).state.apply(op);
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

  /** Applies writes another tab made and saved ({ list, ops, clock }). */
  receiveFromTab(message) {
    if (!message || typeof message.list !== "string" || !Array.isArray(message.ops)) return;
    const entry = this.entry(message.list);
    let changed = false;
    const replaced = Array.isArray(message.replaced) ? message.replaced : [];
    message.ops.forEach((op, i) => {
      const old = replaced[i];
      if (old && entry.state.holds(old)) {
        entry.state.put(op);
        changed = true;
      } else changed = entry.state.apply(op) || changed;
    });
    if (typeof message.clock === "string" && message.clock > (this.meta.clock ?? clock.ZERO)) this.meta.clock = message.clock;
    if (message.sync) Object.assign(entry.sync, message.sync);
    if (changed || message.sync) this.notify(message.list);
  }

  /** Milliseconds now, corrected by what the server said its clock reads. */
  wall() {
    return this.now() + (this.meta.clockOffset ?? 0);
  }

  entry(list) {
    let entry = this.lists.get(list);
    if (entry === undefined) {
      entry = { state: new ListState(list), sync: newSync(list) };
      this.lists.set(list, entry);
    }
    return entry;
  }

  pending(list) {
    let map = this.outbox.get(list);
    if (map === undefined) {
      map = new Map();
      this.outbox.set(list, map);
    }
    return map;
  }

  /** Calls `listener(list)` after every change (null: the set of lists changed). */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(list) {
    for (const listener of this.listeners) listener(list);
  }

  // MARK: Reads

  /** Every list: [{ id, title, toBuy, total, role, archived, sync }], by title. */
  allLists() {
    const out = [];
    for (const [id, { state, sync }] of this.lists) {
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

  state(list) {
    return this.lists.get(list)?.state;
  }

  sync(list) {
    return this.lists.get(list)?.sync;
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

  /** When each item was last added (the time of its last `deleted = false`), for search ties. */
  lastUsed(list) {
    const out = new Map();
    const state = this.state(list);
    if (!state) return out;
    for (const [item, registers] of state.items) {
      if (registers.deleted && registers.deleted.value === false) out.set(item, clock.milliseconds(registers.deleted.ts));
    }
    return out;
  }
}

/**
 * A list's sync state under the names Swift's `SyncState` gives them: pages before this one
 * stored `registered`, `gone` and `historyComplete`, read here as `isRegistered`,
 * `noLongerMember` and `historyIncomplete`.
 * @param {any} sync
 */
function upgradeSync(sync) {
  if ("registered" in sync) { sync.isRegistered = sync.registered; delete sync.registered; }
  if ("gone" in sync) { sync.noLongerMember = sync.gone; delete sync.gone; }
  if ("historyComplete" in sync) { sync.historyIncomplete = sync.historyComplete === false; delete sync.historyComplete; }
  return sync;
}

function newSync(list) {
  return { id: list, role: null, epoch: null, cursor: 0, isRegistered: false, noLongerMember: false, historyIncomplete: false };
}
