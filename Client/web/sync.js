// Sync with the server, as the CLI's SyncEngine does: register lists made here, push the
// outbox, pull after the list's cursor, and keep one long-poll parked on the open list so
// another device's change shows within a second or two. When the server cannot be reached it
// tries again after 1 s, then 2 s, then every 4 s while the page is in view (30 s when it is
// not), and at once when the browser says the network is back or the page comes into view;
// nothing is lost meanwhile.
import { request, ApiError, ERRORS, ROUTES, Unreachable } from "./api.js";
import { decode, encode, validate } from "./ops.js";
import { ClockSkew } from "./clock.js";
import { isID128 } from "./ids.js";
import { accountKeyPair } from "./account-session.js";
import { openEnvelope, sealEnvelope } from "./seal.js";
import { parse as parseSealed, fromBase64URL, MAX_SNAPSHOT_BYTES } from "./sealed.js";
import { openSnapshot, sealSnapshot } from "./snapshot.js";

/**
 * A pulled page as the server sent it: untrusted, each field checked where it is read.
 * @typedef {Record<string, any>} PulledPage
 */
/**
 * The sync's state and what the status line says of it.
 * @typedef {"idle" | "syncing" | "synced" | "offline" | "unreachable" | "signedOut" | "error"} SyncStatus
 */

/**
 * How many operations a page holds: its count, or its lines less the header and the list's.
 * @param {PulledPage} page
 */
function decodedCount(page) {
  return typeof page.count === "number" ? page.count : page.ops.split("\n").length - 2;
}

/** The roles a member can have (BasketCore's Role). */
const ROLES = ["owner", "editor", "viewer"];
/** Operations per push at most, as `SyncEngine.batchSize` (the server takes 10,000). */
const BATCH_SIZE = 1000;
/** An owner's device leaves a new snapshot once the log grew by this many operations (SyncEngine.snapshotEvery). */
const SNAPSHOT_EVERY = 2000;
/** Seconds a long-poll asks the server to wait. */
const WAIT = 25;
/** Milliseconds before the first retry after a failure. */
export const FIRST_RETRY = 1000;
/** The longest wait between retries while the page is in view, and while it is not. */
export const MAX_RETRY_VISIBLE = 4000;
export const MAX_RETRY_HIDDEN = 30000;

/** Whether the browser says it has no network at all (then the status says Offline). */
function browserOffline() {
  return typeof navigator !== "undefined" && navigator.onLine === false;
}

/**
 * Whether `error` is a request given up on purpose (a watch stopped, a page left).
 * @param {unknown} error
 */
function isAbort(error) {
  return error instanceof DOMException && error.name === "AbortError";
}

/** Whether a person can see the page now. */
function inView() {
  return typeof document === "undefined" || document.visibilityState !== "hidden";
}

/**
 * "1 list: <the server's words>", or "2 lists: …", for the status line.
 * @param {Map<string, string>} failures
 */
export function refusedText(failures) {
  const [first = ""] = failures.values();
  return `${failures.size === 1 ? "1 list" : `${failures.size} lists`}: ${first}`;
}

export class Sync {
  /**
   * @param {import("./replica.js").Replica} replica
   * @param {(status: { state: SyncStatus, message: string, pending: number, stuck: number, refused: number, refusal: string }) => void} [onStatus]
   */
  constructor(replica, onStatus = () => {}) {
    this.replica = replica;
    this.onStatus = onStatus;
    /** @type {SyncStatus} */
    this.state = "idle";
    this.message = "";
    /** Operations of encrypted lists left out because they did not open here (see `opened`). */
    this.unopened = 0;
    /** @type {Map<string, Promise<unknown>>} each list's lock: the last body queued on it */
    this.locks = new Map();
    /** @type {AbortController | null} */
    this.watchController = null;
    /** @type {string | null} the list a long-poll is parked on */
    this.watching = null;
    /** @type {import("./shopping.js").Shopping | null} told when a page says who is shopping */
    this.shopping = null;
    /** When, by the server's clock, this page last heard who is shopping for each list or of its
     * inbox: a long-poll sends it, and is answered at once when either changed since. @type {Map<string, number>} */
    this.togetherHeard = new Map();
    /** Told when a page says texts wait in a list's inbox. @type {(list: string) => void} */
    this.onInbox = (/** @type {string} */ _list) => {};
    this.retryDelay = FIRST_RETRY;
    /** @type {(() => void) | null} ends the pause of the watch's retry */
    this.wakeRetry = null;
    /** Whether the clock was corrected after a skewed page (once per page). */
    this.corrected = false;
    /** @type {ReturnType<typeof setTimeout> | null} a retry of syncAll while no list is watched */
    this.retryTimer = null;
    this.stopped = false;
    /**
     * The lists whose last sync the server refused, with its words (SyncEngine's
     * `ListSyncReport.failure`): the others sync all the same, and the lists screen marks these.
     * @type {Map<string, string>}
     */
    this.failures = new Map();
    addEventListener("online", () => this.wake());
    addEventListener("offline", () => {
      // A long-poll in flight would hang until its timeout: start it again when back.
      this.setState("offline");
      this.restartWatch();
    });
    // Back in view, or the window got focus: if the last attempt failed, try again now.
    const comeBack = () => {
      if (inView() && this.needsRetry()) this.wake();
    };
    addEventListener("focus", comeBack);
    if (typeof document !== "undefined") document.addEventListener("visibilitychange", comeBack);
  }

