// The device's replica: every list's registers in memory (ListState), saved to IndexedDB with
// each change, the outbox of local operations not yet pushed, and the hybrid clock. Local edits
// follow BasketReplica's rules (adding a name that exists un-deletes and un-checks it, never a
// second row); remote operations merge by the registers' last-writer-wins order.
import { ListState } from "./state.js";
import { LIST_ITEM, itemID, randomListID, randomReplicaID } from "./ids.js";
import { normalize, clean } from "./key.js";
import * as clock from "./clock.js";
import { validate, identity as identityOf } from "./ops.js";

/** The most a server may move this device's clock, in milliseconds: a day (as the CLI). */
export const MAX_CLOCK_CORRECTION = 24 * 60 * 60 * 1000;

export class Replica {
  constructor(store) {
    this.store = store;
    this.lists = new Map(); // id → { state: ListState, sync: {…} }
    this.outbox = new Map(); // list id → Map(identity → op)
    this.listeners = new Set();
    this.meta = {};
    /** @type {BroadcastChannel | null} the other tabs of this device */
    this.channel = null;
  }

  static async open(store) {
    const replica = new Replica(store);
    const { meta, lists, registers, outbox } = await store.loadAll();
    replica.meta = meta;
    if (!meta.clock) {
      replica.meta.clock = clock.ZERO;
      await store.write({ meta: { clock: clock.ZERO } });
    }
    // Each open page writes under a replica id of its own: two tabs share the IndexedDB data and
    // could otherwise stamp two different writes with the same (timestamp, replica), which the
    // server would keep only one of.
    replica.sessionReplica = randomReplicaID();
    // Other tabs' writes, as they make them (they saved them already; the writer pushes them).
    if (typeof BroadcastChannel === "function") {
      replica.channel = new BroadcastChannel("basket-writes");
      replica.channel.onmessage = (event) => replica.receiveFromTab(event.data);
    }
    for (const sync of lists) replica.lists.set(sync.id, { state: new ListState(sync.id), sync });
    for (const op of registers) replica.entry(op.list).state.apply(op);
    for (const op of outbox) replica.pending(op.list).set(identityOf(op), op);
    return replica;
  }

  get replicaID() {
    return this.sessionReplica;
  }

  /** Applies writes another tab made and saved ({ list, ops, clock }). */
  receiveFromTab(message) {
    if (!message || typeof message.list !== "string" || !Array.isArray(message.ops)) return;
    const entry = this.entry(message.list);
    let changed = false;
    for (const op of message.ops) changed = entry.state.apply(op) || changed;
    if (typeof message.clock === "string" && message.clock > (this.meta.clock ?? clock.ZERO)) this.meta.clock = message.clock;
    if (message.sync) Object.assign(entry.sync, message.sync);
    if (changed || message.sync) this.notify(message.list);
  }

