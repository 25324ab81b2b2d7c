// What the replica's API speaks in (BasketReplica's ReplicaError.swift and AddResult.swift): its limits, its
// errors, and what an add says.

/**
 * @typedef {{ item: { name: string, quantity: string | null }, outcome: string, quantityChanged: boolean }} AddResult
 */

/** The most a server may move this device's clock, in milliseconds: a day (as the CLI). */
export const MAX_CLOCK_CORRECTION = 24 * 60 * 60 * 1000;
/** Steps the undo journal keeps, and the most writes one step may hold (Replica.undoDepth and
 * Replica.maxUndoableWrites in Swift). */
export const UNDO_DEPTH = 50;
export const MAX_UNDOABLE_WRITES = 5000;

/** A local write refused, with BasketReplica's ReplicaError code ("name_taken", "archived", …). */
export class ReplicaError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Thrown by undo when the last change was too large to journal (the journal ends there). */
export class CannotUndo extends ReplicaError {
  /** @param {string} message */
  constructor(message) {
    super("cannot_undo", message);
  }
}

/**
 * What an add says, phrase by phrase (AddResult.phrases in Swift, pinned by the conformance
 * vectors): "Added milk (2), bread", "Brought back eggs", "milk: quantity now 3", "milk is
 * already on the list".
 * @param {AddResult[]} results
 * @returns {string[]}
 */
export function addPhrases(results) {
  const added = results.filter((r) => r.outcome === "added").map((r) => r.item.name + (r.item.quantity !== null ? ` (${r.item.quantity})` : ""));
  const phrases = added.length > 0 ? [`Added ${added.join(", ")}`] : [];
  for (const { item, outcome, quantityChanged } of results) {
    if (outcome === "added") continue;
    if (outcome === "restored" || outcome === "unchecked") {
      phrases.push(`Brought back ${item.name}` + (quantityChanged ? ` (quantity now ${item.quantity ?? ""})` : ""));
    } else {
      phrases.push(quantityChanged ? `${item.name}: quantity now ${item.quantity ?? ""}` : `${item.name} is already on the list`);
    }
  }
  return phrases;
}

/**
 * The toast's sentence for an add: its phrases joined.
 * @param {AddResult[]} results
 */
export function addMessage(results) {
  return addPhrases(results).join("; ");
}