  /** Whether the last attempt failed (and a retry is waiting). */
  needsRetry() {
    return this.state === "offline" || this.state === "unreachable" || this.state === "error";
  }

  /** The next wait between retries: 1 s, 2 s, then 5 s in view (30 s out of view). */
  nextRetryDelay() {
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryDelay * 2, inView() ? MAX_RETRY_VISIBLE : MAX_RETRY_HIDDEN);
    return Math.min(delay, inView() ? MAX_RETRY_VISIBLE : MAX_RETRY_HIDDEN);
  }

  /**
   * A list joined again after this account lost it: its refusal is forgotten, and a watch that
   * stopped when it was lost starts again.
   * @param {string} list
   */
  rejoined(list) {
    this.failures.delete(list);
    if (this.watching === list) this.restartWatch();
  }

  restartWatch() {
    const list = this.watching;
    this.watching = null;
    this.watchController?.abort();
    if (list !== null) this.watch(list);
  }

  get token() {
    return this.replica.meta.account?.token ?? null;
  }

  /**
   * { state, message, pending, stuck, refused }: `pending` counts changes as a person does
   * (Replica.pendingChanges); `stuck` those of them the server will not take (on lists this
   * account may only view, or that are no longer shared with it: never "sending"); `refused` is
   * the lists whose last sync the server refused, with the first one's words in `refusal`.
   */
  status() {
    const pending = this.replica.pendingChanges();
    let stuck = 0;
    for (const id of this.replica.outbox.keys()) {
      const sync = this.replica.syncState(id);
      if (sync?.noLongerMember || sync?.role === "viewer") stuck += this.replica.pendingChanges(id);
    }
    const [refusal = ""] = this.failures.values();
    return { state: this.state, message: this.message, pending, stuck, refused: this.failures.size, refusal };
  }

  /**
   * @param {SyncStatus} state
   * @param {string} [message]
   */
  setState(state, message = "") {
    this.state = state;
    this.message = message;
    this.onStatus(this.status());
  }

  /**
   * Runs `body` with the list's lock: pushes and merges of one list never interleave.
   * @template T
   * @param {string} list
   * @param {() => Promise<T>} body
   * @returns {Promise<T>}
   */
  async locked(list, body) {
    const before = this.locks.get(list) ?? Promise.resolve();
    /** @type {() => void} */
    let release = () => {};
    const mine = new Promise((resolve) => (release = () => resolve(undefined)));
    this.locks.set(list, before.then(() => mine));
    await before;
    try {
      return await body();
    } finally {
      release();
    }
  }

  /**
   * A request with this account's token; a token the server no longer takes signs out.
   * @param {import("./api.js").Route} route
   * @param {string[]} segments
   * @param {{ body?: any, signal?: AbortSignal, timeout?: number, query?: string }} [options]
   */
  async call(route, segments = [], options = {}) {
    try {
      return await request(route, segments, { ...options, token: this.token });
    } catch (error) {
      if (error instanceof ApiError && error.is(ERRORS.unauthorized, ERRORS.tokenExpired)) {
        await this.replica.setMeta({ account: { name: "", ...this.replica.meta.account, token: null } });
        this.setState("signedOut", error.message);
      }
      throw error;
    }
  }

  /** Everything: the memberships, then every list (pushed, then pulled). */
  async syncAll() {
    if (!this.token) return this.setState("signedOut");
    this.setState("syncing");
    try {
      await this.refreshMemberships();
      for (const { id, sync } of this.replica.lists()) {
        if (!sync.noLongerMember) await this.syncAlone(id);
      }
      // The lists refused stay marked (the status line says so); a retry comes as after any failure.
      if (this.failures.size > 0) this.failed(new Error(refusedText(this.failures)));
      else this.settled();
    } catch (error) {
      this.failed(error);
    }
  }

  /**
   * Syncs one list; a refusal of it (or an answer about it that cannot be read) is kept in
   * `failures` instead of thrown, so that it does not stop the sync of the others. A server out
   * of reach, or a token it no longer takes, still ends the whole sync.
   * @param {string} list
   */
  async syncAlone(list) {
    try {
      await this.sync(list);
      this.failures.delete(list);
    } catch (error) {
      if (error instanceof Unreachable || isAbort(error)) throw error;
      if (error instanceof ApiError && error.is(ERRORS.unauthorized, ERRORS.tokenExpired)) throw error;
      // A refusal, or an answer about this list that cannot be read.
      this.failures.set(list, error instanceof Error ? error.message : String(error));
    }
  }

  settled() {
    this.retryDelay = FIRST_RETRY;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.setState("synced");
  }

  /**
   * Says what went wrong and, while no list is watched (its loop retries), schedules a retry.
   * @param {unknown} error
   */
  failed(error) {
    if (error instanceof Unreachable) this.setState(browserOffline() ? "offline" : "unreachable");
    else if (isAbort(error)) return;
    else if (this.state !== "signedOut") this.setState("error", error instanceof Error ? error.message : String(error));
    if (this.state === "signedOut" || this.stopped || this.watching !== null || this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.watching === null && this.needsRetry()) this.syncAll();
    }, this.nextRetryDelay());
  }

  /** The server's lists of this account: roles, epochs; lists this account lost are forgotten. */
  async refreshMemberships() {
    const answer = await this.call(ROUTES.lists, []);
    if (!Array.isArray(answer.lists)) throw new Error("the server's list of lists is malformed");
    const seen = new Set();
    for (const m of answer.lists.slice(0, 1000)) {
      if (!isID128(m?.id) || typeof m.role !== "string") continue;
      seen.add(m.id);
      // An encrypted list this device has no keys for: from the envelope another device of the
      // account left, or not at all yet (its sealed values are never read as text). Never for a
      // list this phone pulled as plain, which an owner encrypted since: its copy would keep its
      // plain ids under the new keys. The phone does not take a conversion yet (the terminal
      // does); the server refuses its plain writes, and the status line says so.
      if (m.encrypted === true && !this.replica.isEncrypted(m.id)) {
        if ((this.replica.entries.get(m.id)?.sync.epoch ?? null) !== null) continue;
        if (!(await this.openEnvelope(m.id))) continue;
      }
      const sync = this.replica.entry(m.id).sync;
      /** @type {import("./replica.js").SyncChanges} */
      const changes = { isRegistered: true, role: m.role, noLongerMember: false };
      if (sync.epoch !== null && m.epoch !== sync.epoch) Object.assign(changes, await this.epochChanged(m.id));
      if (sync.epoch === null) changes.epoch = m.epoch;
      const wasGone = sync.noLongerMember === true;
      await this.replica.saveSyncState(m.id, changes);
      if (wasGone) this.rejoined(m.id);
    }
    // A list this account was removed from (or whose owner deleted it) stays here, read-only,
    // with what was not sent yet, until the person removes it from the device.
    for (const list of this.replica.lists()) {
      if (list.sync.isRegistered && !seen.has(list.id) && !list.sync.noLongerMember) await this.replica.saveSyncState(list.id, { noLongerMember: true });
    }
  }

  /**
   * An encrypted list's keys from the envelope another device of the account left, opened with
   * the account's key pair (Envelopes.exchange); false when none is there or it does not open.
   * @param {string} list
   */
  async openEnvelope(list) {
    const pair = await accountKeyPair(this.replica.meta.accountKey);
    if (pair === null) return false;
    try {
      const answer = await this.call(ROUTES.envelope, [list]);
      if (typeof answer?.envelope !== "string" || answer.envelope.length > 16384) return false;
      const keys = await openEnvelope(answer.envelope, list, pair);
      await this.replica.saveKeys(keys.storageText, list);
      await this.replica.setMeta({ delivered: { ...(this.replica.meta.delivered ?? {}), [list]: keys.epochs.size } });
      return true;
    } catch (error) {
      if (error instanceof Unreachable || isAbort(error)) throw error;
      return false;
    }
  }

  /**
   * Leaves this device's keys of `list` sealed to its account, when the account's envelope may
   * lack one of their epochs (Envelopes.deliver): the account's other devices open the list.
   * @param {string} list
   */
  async deliverEnvelope(list) {
    const keys = this.replica.keyring.sealing(list);
    const name = this.replica.meta.account?.name;
    if (keys === undefined || !name || (this.replica.meta.delivered ?? {})[list] === keys.epochs.size) return;
    const pair = await accountKeyPair(this.replica.meta.accountKey);
    if (pair === null) return;
    const envelope = await sealEnvelope(keys, pair.publicKey);
    await this.call(ROUTES.deliverEnvelopes, [list], { body: { envelopes: [{ account: name, envelope }] } });
    await this.replica.setMeta({ delivered: { ...(this.replica.meta.delivered ?? {}), [list]: keys.epochs.size } });
  }

  /**
   * Brings this device's keys of `list` up to the server's (EnvelopeRenewal's twin): the newer
   * epochs another member's rotation left in this account's envelope are taken; when the list
   * awaits a rotation (a member left or was removed) and this account may make one, this device
   * makes the next epoch and leaves it to every member with a key pair. True when they changed.
   * @param {string} list
   */
  async renewKeys(list) {
    const pair = await accountKeyPair(this.replica.meta.accountKey);
    if (pair === null || !this.replica.keyring.sealing(list)) return false;
    let renewed = false;
    for (let round = 0; round < 3; round++) {
      const answer = await this.call(ROUTES.envelope, [list]);
      if (typeof answer?.envelope === "string" && answer.envelope.length <= 16384) {
        try {
          if (await this.takeKeys(list, await openEnvelope(answer.envelope, list, pair))) renewed = true;
        } catch (error) {
          if (error instanceof Unreachable || isAbort(error)) throw error;
        }
      }
      const held = this.replica.keyring.sealing(list);
      if (held === undefined) return renewed;
      const keyEpoch = Number.isInteger(answer?.keyEpoch) ? Math.min(Math.max(answer.keyEpoch, 0), 999999) : 0;
      /** @type {import("./seal.js").ListKeys} */
      let next;
      if (held.current > keyEpoch) {
        next = held; // a newer key than a restored server knows: handed on again, as it is
      } else if (answer?.rotationDue === true && held.current === keyEpoch) {
        next = await held.rotated();
      } else return renewed;
      try {
        await this.rotate(list, next);
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.is(ERRORS.staleKey)) continue; // another device rotated first
        if (error instanceof ApiError && error.is(ERRORS.forbidden)) return renewed;
        throw error;
      }
    }
    return renewed;
  }

  /**
   * Takes the epochs of `sent` this device lacks (the same identity key only); true when there were any.
   * @param {string} list
   * @param {import("./seal.js").ListKeys} sent
   */
  async takeKeys(list, sent) {
    const held = this.replica.keyring.sealing(list);
    if (held === undefined || held.identity.some((byte, i) => byte !== sent.identity[i])) return false;
    let merged = held;
    for (const [epoch, key] of sent.epochs) if (!merged.epochs.has(epoch)) merged = await merged.adding(epoch, key);
    if (merged === held) return false;
    await this.replica.saveKeys(merged.storageText, list);
    return true;
  }

  /**
   * Leaves `keys` (a new epoch) sealed to every member of `list` with a key pair, as a rotation to
   * its newest epoch; kept here once the server took it.
   * @param {string} list
   * @param {import("./seal.js").ListKeys} keys
   */
  async rotate(list, keys) {
    const answer = await this.call(ROUTES.members, [list]);
    const members = Array.isArray(answer?.members) ? answer.members.slice(0, 10000) : [];
    const envelopes = [];
    for (const member of members) {
      const key = typeof member?.publicKey === "string" ? fromBase64URL(member.publicKey) : null;
      if (key === null || key.length !== 32 || typeof member.account !== "string") continue;
      envelopes.push({ account: member.account, envelope: await sealEnvelope(keys, key) });
    }
    await this.call(ROUTES.deliverEnvelopes, [list], { body: { envelopes, epoch: keys.current } });
    await this.replica.saveKeys(keys.storageText, list);
    await this.replica.setMeta({ delivered: { ...(this.replica.meta.delivered ?? {}), [list]: keys.epochs.size } });
  }

  /**
   * The server was restored from a backup: push the whole state again, pull from the start.
   * @param {string} list
   * @returns {Promise<import("./replica.js").SyncChanges>}
   */
  async epochChanged(list) {
    const all = this.replica.registersAsOps(list);
    for (let i = 0; i < all.length; i += BATCH_SIZE) {
      await this.relay(list, all.slice(i, i + BATCH_SIZE));
    }
    return { cursor: 0, epoch: null };
  }

  /**
   * Pushes a batch of what a restored server lost (SyncEngine.rebuild's twin). After a restore a
   * replica id belongs to the first account that pushes its writes again, and an identity to the
   * first value pushed for it: on such a refusal each replica's writes go alone, and those the
   * server now holds for someone else stay on this device only (this device's unsent writes are
   * stamped anew by the push of the outbox). A viewer's relay is refused: the writers rebuild.
   * @param {string} list
   * @param {import("./ops.js").Op[]} batch
   */
  async relay(list, batch) {
    try {
      await this.call(ROUTES.push, [list], { body: { ops: encode(await this.sealed(list, batch)) } });
    } catch (error) {
      if (error instanceof ApiError && error.is(ERRORS.forbidden)) return;
      if (!(error instanceof ApiError && error.is(ERRORS.replicaTaken, ERRORS.identityConflict))) throw error;
      /** @type {Map<string, import("./ops.js").Op[]>} */
      const byReplica = new Map();
      for (const op of batch) byReplica.set(op.replica, [...(byReplica.get(op.replica) ?? []), op]);
      for (const group of byReplica.values()) {
        try {
          await this.call(ROUTES.push, [list], { body: { ops: encode(await this.sealed(list, group)) } });
        } catch (refusal) {
          if (!(refusal instanceof ApiError && refusal.is(ERRORS.replicaTaken, ERRORS.identityConflict))) throw refusal;
        }
      }
    }
  }

  /**
   * Registers (when made here), pushes and pulls one list.
   * @param {string} list
   */
  async sync(list) {
    await this.locked(list, async () => {
      if (!(await this.registerAndPush(list))) return;
      await this.startFromSnapshot(list);
      await this.pullAll(list, false);
      await this.leaveSnapshot(list);
    });
  }

  /**
   * An encrypted list this phone has not pulled yet starts from its snapshot when the server has
   * one that opens here, then pulls the log after it (SyncEngine.startFromSnapshot's twin). One
   * that does not open, of another epoch of the server's log, or ahead of this clock is passed
   * over: the log from the start.
   * @param {string} list
   */
  async startFromSnapshot(list) {
    const sync = this.replica.syncState(list);
    const keys = this.replica.keyring.sealing(list);
    if (!sync || sync.cursor !== 0 || keys === undefined) return;
    const answer = await this.call(ROUTES.snapshot, [list]);
    if (answer === null || !Number.isSafeInteger(answer.cursor) || answer.cursor <= 0 || typeof answer.snapshot !== "string" ||
        typeof answer.epoch !== "string" || (sync.epoch !== null && sync.epoch !== answer.epoch)) return;
    let ops;
    try {
      ops = await openSnapshot(keys, answer.snapshot, answer.cursor);
    } catch {
      return;
    }
    try {
      await this.replica.merge(list, ops, { cursor: answer.cursor, epoch: answer.epoch, historyIncomplete: true, snapshotCursor: answer.cursor });
    } catch (error) {
      if (!(error instanceof ClockSkew)) throw error;
    }
  }

  /**
   * An owner's phone leaves a new snapshot of an encrypted list once the log grew by
   * SNAPSHOT_EVERY operations since the last it made or started from, when it is even with the
   * server (SyncEngine.leaveSnapshot's twin). A refusal is not the sync's failure.
   * @param {string} list
   */
  async leaveSnapshot(list) {
    const sync = this.replica.syncState(list);
    const keys = this.replica.keyring.sealing(list);
    if (!sync || keys === undefined || sync.role !== "owner" || sync.noLongerMember || this.unopened > 0) return;
    if ((this.replica.outbox.get(list)?.size ?? 0) > 0 || sync.cursor < (sync.snapshotCursor ?? 0) + SNAPSHOT_EVERY) return;
    const text = await sealSnapshot(keys, this.replica.registersAsOps(list), sync.cursor);
    if (text.length > MAX_SNAPSHOT_BYTES) return;
    try {
      await this.call(ROUTES.putSnapshot, [list], { body: { cursor: sync.cursor, snapshot: text } });
    } catch (error) {
      if (error instanceof ApiError) return;
      throw error;
    }
    await this.replica.saveSyncState(list, { snapshotCursor: sync.cursor });
  }

  /**
   * Registers the list when it was made here, then pushes its outbox; false when it is not here.
   * @param {string} list
   */
  async registerAndPush(list) {
    const sync = this.replica.syncState(list);
    if (!sync) return false;
    if (!sync.isRegistered) {
      const encrypted = this.replica.isEncrypted(list);
      const m = await this.call(ROUTES.createList, [], { body: encrypted ? { id: list, encrypted } : { id: list } });
      if ((m.encrypted === true) !== encrypted) {
        throw new Error(encrypted ? "the server registered the list plain" : "the list is encrypted end to end and this device has no keys for it");
      }
      await this.replica.saveSyncState(list, { isRegistered: true, role: m.role, epoch: m.epoch ?? null });
    }
    // The account's other devices open an encrypted list with the keys this one leaves them.
    await this.deliverEnvelope(list);
    await this.pushPending(list);
    return true;
  }

  /**
   * @param {string} list
   */
  async pushPending(list) {
    // Each refusal that stamping anew answers is taken once per push (SyncEngine.pushPending's twin).
    const reclaimed = new Set();
    let renewalTried = false;
    for (let attempt = 0; attempt < 4; attempt++) {
      const pending = [...(this.replica.outbox.get(list)?.values() ?? [])];
      if (pending.length === 0) return;
      const batch = pending.slice(0, BATCH_SIZE);
      try {
        const answer = await this.call(ROUTES.push, [list], { body: { ops: encode(await this.sealed(list, batch)) } });
        // Nothing leaves the outbox unless the answer accounts for every operation sent.
        if (!Number.isInteger(answer.accepted) || !Number.isInteger(answer.duplicates) ||
            answer.accepted + answer.duplicates !== batch.length) {
          throw new Error("the server's push answer does not account for the operations sent");
        }
        await this.replica.acknowledge(list, batch);
        attempt = -1; // the next batch
      } catch (error) {
        if (error instanceof ApiError && error.is(ERRORS.clockSkew) && typeof error.body.serverTime === "number" && attempt < 2) {
          await this.replica.correctClock(error.body.serverTime);
          continue;
        }
        // Another member pushed one of these writes' identities (or this page's replica id) first,
        // with another value: stamped anew (under a new replica id for the second), ours win.
        if (error instanceof ApiError && error.is(ERRORS.identityConflict, ERRORS.replicaTaken) &&
            !reclaimed.has(error.code)) {
          reclaimed.add(error.code);
          await this.replica.restampPending(list, error.is(ERRORS.replicaTaken));
          continue;
        }
        // Sealed under a key the list no longer takes, or it awaits a new one (a member left): with
        // the list's newest key (taken, or made here), the same writes again.
        if (error instanceof ApiError && error.is(ERRORS.staleKey, ERRORS.rotationRequired) && !renewalTried) {
          renewalTried = true;
          if (await this.renewKeys(list)) {
            attempt -= 1;
            continue;
          }
        }
        if (error instanceof ApiError && error.is(ERRORS.notFound)) {
          await this.replica.saveSyncState(list, { noLongerMember: true });
          return;
        }
        if (error instanceof ApiError && error.is(ERRORS.forbidden)) {
          // A viewer now (SyncEngine.pushPending's twin): the changes stay here, shown on the
          // list with the way to drop them; the list is read-only; the pull goes on.
          if (this.replica.syncState(list)?.role !== "viewer") await this.replica.saveSyncState(list, { role: "viewer" });
          return;
        }
        throw error;
      }
    }
  }

  /**
   * Pulls pages until the list is up to date; with `wait`, one long-poll.
   * @param {string} list
   * @param {boolean} wait
   * @param {AbortSignal} [signal]
   */
  async pullAll(list, wait, signal) {
    let rebuilds = 0;
    for (let pages = 0; pages < 10000; pages++) {
      const sync = this.replica.syncState(list);
      if (!sync) return;
      const query = `after=${sync.cursor}` + (wait ? `&wait=${WAIT}` : "");
      const page = await this.call(ROUTES.pull, [list], { query, signal, timeout: (WAIT + 10) * 1000 });
      const before = sync.cursor;
      if (!(await this.mergePage(list, page))) {
        rebuilds += 1;
        if (rebuilds > 2) throw new Error("the server changed the list's epoch again and again");
        continue;
      }
      if (!page.more) return;
      if (decodedCount(page) === 0 || page.cursor <= before) throw new Error("the server's page says more but moves nothing");
      wait = false;
    }
  }

  /**
   * The operations as the server takes them: an encrypted list's sealed (HTTPSyncTransport.push's
   * twin); the outbox keeps them as they were written.
   * @param {string} list
   * @param {import("./ops.js").Op[]} ops
   */
  async sealed(list, ops) {
    const keys = this.replica.keyring.sealing(list);
    return keys ? Promise.all(ops.map((op) => keys.seal(op))) : ops;
  }

  /**
   * A page's operations: decoded, and an encrypted list's opened and validated one by one (those
   * that do not open with this device's keys, or open to what breaks the rules, are left out and
   * counted in `unopened`, never stopping the page: HTTPSyncTransport.page's twin).
   * @param {string} list
   * @param {string} text
   */
  async opened(list, text) {
    let keys = this.replica.keyring.sealing(list);
    const ops = decode(text, keys !== undefined);
    if (keys === undefined) return ops;
    // Sealed under a newer key than this device holds: another member rotated it. With the new
    // key, the page opens; without, nothing of it is merged and the cursor stays.
    const newest = ops.reduce((most, op) => Math.max(most, typeof op.value === "string" ? parseSealed(op.value)?.epoch ?? -1 : -1), -1);
    if (newest > keys.current) {
      await this.renewKeys(list);
      keys = this.replica.keyring.sealing(list);
      if (keys === undefined || newest > keys.current) {
        throw new Error("another member gave this list a new key, which has not reached this device yet");
      }
    }
    /** @type {import("./ops.js").Op[]} */
    const out = [];
    for (const op of ops) {
      try {
        if (op.list !== list) throw new Error("another list's");
        const opened = await keys.open(op);
        validate(opened);
        out.push(opened);
      } catch {
        this.unopened += 1;
      }
    }
    return out;
  }

  /**
   * Merges one pulled page; returns false when the list had to start over (a new epoch).
   * @param {string} list
   * @param {PulledPage} page
   */
  async mergePage(list, page) {
    const sync = this.replica.syncState(list);
    if (sync === undefined) return true;
    if (typeof page.cursor !== "number" || typeof page.ops !== "string" || typeof page.epoch !== "string") {
      throw new Error("the server's page is malformed");
    }
    if (sync.epoch !== null && page.epoch !== sync.epoch) {
      await this.replica.saveSyncState(list, await this.epochChanged(list));
      return false;
    }
    const ops = await this.opened(list, page.ops);
    if (ops.some((op) => op.list !== list)) throw new Error("the server sent operations of another list");
    // The server ended the wait because this account's role changed (an owner made it a viewer):
    // the open screen follows at once (SyncEngine.mergePage's twin).
    if (ROLES.includes(page.role) && page.role !== sync.role) await this.replica.saveSyncState(list, { role: page.role });
    // Or because someone went shopping or finished.
    if (page.shopping !== undefined) void this.shopping?.heard(list, page.shopping, page.serverTime);
    if (typeof page.together === "number") this.togetherHeard.set(list, page.together);
    // Or because text came to its inbox: the open list files it.
    if (typeof page.inbox === "number" && page.inbox > 0) this.onInbox(list);
    try {
      await this.replica.merge(list, ops, {
        cursor: Math.max(sync.cursor, page.cursor),
        epoch: page.epoch,
        historyIncomplete: page.historyComplete === false || sync.historyIncomplete === true,
      });
    } catch (error) {
      if (error instanceof ClockSkew && typeof page.serverTime === "number" && !this.corrected) {
        this.corrected = true;
        // This device's clock is behind: take the server's, then the page again.
        await this.replica.correctClock(page.serverTime);
        await this.replica.merge(list, ops, { cursor: Math.max(sync.cursor, page.cursor), epoch: page.epoch });
      } else throw error;
    }
    return true;
  }

  /**
   * Pushes the list's outbox now (after a local change); the watcher keeps pulling.
   * @param {string} list
   */
  async send(list) {
    if (!this.token) return this.onStatus(this.status());
    this.onStatus(this.status());
    try {
      await this.locked(list, async () => {
        // Sent, and nothing waits: an owner's list whose log grew leaves its snapshot (the watch
        // loop may have pulled the last page before this push was answered).
        if (await this.registerAndPush(list)) await this.leaveSnapshot(list);
      });
      this.failures.delete(list);
      if (this.needsRetry()) {
        this.settled();
        // The server is back: the open list's loop stops waiting and parks its long-poll again.
        this.wakeRetry?.();
      }
      else this.onStatus(this.status());
    } catch (error) {
      this.noteFailure(list, error);
      this.failed(error);
    }
  }

  /**
   * Keeps the server's refusal of `list` in `failures` (not a network failure or a sign-out,
   * which are not the list's).
   * @param {string} list
   * @param {unknown} error
   */
  noteFailure(list, error) {
    if (!(error instanceof ApiError) || error.is(ERRORS.unauthorized, ERRORS.tokenExpired)) return;
    this.failures.set(list, error.message);
  }

  /**
   * Keeps a long-poll parked on `list` (null: none) until another list is watched.
   * @param {string | null} list
   */
  watch(list) {
    if (this.watching === list) return;
    this.watchController?.abort();
    this.watching = list;
    if (list === null) return;
    const controller = new AbortController();
    this.watchController = controller;
    this.watchLoop(list, controller.signal);
  }

  /**
   * @param {string} list
   * @param {AbortSignal} signal
   */
  async watchLoop(list, signal) {
    while (!signal.aborted && !this.stopped) {
      if (!this.token || this.replica.syncState(list)?.noLongerMember !== false) return;
      try {
        await this.sync(list);
        this.failures.delete(list);
        if (this.state !== "synced") this.settled();
        for (;;) {
          if (signal.aborted) return;
          await this.locked(list, () => Promise.resolve());
          const sync = this.replica.syncState(list);
          if (!sync) return;
          const page = await this.call(ROUTES.pull, [list], {
            query: `after=${sync.cursor}&wait=${WAIT}&together=${this.togetherHeard.get(list) ?? 0}`,
            signal,
            timeout: (WAIT + 10) * 1000,
          });
          await this.locked(list, async () => {
            if (await this.mergePage(list, page)) {
              if (page.more) await this.pullAll(list, false);
              // An owner's open list leaves its snapshot as the log grows, not only at a full sync.
              await this.leaveSnapshot(list);
            }
          });
          if (this.state !== "synced") this.settled();
        }
      } catch (error) {
        if (signal.aborted || isAbort(error)) return;
        if (error instanceof ApiError && error.is(ERRORS.notFound)) {
          // Removed from the list, or it was deleted: it stays here, read-only.
          await this.replica.saveSyncState(list, { noLongerMember: true });
          this.settled();
          return;
        }
        this.noteFailure(list, error);
        this.failed(error);
        if (this.state === "signedOut") return;
        await this.pause(this.nextRetryDelay(), signal);
      }
    }
  }

  /**
   * Waits `ms`, or less when the network comes back or the watch is stopped.
   * @param {number} ms
   * @param {AbortSignal} signal
   * @returns {Promise<void>}
   */
  pause(ms, signal) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        if (this.wakeRetry === done) this.wakeRetry = null;
        resolve(undefined);
      };
      this.wakeRetry = done;
      signal.addEventListener("abort", done);
    });
  }

  /** The network is back, or the page came into view: try at once. */
  wake() {
    this.retryDelay = FIRST_RETRY;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const waiting = this.wakeRetry;
    this.wakeRetry = null;
    if (waiting) waiting();
    else if (this.watching === null) this.syncAll();
    else this.restartWatch();
  }

  stop() {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.watchController?.abort();
  }
}