  /** Milliseconds now, corrected by what the server said its clock reads. */
  wall() {
    return Date.now() + (this.meta.clockOffset ?? 0);
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

  /** Operations waiting to be pushed, for one list or all. */
  pendingCount(list = null) {
    if (list !== null) return this.outbox.get(list)?.size ?? 0;
    let total = 0;
    for (const map of this.outbox.values()) total += map.size;
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

  // MARK: Local writes

  /** Writes local operations: stamps them, applies them, saves registers, outbox and clock. */
  async writeLocal(list, writes, syncChanges = null) {
    let last = this.meta.clock ?? clock.ZERO;
    const ops = [];
    for (const { item, field, value } of writes) {
      last = clock.next(last, this.wall());
      const op = { list, item, field, value, ts: last, replica: this.replicaID };
      validate(op);
      ops.push(op);
    }
    const entry = this.entry(list);
    const winners = ops.filter((op) => entry.state.apply(op));
    for (const op of ops) this.pending(list).set(identityOf(op), op);
    this.meta.clock = last;
    if (syncChanges) Object.assign(entry.sync, syncChanges);
    await this.store.write({ meta: { clock: last }, lists: [entry.sync], registers: winners, outboxAdd: ops });
    this.channel?.postMessage({ list, ops, clock: last, sync: { ...entry.sync } });
    this.notify(list);
    return ops;
  }

  /** A new list on this device; the server learns of it at the next sync. */
  async createList(title) {
    const cleaned = clean(title, "title");
    const id = randomListID();
    this.entry(id);
    await this.writeLocal(id, [{ item: LIST_ITEM, field: "title", value: cleaned }], { role: "owner" });
    this.notify(null);
    return id;
  }

  async renameList(list, title) {
    await this.writeLocal(list, [{ item: LIST_ITEM, field: "title", value: clean(title, "title") }]);
  }

  /**
   * Adds entries ({ name, quantity }) as BasketReplica's add does; returns
   * [{ item, outcome: "added" | "restored" | "unchecked" | "alreadyOnList", before }], where
   * `before` is the item before (for undo).
   */
  async add(list, entries) {
    const cleaned = entries.map((e) => ({
      name: clean(e.name, "name"),
      quantity: e.quantity == null ? null : clean(e.quantity, "quantity"),
    }));
    const state = this.entry(list).state;
    const writes = [];
    const results = [];
    const pending = new Map();
    for (const { name, quantity } of cleaned) {
      const id = itemID(list, normalize(name));
      const existing = pending.get(id) ?? state.item(id);
      let outcome;
      let item = { id, name, checked: false, deleted: false, quantity: null, note: null, category: null };
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
        writes.push({ item: id, field: "checked", value: false }, { item: id, field: "deleted", value: false });
        item = { ...existing };
        outcome = "alreadyOnList";
      }
      if (quantity !== null && (quantity !== item.quantity || existing === undefined)) {
        writes.push({ item: id, field: "quantity", value: quantity });
        item.quantity = quantity;
      }
      item.checked = false;
      item.deleted = false;
      pending.set(id, item);
      results.push({ item, outcome, before: existing ?? null });
    }
    await this.writeLocal(list, writes);
    return results;
  }

  /** Sets `checked` of an item; returns the item as it was. */
  async setChecked(list, id, checked) {
    const before = this.requireItem(list, id);
    await this.writeLocal(list, [{ item: id, field: "checked", value: checked }]);
    return before;
  }

  /** Removes an item (an add brings it back); returns the item as it was. */
  async remove(list, id) {
    const before = this.requireItem(list, id);
    await this.writeLocal(list, [{ item: id, field: "deleted", value: true }]);
    return before;
  }

  /** Writes `fields` of an item back to what `before` held (undo). */
  async restore(list, before, fields) {
    const writes = fields.map((field) => ({ item: before.id, field, value: before[field] }));
    await this.writeLocal(list, writes);
  }

  requireItem(list, id) {
    const item = this.state(list)?.item(id);
    if (item === undefined) throw new Error("no such item");
    return item;
  }

  // MARK: Sync bookkeeping

  /** Merges pulled operations and saves the list's sync state with them, in one transaction.
   * Throws ClockSkew (nothing applied) when one is over 5 minutes ahead of this device's clock. */
  async merge(list, ops, syncChanges) {
    const wall = this.wall();
    let last = this.meta.clock ?? clock.ZERO;
    for (const op of ops) last = clock.receive(last, op.ts, wall);
    const entry = this.entry(list);
    const winners = ops.filter((op) => entry.state.apply(op));
    Object.assign(entry.sync, syncChanges);
    this.meta.clock = last;
    await this.store.write({ meta: { clock: last }, lists: [entry.sync], registers: winners });
    if (winners.length > 0 || syncChanges) this.notify(list);
    return winners.length;
  }

  /** Takes pushed operations out of the outbox. */
  async acknowledge(list, ops, syncChanges = {}) {
    const map = this.pending(list);
    for (const op of ops) map.delete(identityOf(op));
    const entry = this.entry(list);
    Object.assign(entry.sync, syncChanges);
    await this.store.write({ lists: [entry.sync], outboxRemove: ops });
    this.notify(list);
  }

  async saveSync(list, syncChanges) {
    const entry = this.entry(list);
    Object.assign(entry.sync, syncChanges);
    await this.store.write({ lists: [entry.sync] });
    this.notify(list);
  }

  /** Every register of a list as an operation: what a restored server must be told again. */
  registersAsOps(list) {
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
   * The server's clock is `serverTime` (ms): later timestamps are taken from it, and the
   * operations not yet pushed are stamped again (a new write each, same value), so a clock
   * that was far ahead does not keep them refused.
   */
  async correctClock(serverTime) {
    const offset = serverTime - Date.now();
    // A server whose clock is a day away from this device's is not believed.
    if (!Number.isFinite(offset) || Math.abs(offset) > MAX_CLOCK_CORRECTION) {
      throw new Error("the server's clock is more than a day away from this device's: not corrected");
    }
    this.meta.clockOffset = offset;
    await this.store.write({ meta: { clockOffset: this.meta.clockOffset } });
    for (const list of [...this.outbox.keys()]) await this.restampPending(list, false);
  }

  /**
   * Writes the list's pending operations again under new stamps (and, with `renewReplica`, under
   * a new replica id for this page), as Replica.restampPending does in Swift: after a clock
   * correction, or when the server refused one because another member pushed its identity, or
   * this replica id, first. Returns how many.
   * @param {string} list
   * @param {boolean} renewReplica
   */
  async restampPending(list, renewReplica) {
    if (renewReplica) this.sessionReplica = randomReplicaID();
    const map = this.outbox.get(list);
    const stale = map ? [...map.values()] : [];
    if (stale.length === 0) return 0;
    for (const op of stale) map.delete(identityOf(op));
    await this.store.write({ outboxRemove: stale });
    await this.writeLocal(
      list,
      stale.map((op) => ({ item: op.item, field: op.field, value: op.value })),
    );
    return stale.length;
  }

  async setMeta(changes) {
    Object.assign(this.meta, changes);
    await this.store.write({ meta: changes });
  }

  /** Forgets a list on this device (it was deleted, or this account was removed from it). */
  async forgetList(list) {
    this.lists.delete(list);
    this.outbox.delete(list);
    await this.store.write({ removeList: list });
    this.notify(null);
  }
}

function newSync(list) {
  return { id: list, role: null, epoch: null, cursor: 0, registered: false, gone: false, historyComplete: true };
}
