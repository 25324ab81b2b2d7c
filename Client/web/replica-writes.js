// Local writes and undo (BasketReplica's Replica+Writes.swift and Replica+Undo.swift): each
// follows BasketReplica's rules (adding a name that exists un-deletes and un-checks it, never a
// second row), is stamped by the clock, journaled for undo and queued in the outbox.
import { ListState, beats } from "./state.js";
import { LIST_ITEM, itemID, randomListID, randomReplicaID } from "./ids.js";
import { normalize, clean } from "./key.js";
import * as clock from "./clock.js";
import { validate, identity as identityOf } from "./ops.js";
import { ITEM_FIELDS, SETTABLE_ITEM_FIELDS, fieldCode, fieldInfo, initialValue } from "./field.js";
import { ReplicaBase } from "./replica-base.js";
import { CannotUndo, MAX_UNDOABLE_WRITES, ReplicaError, UNDO_DEPTH, addMessage } from "./replica-types.js";

/**
 * `raw` cleaned as a value of `field`; a refused value throws ReplicaError("invalid_name").
 * @param {string} raw
 * @param {string} field
 */
function cleaned(raw, field) {
  try {
    return clean(raw, field);
  } catch (error) {
    throw new ReplicaError("invalid_name", error?.message ?? String(error));
  }
}

export class ReplicaWrites extends ReplicaBase {
  // MARK: Local writes

  /**
   * Writes local operations: stamps them, applies them, saves registers, outbox and clock. With
   * a `label`, the registers they replace become one step of the undo journal.
   * @param {string} list
   * @param {{ item: string, field: string, value: any }[]} writes
   * @param {object | null} [syncChanges]
   * @param {string | null} [label] what the step is called when undone ("Checked bread")
   * @param {number[]} [undone] the undo steps these writes undo (they leave the journal with them)
   */
  async writeLocal(list, writes, syncChanges = null, label = null, undone = []) {
    this.checkWritable(list, writes);
    let last = this.meta.clock ?? clock.ZERO;
    // One reading of the clock for the whole command, as BasketReplica's LocalWriter.
    const wall = this.wall();
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
    // unfinished, and a write drawn from memory before its commit was lost: issue 42).
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
    for (const op of ops) entry.state.apply(op);
    if (entry.state.changes !== changesBefore + winners.length) {
      // Another write reached these registers while this one was stored (a pull, another tab):
      // the registers are stored again as they stand now, the later write in each.
      const touched = new Map(ops.map((op) => [op.item + "\u0000" + op.field, entry.state.register(op.item, op.field)]));
      await this.persist({ registers: [...touched.values()].filter((r) => r !== undefined) });
    }
    this.channel?.postMessage({ list, ops, clock: last, sync: { ...entry.sync } });
    this.notify(list);
    return ops;
  }

  /**
   * Refuses a write to a list this account may only view, that is no longer shared with it, or
   * that is archived (which takes nothing but its unarchiving): Replica.checkWritable in Swift.
   * @param {string} list
   * @param {{ item: string, field: string, value: any }[]} writes
   */
  checkWritable(list, writes) {
    if (writes.length === 0) return;
    const sync = this.sync(list);
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
   * @returns {{ add: any[], remove: number[] }}
   */
  journalStep(list, label, ops, state) {
    // Ordered, and unlike another tab's (each tab keeps the journal it read at its start).
    const seq = Math.max((this.journal.at(-1)?.seq ?? 0) + 1, Date.now() * 1024 + Math.floor(Math.random() * 1024));
    if (ops.length > MAX_UNDOABLE_WRITES) {
      this.journal.push({ seq, list, label, rows: null });
    } else {
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
    return { add: [/** @type {any} */ (this.journal.at(-1))], remove: dropped.map((step) => step.seq) };
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
   * removed again; an item it removed comes back). Returns the step's label, or null when there
   * is nothing to undo on this list. Throws CannotUndo when that command was too large.
   * @param {string} list
   * @returns {Promise<string | null>}
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
      throw new CannotUndo(`“${step.label}” changed more than undo keeps`);
    }
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
    if (writes.length > 0) await this.writeLocal(list, writes, null, null, [step.seq]);
    else await this.persist({ journalRemove: [step.seq] });
    return step.label;
  }

