// @ts-check
/**
 * "I'm at Lidl" on the list's screen: choosing one of the list's shops begins a trip (the list
 * is walked in that shop's order, items for other shops hidden, one tap shows them), and ending
 * it teaches the shop's order from the order this phone checked items off in. When the list is
 * shared, the others are told too (shopping.js). The CLI's twin is `basket shopping start --at`
 * and `basket ls --at-shop` (ShoppingCommands.swift, ShopCommands.swift).
 */
import { h } from "./ui.js";
import { finishTrip, shopView, shopsOf, startTrip, tripOf, walkOrder } from "./replica-shops.js";
import { learnedNote, showUsuals } from "./usuals-sheet.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/** @typedef {import("./state.js").Item} Item */

/**
 * The walk's parts of a list screen: the "At shop" line, the button showing the items for other
 * shops, the Usuals button; whether those items are shown, and how many the walk hides.
 * @param {ListScreen} screen
 */
export function walkParts(screen) {
  const parts = {
    element: h("div", { class: "walking row", hidden: true }),
    otherShops: h("button", { class: "more", onclick: () => { parts.allShops = !parts.allShops; screen.data = null; screen.render(); } }),
    usuals: h("button", { class: "link", onclick: () => screen.run(() => showUsuals(screen)) }, "Usuals"),
    allShops: false,
    hidden: 0,
  };
  return parts;
}

/**
 * The shop the list is walked at (this phone's trip), if any.
 * @param {ListScreen} screen
 */
export function walkedShop(screen) {
  const trip = tripOf(screen.replica, screen.list);
  if (trip === null) return null;
  return shopsOf(screen.replica, screen.list).find((s) => s.id === trip.shop) ?? null;
}

/**
 * The items to buy as the walk shows them, and the aisles' order: at a shop, its order and each
 * item's aisle there, those for other shops left out unless `screen.walk.allShops`.
 * @param {ListScreen} screen
 * @param {Item[]} toBuy
 * @param {string[]} aisles the list's aisle order
 */
export function walk(screen, toBuy, aisles) {
  const shop = walkedShop(screen);
  if (shop === null) return { items: toBuy, aisles, hidden: 0, shop };
  const view = shopView(toBuy, shop, shopsOf(screen.replica, screen.list), screen.walk.allShops);
  return { items: view.items, aisles: walkOrder(shop, aisles), hidden: view.hidden, shop };
}

/**
 * The "At shop" control and the button that ends the trip, drawn into `screen.walk.element` when
 * the list has shops.
 * @param {ListScreen} screen
 */
export function showWalk(screen) {
  const shops = shopsOf(screen.replica, screen.list);
  const shop = walkedShop(screen);
  const key = [shops.map((s) => s.id + s.name).join(","), shop?.id ?? "", screen.readOnly()].join("\u0000");
  if (screen.walk.element.dataset.key === key) return;
  screen.walk.element.dataset.key = key;
  screen.walk.element.hidden = shops.length === 0 || screen.readOnly();
  if (screen.walk.element.hidden) return screen.walk.element.replaceChildren();
  const select = /** @type {HTMLSelectElement} */ (
    h("select", { id: "at-shop", onchange: () => screen.run(() => choose(screen, select.value)) },
      h("option", { value: "" }, "No shop"),
      ...shops.map((s) => h("option", { value: s.id }, s.name)))
  );
  select.value = shop?.id ?? "";
  screen.walk.element.replaceChildren(
    h("label", { for: "at-shop" }, "At shop"),
    select,
    ...(shop === null ? [] : [h("button", { class: "link", onclick: () => screen.run(() => choose(screen, "")) }, `Done at ${shop.name}`)]),
  );
}

/**
 * Begins a trip to the shop `id` (ending the one before), or ends the trip ("").
 * @param {ListScreen} screen
 * @param {string} id
 */
export async function choose(screen, id) {
  const before = walkedShop(screen);
  const me = screen.replica.meta.account?.name ?? null;
  const shared = screen.replica.syncState(screen.list)?.isRegistered === true && Boolean(screen.replica.meta.account?.token);
  if (before !== null) {
    const taught = await finishTrip(screen.replica, screen.list);
    screen.sync.send(screen.list);
    const info = screen.replica.state(screen.list)?.info;
    screen.app.showToast(
      taught === null
        ? `Done at ${before.name}: the trip taught no order (check items off in two aisles or more)`
        : `${taught.name}'s order, ${learnedNote(taught, Date.now())}: ${walkOrder(taught, info?.aisles ?? []).join(", ")}`,
      screen.list);
    if (shared && id === "" && screen.app.shopping.isShopping(screen.list, me)) await screen.app.shopping.stop(screen.list, me).catch(() => 0);
  }
  if (id !== "") {
    const shop = shopsOf(screen.replica, screen.list).find((s) => s.id === id);
    if (!shop) return;
    await startTrip(screen.replica, screen.list, id);
    screen.walk.allShops = false;
    // The others are told where it exists; a phone without a signal walks the shop all the same.
    if (shared) await screen.app.shopping.start(screen.list, shop.name).catch(() => {});
    if (before === null) screen.app.showToast(`Walking ${shop.name}: the order you check items off in teaches it`, screen.list);
  }
  screen.data = null;
  screen.walk.element.dataset.key = "";
  screen.render();
  showWalk(screen);
}

/**
 * The button after the walk's groups: how many items are for other shops, one tap shows them
 * (and hides them again).
 * @param {ListScreen} screen
 * @param {number} hidden
 * @returns {HTMLElement | null}
 */
export function otherShopsButton(screen, hidden) {
  const shop = walkedShop(screen);
  if (shop === null || (hidden === 0 && !screen.walk.allShops)) return null;
  screen.walk.otherShops.textContent = screen.walk.allShops
    ? "Hide the items for other shops"
    : `Show ${hidden} item${hidden === 1 ? "" : "s"} for other shops`;
  return screen.walk.otherShops;
}
