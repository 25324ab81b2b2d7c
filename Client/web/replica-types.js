// What the replica's API speaks in (BasketReplica's ReplicaError.swift): its limits and its errors.

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
 * A write of this device that another member's later one replaced (Replica+News.swift's LostWrite).
 * @typedef {{ list: string, item: string, field: string, mine: import("./ops.js").Value,
 *   theirs: import("./ops.js").Value, replica: string }} LostWrite
 */
