// @ts-check
/**
 * What a push notification says, written on the phone from the message (Wire.PushMessage: the
 * list, who did what, item ids) and the phone's own copy of the list (the names), never from
 * text the server wrote: "Family — anna added milk, eggs and 3 more", "olga is shopping at
 * Lidl", "olga bought 12 items". The CLI says the same of a list's news (ShoppingCommands.swift).
 */
import { parse, shopPlace } from "./sealed.js";
import { decode, validate } from "./ops.js";

/**
 * One event of a push message (Wire.PushMessage.Event).
 * @typedef {{ kind: string, who: string, count: number, items: string[], shop?: string, ops?: string }} PushEvent
 */
/**
 * A push message as the server sends it (Wire.PushMessage), checked where it is read.
 * @typedef {{ v: number, list: string, at: number, events: PushEvent[] }} PushMessage
 */

/** The longest text of one part of a notification, in characters. */
const MAX_TEXT = 200;

/**
 * "1 item", "12 items" (Phrases.items).
 * @param {number} n
 */
export function items(n) {
  return n === 1 ? "1 item" : `${n} items`;
}

/**
 * The message from a push's data, or null when it is not one (a server's bytes are untrusted:
 * every field is checked, texts cut).
 * @param {unknown} data
 * @returns {PushMessage | null}
 */
export function pushMessage(data) {
  if (typeof data !== "object" || data === null) return null;
  const raw = /** @type {Record<string, any>} */ (data);
  if (raw.v !== 1 || typeof raw.list !== "string" || !/^[0-9a-f]{32}$/.test(raw.list)) return null;
  if (!Array.isArray(raw.events)) return null;
  /** @type {PushEvent[]} */
  const events = [];
  for (const event of raw.events.slice(0, 20)) {
    if (typeof event !== "object" || event === null) continue;
    if (!["added", "shopping", "done"].includes(event.kind) || typeof event.who !== "string") continue;
    const count = Number.isInteger(event.count) && event.count >= 0 ? Math.min(event.count, 100000) : 0;
    const ids = Array.isArray(event.items) ? event.items.filter((/** @type {unknown} */ id) => typeof id === "string" && /^[0-9a-f]{32}$/.test(id)) : [];
    events.push({
      kind: event.kind,
      who: event.who.slice(0, 64),
      count,
      items: ids.slice(0, 40),
      // An encrypted list's is sealed: kept whole for the service worker to open (openedShops).
      ...(typeof event.shop === "string" ? { shop: event.shop.slice(0, 1024) } : {}),
      // An encrypted list's added names, sealed as pushed (openedNames opens them).
      ...(typeof event.ops === "string" && event.ops.length <= 4096 ? { ops: event.ops } : {}),
    });
  }
  if (events.length === 0) return null;
  return { v: 1, list: raw.list, at: typeof raw.at === "number" ? raw.at : 0, events };
}

/**
 * One event in words: "anna added 5 items: milk, eggs, bread and 2 more" (the names this phone
 * knows), "olga is shopping at Lidl", "olga bought 12 items".
 * @param {PushEvent} event
 * @param {Map<string, string>} names item id → name, from this phone's copy of the list
 */
export function eventText(event, names) {
  if (event.kind === "shopping") return `${event.who} is shopping${event.shop ? ` at ${event.shop}` : ""}`;
  if (event.kind === "done") return `${event.who} bought ${items(event.count)}`;
  const known = event.items.map((id) => names.get(id)).filter((name) => name !== undefined);
  const shown = known.slice(0, 3);
  const more = event.count - shown.length;
  const list = shown.length === 0 ? "" : `: ${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
  return `${event.who} added ${items(event.count)}${list}`;
}

/**
 * The notification: the list's title, and a line per event, the shopping ones first.
 * @param {PushMessage} message
 * @param {string | null} title the list's title on this phone (null: not here yet)
 * @param {Map<string, string>} names
 * @returns {{ title: string, body: string }}
 */
export function pushText(message, title, names) {
  const order = ["shopping", "done", "added"];
  const events = [...message.events].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  const body = events.map((event) => eventText(event, names).slice(0, MAX_TEXT)).join("\n");
  return { title: (title ?? "Basket").slice(0, MAX_TEXT), body };
}

/**
 * The statuses with their shop names as a person reads them: an encrypted list's opened with its
 * keys (one that does not open, or is no shop's name, is left out), every one cut to 100 bytes'
 * worth (HTTPSyncTransport.checked's twin).
 * @template {{ shop: string | null }} T
 * @param {T[]} statuses
 * @param {string} list
 * @param {import("./seal.js").ListKeys | undefined} keys
 * @returns {Promise<T[]>}
 */
export async function openedShops(statuses, list, keys) {
  const out = [];
  for (const status of statuses) {
    let shop = status.shop;
    if (shop !== null && keys !== undefined) {
      try {
        const opened = await keys.open(shopPlace(list, shop));
        shop = typeof opened.value === "string" ? opened.value : null;
      } catch {
        shop = null;
      }
    }
    // Sealed text without the keys to open it (a phone without its copy of the list) says nothing.
    if (shop !== null && keys === undefined) shop = parse(shop) !== null ? null : shop.slice(0, 100);
    else if (shop !== null && new TextEncoder().encode(shop).length > 100) shop = null;
    out.push({ ...status, shop });
  }
  return out;
}

/**
 * The names an encrypted list's push message carries sealed (Wire.PushMessage.Event.ops), opened
 * with the phone's keys of the list: item id → name, for the items its copy does not have yet. An
 * operation that is not a name of the list, does not open or breaks the rules is left out.
 * @param {PushEvent[]} events
 * @param {string} list
 * @param {import("./seal.js").ListKeys | undefined} keys
 * @returns {Promise<Map<string, string>>}
 */
export async function openedNames(events, list, keys) {
  /** @type {Map<string, string>} */
  const names = new Map();
  if (keys === undefined) return names;
  for (const event of events) {
    if (event.ops === undefined) continue;
    let ops;
    try {
      ops = decode(event.ops, true).slice(0, 40);
    } catch {
      continue;
    }
    for (const op of ops) {
      try {
        if (op.list !== list || op.field !== "name") continue;
        const opened = await keys.open(op);
        validate(opened);
        if (typeof opened.value === "string") names.set(op.item, opened.value);
      } catch {
        // Left out: the notification counts the item without its name.
      }
    }
  }
  return names;
}
