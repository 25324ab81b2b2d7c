// Hybrid logical clocks: a timestamp is 16 hex digits, 48 bits of Unix milliseconds then a 16-bit
// counter, so comparing the strings compares the timestamps. BasketCore's HybridClock.

/** Remote timestamps further ahead of the wall clock than this are refused: 5 minutes. */
export const MAX_DRIFT = 5 * 60 * 1000;
export const ZERO = "0000000000000000";
const MAX_MS = 2 ** 48 - 1;

/**
 * The milliseconds of a timestamp.
 * @param {string} timestamp
 */
export function milliseconds(timestamp) {
  return parseInt(timestamp.slice(0, 12), 16);
}

/**
 * The counter of a timestamp.
 * @param {string} timestamp
 */
export function counter(timestamp) {
  return parseInt(timestamp.slice(12), 16);
}

/**
 * The timestamp at `ms` with `count`.
 * @param {number} ms
 * @param {number} count
 */
export function timestamp(ms, count) {
  return ms.toString(16).padStart(12, "0") + count.toString(16).padStart(4, "0");
}

/** A timestamp more than MAX_DRIFT ahead of this clock. */
export class ClockSkew extends Error {
  /**
   * @param {number} offset milliseconds ahead
   * @param {number} receiver the receiving clock's wall time
   */
  constructor(offset, receiver) {
    super(`clock_skew: a timestamp is ${Math.round(offset / 1000)} s ahead of this clock`);
    this.code = "clock_skew";
    this.offset = offset;
    this.receiver = receiver;
  }
}

/**
 * The next timestamp of a clock whose last one is `last`, reading `wall` (Unix ms).
 * @param {string} last
 * @param {number} wall
 */
export function next(last, wall) {
  const now = Math.min(Math.floor(wall), MAX_MS);
  const lastMs = milliseconds(last);
  const lastCount = counter(last);
  if (now > lastMs) return timestamp(now, 0);
  if (lastCount < 0xffff) return timestamp(lastMs, lastCount + 1);
  return timestamp(lastMs + 1, 0);
}

/**
 * Throws ClockSkew when `remote` is more than MAX_DRIFT ahead of `wall`.
 * @param {string} remote
 * @param {number} wall
 */
export function check(remote, wall) {
  const ms = milliseconds(remote);
  if (ms > wall + MAX_DRIFT) throw new ClockSkew(ms - wall, wall);
}

/**
 * The clock's last timestamp after taking in `remote` at `wall` (throws ClockSkew).
 * @param {string} last
 * @param {string} remote
 * @param {number} wall
 */
export function receive(last, remote, wall) {
  check(remote, wall);
  return remote > last ? remote : last;
}