  /** A new list on this device; the server learns of it at the next sync. */
  async createList(title) {
    const value = cleaned(title, "title");
    const id = randomListID();
    this.entry(id);
    await this.writeLocal(id, [{ item: LIST_ITEM, field: "title", value }], { role: "owner" });
    this.notify(null);
    return id;
  }

  async renameList(list, title) {
    const value = cleaned(title, "title");
    await this.writeLocal(list, [{ item: LIST_ITEM, field: "title", value }], null, `Renamed the list to ${value}`);
  }

  /**
   * The list's aisle order: category names, each once (by key), as Replica.setAisles.
   * @param {string} list
   * @param {string[]} aisles
   */
  async setAisles(list, aisles) {
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
    await this.writeLocal(list, [{ item: LIST_ITEM, field: "aisles", value: names.length === 0 ? null : text }], null, "Changed the aisle order");
  }

  /**
   * Archives (read-only for everyone) or unarchives the list; only an owner may.
   * @param {string} list
   * @param {boolean} archived
   */
  async setArchived(list, archived) {
    const role = this.sync(list)?.role;
    if (role && role !== "owner") throw new ReplicaError("forbidden", "only an owner can archive or unarchive the list");
    await this.writeLocal(list, [{ item: LIST_ITEM, field: "archived", value: archived }], null, archived ? "Archived the list" : "Unarchived the list");
  }

