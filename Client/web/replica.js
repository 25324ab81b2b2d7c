// The device's replica: every list's registers in memory (ListState), saved to IndexedDB with
// each change, the outbox of local operations not yet pushed, and the hybrid clock. Local edits
// follow BasketReplica's rules (adding a name that exists un-deletes and un-checks it, never a
// second row); remote operations merge by the registers' last-writer-wins order.
// This file: sync bookkeeping (BasketReplica's Replica+Sync.swift and Replica+Membership.swift):
// merging pulled pages, acknowledging pushed writes, clock corrections, re-stamping, forgetting.
import { ListState, beats } from "./state.js";
import { LIST_ITEM, itemID, randomListID, randomReplicaID } from "./ids.js";
import { normalize, clean } from "./key.js";
import * as clock from "./clock.js";
import { validate, identity as identityOf } from "./ops.js";
import { ReplicaWrites } from "./replica-writes.js";
import { MAX_CLOCK_CORRECTION } from "./replica-types.js";

export class Replica extends ReplicaWrites {
  /**
   * Opens the replica kept in `store`.
   * @returns {Promise<Replica>}
   */
  static async open(store) {
    return /** @type {Promise<Replica>} */ (super.open(store));
  }

  // MARK: Sync bookkeeping

  /** Merges pulled operations and saves the list's sync state with them, in one transaction.
   * Throws ClockSkew (nothing applied) when one is over 5 minutes ahead of this device's clock. */
  async merge(list, ops, syncChanges) {
    // A page that arrives after its list left this device (deleted, removed) does not bring it back.
    if (this.forgotten.has(list)) return 0;
    const wall = this.wall();
    let last = this.meta.clock ?? clock.ZERO;
    for (const op of ops) last = clock.receive(last, op.ts, wall);
    const entry = this.entry(list);
    const winners = ops.filter((op) => entry.state.apply(op));
    Object.assign(entry.sync, syncChanges);
    this.meta.clock = last;
    await this.persist({ meta: { clock: last }, lists: [entry.sync], registers: winners, history: ops });
    if (winners.length > 0 || syncChanges) this.notify(list);
    return winners.length;
  }

  /** Takes pushed operations out of the outbox. */
  async acknowledge(list, ops, syncChanges = {}) {
    if (this.forgotten.has(list)) return;
    const map = this.pending(list);
    for (const op of ops) map.delete(identityOf(op));
    const entry = this.entry(list);
    Object.assign(entry.sync, syncChanges);
    await this.persist({ lists: [entry.sync], outboxRemove: ops });
    this.notify(list);
  }

  async saveSync(list, syncChanges) {
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
   * @param {any[]} stale
   * @param {number} wall
   */
  async restamp(list, stale, wall) {
    if (stale.length === 0) return 0;
    const map = this.pending(list);
    const entry = this.entry(list);
    let last = this.meta.clock ?? clock.ZERO;
    const fresh = [];
    const winners = [];
    /** @type {Map<string, any>} stale identity → the write stamped anew */
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
      } else if (entry.state.apply(renewed)) winners.push(renewed);
    }
    // The outbox keeps its order: each write stamped anew takes its old one's place.
    const reordered = [...map.entries()].map(([identity, op]) => {
      const renewed = renewedOf.get(identity);
      return renewed ? [identityOf(renewed), renewed] : [identity, op];
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
    this.lists.clear();
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
   * @returns {Promise<any[]>} the dropped writes, oldest first
   */
  async discardPending(list) {
    const dropped = [...(this.outbox.get(list)?.values() ?? [])].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    if (dropped.length === 0) return [];
    const key = (/** @type {any} */ w) => [w.item, w.field, w.ts, w.replica].join("\u0000");
    const drop = new Set(dropped.map(key));
    const state = this.entry(list).state;
    /** @type {Map<string, Record<string, { ts: string, replica: string, value: any }>>} */
    const rebuilt = new Map();
    const registers = [];
    const registersRemove = [];
    for (const item of new Set(dropped.map((op) => op.item))) {
      /** @type {Record<string, { ts: string, replica: string, value: any }>} */
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

  /** Forgets a list on this device (it was deleted, or this account was removed from it). */
  async forgetList(list) {
    this.forgotten.add(list);
    this.lists.delete(list);
    this.outbox.delete(list);
    this.journal = this.journal.filter((step) => step.list !== list);
    await this.persist({ removeList: list });
    this.notify(null);
  }
}
