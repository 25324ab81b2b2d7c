// @ts-check
/**
 * Push notifications on this phone: which lists it hears of and what of them (items added,
 * someone going shopping, shopping done). Quiet until its person turns them on for a list: only
 * then does the browser ask for permission, subscribe to its push service with the server's
 * VAPID key, and give the server the subscription (POST /v1/push/subscriptions). One
 * subscription per browser: the lists and kinds travel together, sent again on every change.
 * The server's key is compared at each start: a rotated key (or a restored server) makes the
 * phone subscribe again. Nothing here has a Swift twin: the CLI has no push service.
 */
import { ROUTES, request } from "./api.js";
import { h, openDialog } from "./ui.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/** @typedef {import("./replica.js").Replica} Replica */
/** @typedef {import("./store.js").PushChoice} PushChoice */

/** The kinds a person may choose, in the words the sheet shows them. */
export const KINDS = [
  { kind: "added", label: "Items added by others" },
  { kind: "shopping", label: "Someone going shopping" },
  { kind: "done", label: "Shopping done, with what was bought" },
];

/** Why notifications cannot be had here, for the person to read. */
export class PushUnavailable extends Error {}

/**
 * What this phone hears now.
 * @param {Replica} replica
 * @returns {PushChoice}
 */
export function choice(replica) {
  const push = /** @type {Partial<PushChoice> | undefined} */ (replica.meta.push);
  return { lists: push?.lists ?? [], kinds: push?.kinds ?? ["added", "shopping", "done"], id: push?.id, key: push?.key };
}

/**
 * The base64url text as bytes (the server's key, for `applicationServerKey`).
 * @param {string} text
 */
function bytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/**
 * Makes (or keeps) this browser's subscription for the server's key, and tells the server what
 * it hears; with no list left, ends it on both sides.
 * @param {Replica} replica
 * @param {PushChoice} wanted
 * @returns {Promise<PushChoice>}
 */
export async function apply(replica, wanted) {
  const token = replica.meta.account?.token;
  if (!token) throw new PushUnavailable("Sign in first: notifications come from the server.");
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    throw new PushUnavailable("This browser cannot show notifications from a web app.");
  }
  const registration = await navigator.serviceWorker.ready;
  const existing = await registration.pushManager.getSubscription();
  if (wanted.lists.length === 0) {
    if (wanted.id) await request(ROUTES.unsubscribePush, [wanted.id], { token }).catch(() => {});
    await existing?.unsubscribe().catch(() => false);
    return { lists: [], kinds: wanted.kinds };
  }
  if (Notification.permission !== "granted" && (await Notification.requestPermission()) !== "granted") {
    throw new PushUnavailable("Notifications are blocked for this site: allow them in the browser's settings, then try again.");
  }
  const key = (await request(ROUTES.pushKey, [], { token }))?.publicKey;
  if (typeof key !== "string") throw new PushUnavailable("The server sends no notifications.");
  let subscription = existing;
  if (subscription !== null && wanted.key !== key) {
    // Made for another key (rotated, or another server): push services refuse the new one's messages.
    await subscription.unsubscribe().catch(() => false);
    subscription = null;
  }
  try {
    subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes(key) });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new PushUnavailable(`Notifications could not be turned on: this browser's push service did not answer (${why}).`);
  }
  const made = await request(ROUTES.subscribePush, [], { token, body: { ...subscription.toJSON(), lists: wanted.lists, kinds: wanted.kinds } });
  return { lists: wanted.lists, kinds: wanted.kinds, id: typeof made?.id === "string" ? made.id : undefined, key };
}

/**
 * At start: when this phone hears of lists, subscribe again if the server's key changed.
 * @param {Replica} replica
 */
export async function renew(replica) {
  const now = choice(replica);
  if (now.lists.length === 0 || !replica.meta.account?.token || typeof Notification === "undefined") return;
  if (Notification.permission !== "granted") return;
  const key = (await request(ROUTES.pushKey, [], { token: replica.meta.account.token }).catch(() => null))?.publicKey;
  if (typeof key !== "string" || key === now.key) return;
  await replica.setMeta({ push: await apply(replica, now) });
}

/**
 * The list's notifications sheet: hear of this list or not, and what.
 * @param {ListScreen} screen
 */
export function notificationSettings(screen) {
  const now = choice(screen.replica);
  const on = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: "push-on", checked: now.lists.includes(screen.list) }));
  const kinds = KINDS.map(({ kind, label }) => {
    const box = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: `push-${kind}`, checked: now.kinds.includes(kind) }));
    return { kind, box, row: h("div", { class: "check" }, box, h("label", { for: `push-${kind}` }, label)) };
  });
  const error = h("p", { class: "error", role: "alert" });
  const dialog = openDialog(
    "push-title",
    "Notifications",
    h("p", { class: "hint" }, "This phone is told even when Basket is closed; at most one notification per list a minute."),
    h("div", { class: "check" }, on, h("label", { for: "push-on" }, "Tell me about this list on this phone")),
    h("fieldset", {}, h("legend", {}, "What to hear (every list on this phone)"), ...kinds.map((k) => k.row)),
    error,
    h("div", { class: "actions" }, h("button", { class: "primary", onclick: () => screen.run(save) }, "Save")),
  );
  async function save() {
    const lists = now.lists.filter((l) => l !== screen.list).concat(on.checked ? [screen.list] : []);
    const chosen = kinds.filter((k) => k.box.checked).map((k) => k.kind);
    error.textContent = "";
    try {
      const applied = await apply(screen.replica, { ...now, lists: chosen.length === 0 ? [] : lists, kinds: chosen });
      await screen.replica.setMeta({ push: applied });
    } catch (problem) {
      if (!(problem instanceof PushUnavailable)) throw problem;
      error.textContent = problem.message;
      return;
    }
    dialog.close();
    screen.app.showToast(on.checked && chosen.length > 0 ? "Notifications on for this list" : "Notifications off for this list", screen.list);
  }
}
