// @ts-check
/**
 * "I'm going shopping" on the phone: who is shopping for each list, as the server last said
 * (a long-poll that ended with the statuses, or GET …/shopping when a list opens), judged by the
 * server's clock; saying so, and "done" with what this device checked off meanwhile. The CLI's
 * twin is ShoppingCommands.swift with Replica+Shopping.swift (ShoppingNews).
 */
import { ROUTES, request } from "./api.js";
import { milliseconds } from "./clock.js";
import { items, openedShops } from "./push-text.js";
import { shopPlace } from "./sealed.js";

/**
 * One member's status (Wire.ShoppingStatus).
 * @typedef {{ who: string, shop: string | null, since: number, until: number, ended: number | null, bought: number | null }} ShoppingStatus
 */
/**
 * What the server last said of a list (ShoppingNews in Swift).
 * @typedef {{ statuses: ShoppingStatus[], serverTime: number, receivedAt: number }} ShoppingNews
 */

/** How long "done shopping" is still shown, in milliseconds (as the server keeps it). */
const DONE_SHOWN = 3600000;

/**
 * The statuses of an answer, checked and cut (a server's bytes are untrusted).
 * @param {unknown} raw
 * @returns {ShoppingStatus[]}
 */
export function checkedStatuses(raw) {
  if (!Array.isArray(raw)) return [];
  /** @type {ShoppingStatus[]} */
  const statuses = [];
  for (const s of raw.slice(0, 50)) {
    if (typeof s !== "object" || s === null || typeof s.who !== "string") continue;
    if (!Number.isFinite(s.since) || !Number.isFinite(s.until)) continue;
    statuses.push({
      who: s.who.slice(0, 64),
      // An encrypted list's is sealed, and cut once opened (openedShops).
      shop: typeof s.shop === "string" ? s.shop.slice(0, 1024) : null,
      since: s.since,
      until: s.until,
      ended: Number.isFinite(s.ended) ? s.ended : null,
      bought: Number.isInteger(s.bought) ? Math.max(0, Math.min(s.bought, 100000)) : null,
    });
  }
  return statuses;
}

export class Shopping {
  /**
   * @param {import("./replica.js").Replica} replica
   * @param {() => void} changed called when what a list's header says may have changed
   */
  constructor(replica, changed) {
    this.replica = replica;
    this.changed = changed;
    /** @type {Map<string, ShoppingNews>} */
    this.news = new Map();
  }

  /**
   * Keeps what the server said of `list`.
   * @param {string} list
   * @param {unknown} statuses
   * @param {unknown} serverTime
   */
  async heard(list, statuses, serverTime) {
    const now = Date.now();
    const opened = await openedShops(checkedStatuses(statuses), list, this.replica.keyring.sealing(list));
    this.news.set(list, { statuses: opened, serverTime: typeof serverTime === "number" ? serverTime : now, receivedAt: now });
    this.changed();
  }

  /**
   * The server's clock at this device's `now`, for `news`.
   * @param {ShoppingNews} news
   * @param {number} now
   */
  static serverNow(news, now) {
    return now + news.serverTime - news.receivedAt;
  }

  /**
   * Who is shopping for `list` now, and who finished within the hour.
   * @param {string} list
   * @param {number} [now]
   */
  of(list, now = Date.now()) {
    const news = this.news.get(list);
    if (news === undefined) return { shopping: [], done: [], news: null };
    const server = Shopping.serverNow(news, now);
    return {
      shopping: news.statuses.filter((s) => s.ended === null && s.until > server),
      done: news.statuses.filter((s) => s.ended !== null && s.ended > server - DONE_SHOWN),
      news,
    };
  }

  /**
   * What the list's header says: "olga is shopping at Lidl · since 17:05", "olga bought 12
   * items · 17:40" (this account's own as "You are shopping …").
   * @param {string} list
   * @param {string | null} me
   * @param {(ms: number) => string} clock a device time as a person reads it
   */
  lines(list, me, clock) {
    const { shopping, done, news } = this.of(list);
    if (news === null) return [];
    const local = (/** @type {number} */ ms) => clock(ms - (news.serverTime - news.receivedAt));
    return [
      ...shopping.map((s) => `${s.who === me ? "You are" : `${s.who} is`} shopping${s.shop ? ` at ${s.shop}` : ""} · since ${local(s.since)}`),
      ...done.map((s) => `${s.who === me ? "You" : s.who} bought ${items(s.bought ?? 0)}${s.shop ? ` at ${s.shop}` : ""} · ${local(s.ended ?? s.since)}`),
    ];
  }

  /**
   * Whether this account is shopping for `list` now.
   * @param {string} list
   * @param {string | null} me
   */
  isShopping(list, me) {
    return this.of(list).shopping.some((s) => s.who === me);
  }

  /**
   * Asks the server who is shopping for `list` (when the list opens).
   * @param {string} list
   */
  async refresh(list) {
    const answer = await request(ROUTES.shopping, [list], { token: this.replica.meta.account?.token });
    await this.heard(list, answer?.shopping, answer?.serverTime);
  }

  /**
   * "I'm going shopping", at `shop` when given.
   * @param {string} list
   * @param {string} shop
   */
  async start(list, shop) {
    // An encrypted list's shop name goes sealed, as its values do.
    const keys = this.replica.keyring.sealing(list);
    const name = shop.trim();
    const sent = name !== "" && keys !== undefined ? /** @type {string} */ ((await keys.seal(shopPlace(list, name))).value) : name;
    const body = name === "" ? {} : { shop: sent };
    const answer = await request(ROUTES.startShopping, [list], { token: this.replica.meta.account?.token, body });
    await this.heard(list, answer?.shopping, answer?.serverTime);
  }

  /**
   * "Done shopping", with how many items this device checked off since this account began.
   * @param {string} list
   * @param {string | null} me
   * @returns {Promise<number>} how many
   */
  async stop(list, me) {
    const { shopping, news } = this.of(list);
    const mine = shopping.find((s) => s.who === me);
    const since = mine && news ? mine.since - (news.serverTime - news.receivedAt) : null;
    const bought = since === null ? 0 : this.checkedByThisDevice(list, since);
    const answer = await request(ROUTES.stopShopping, [list], { token: this.replica.meta.account?.token, query: `bought=${bought}` });
    await this.heard(list, answer?.shopping, answer?.serverTime);
    return bought;
  }

  /**
   * How many items of `list` this device checked off since `since` (device ms) that are still
   * checked (Replica.checkedByThisDevice in Swift).
   * @param {string} list
   * @param {number} since
   */
  checkedByThisDevice(list, since) {
    const state = this.replica.state(list);
    if (state === undefined) return 0;
    let n = 0;
    for (const item of state.items.keys()) {
      const register = state.register(item, "checked");
      if (register === undefined || register.value !== true) continue;
      if (state.register(item, "deleted")?.value === true) continue;
      if (this.replica.isOwnReplica(register.replica) && milliseconds(register.ts) >= since) n += 1;
    }
    return n;
  }
}