  /**
   * Adds entries ({ name, quantity, category }) as BasketReplica's add does (a category is written
   * when the item has none); returns
   * [{ item, outcome: "added" | "restored" | "unchecked" | "alreadyOnList", quantityChanged, before }],
   * where `before` is the item before (null when it is new). One undo step.
   * @param {string} list
   * @param {{ name: string, quantity?: string | null, category?: string | null }[]} entries
   */
  async add(list, entries) {
    const values = entries.map((e) => ({
      name: cleaned(e.name, "name"),
      quantity: e.quantity == null ? null : cleaned(e.quantity, "quantity"),
      category: e.category == null ? null : cleaned(e.category, "category"),
    }));
    const state = this.entry(list).state;
    const writes = [];
    const results = [];
    const pending = new Map();
    for (const { name, quantity, category } of values) {
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
        // Still written, so that adding wins over a remove or check made earlier on another device.
        writes.push({ item: id, field: "checked", value: false }, { item: id, field: "deleted", value: false });
        item = { ...existing };
        outcome = "alreadyOnList";
      }
      let quantityChanged = false;
      if (quantity !== null && (quantity !== item.quantity || existing === undefined)) {
        writes.push({ item: id, field: "quantity", value: quantity });
        quantityChanged = existing !== undefined;
        item.quantity = quantity;
      }
      // The catalogue's aisle for an item that has no category yet.
      if (category !== null && item.category === null) {
        writes.push({ item: id, field: "category", value: category });
        item.category = category;
      }
      item.checked = false;
      item.deleted = false;
      pending.set(id, item);
      results.push({ item, outcome, quantityChanged, before: existing ?? null });
    }
    await this.writeLocal(list, writes, null, addMessage(results));
    return results;
  }

  /**
   * Sets `checked` of an item; returns the item as it was.
   * @param {string} list
   * @param {string} id
   * @param {boolean} checked
   */
  async setChecked(list, id, checked) {
    const before = this.requireItem(list, id);
    await this.writeLocal(list, [{ item: id, field: "checked", value: checked }], null, `${checked ? "Checked" : "Unchecked"} ${before.name}`);
    return before;
  }

  /**
   * Removes an item (an add brings it back); returns the item as it was.
   * @param {string} list
   * @param {string} id
   */
  async remove(list, id) {
    const before = this.requireItem(list, id);
    await this.writeLocal(list, [{ item: id, field: "deleted", value: true }], null, `Removed ${before.name}`);
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
    const label = `Cleared ${checked.length} checked item${checked.length === 1 ? "" : "s"}`;
    await this.writeLocal(list, checked.map((i) => ({ item: i.id, field: "deleted", value: true })), null, label);
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
    const label = `Removed ${added.length} item${added.length === 1 ? "" : "s"} another member added`;
    await this.writeLocal(list, added.map((i) => ({ item: i.id, field: "deleted", value: true })), null, label);
    return added.length;
  }

  /**
   * Sets an optional field (quantity, note, category) of an item; null or "" clears it.
   * Returns the item after.
   * @param {string} list
   * @param {string} id
   * @param {"quantity" | "note" | "category"} field
   * @param {string | null} value
   */
  async setField(list, id, field, value) {
    if (!SETTABLE_ITEM_FIELDS.includes(field)) {
      const names = SETTABLE_ITEM_FIELDS;
      throw new ReplicaError("invalid_operation", `only ${names.slice(0, -1).join(", ")} and ${names.at(-1)} can be set this way`);
    }
    const text = value === null || value.trim() === "" ? null : cleaned(value, field);
    const item = this.requireItem(list, id);
    await this.writeLocal(list, [{ item: id, field, value: text }], null, `Changed the ${field} of ${item.name}`);
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
    const item = this.requireItem(list, id);
    const newID = itemID(list, normalize(name));
    const label = `Renamed ${item.name} to ${name}`;
    if (newID === id) {
      if (item.name !== name) await this.writeLocal(list, [{ item: id, field: "name", value: name }], null, label);
      return { ...item, name };
    }
    const other = this.state(list)?.item(newID);
    if (other !== undefined && !other.deleted) throw new ReplicaError("name_taken", `'${other.name}' is already on the list`);
    // Every field moves: a field added to ITEM_FIELDS is copied without a change here.
    const moved = { ...item, id: newID, name, deleted: false };
    const writes = ITEM_FIELDS.map((field) => ({ item: newID, field, value: moved[field] }));
    await this.writeLocal(list, [...writes, { item: id, field: "deleted", value: true }], null, label);
    return moved;
  }

  /**
   * Every write seen on an item's registers, oldest first per field, the winner of each register
   * marked and why the others lost (Replica.history(of:in:) in Swift).
   * @param {string} list
   * @param {string} id
   * @returns {Promise<{ field: string, value: any, ts: string, replica: string, winner: boolean, reason: string }[]>}
   */
  async history(list, id) {
    // Made after every save on its way, the read sees them (IndexedDB's order).
    const writes = await this.store.history(list, id);
    /** @type {Map<string, any>} */
    const winners = new Map();
    for (const w of writes) if (beats(w, winners.get(w.field))) winners.set(w.field, w);
    const order = (/** @type {any} */ a, /** @type {any} */ b) =>
      a.field !== b.field ? fieldCode(a.field) - fieldCode(b.field) : a.ts !== b.ts ? (a.ts < b.ts ? -1 : 1) : a.replica < b.replica ? -1 : a.replica > b.replica ? 1 : 0;
    return writes.sort(order).map((w) => {
      const winner = winners.get(w.field);
      const won = winner.ts === w.ts && winner.replica === w.replica;
      const reason = won
        ? "latest write: its register shows it"
        : winner.ts === w.ts
          ? `same timestamp as the winner; replica ${winner.replica} has the higher id and wins the tie`
          : `superseded by the later write of ${JSON.stringify(winner.value)} from replica ${winner.replica}`;
      return { field: w.field, value: w.value, ts: w.ts, replica: w.replica, winner: won, reason };
    });
  }

  requireItem(list, id) {
    const item = this.state(list)?.item(id);
    if (item === undefined) throw new ReplicaError("no_such_item", "no such item");
    return item;
  }
}
