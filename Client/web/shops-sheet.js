// @ts-check
/**
 * The list's shops (List ⋯ → Shops): add, rename or remove one, set its aisle order by hand,
 * pin aisles (owners), and see what its trips taught. The CLI's twin is `basket shops` and
 * `basket aisles --shop` (ShopCommands.swift).
 */
import { field, h, openDialog } from "./ui.js";
import { addShop, removeShop, renameShop, setPinned, setShopOrder, shopsOf, walkOrder } from "./replica-shops.js";
import { learnedNote } from "./usuals-sheet.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/** @typedef {import("./state.js").Shop} Shop */

/**
 * Names separated by commas, trimmed, the empty ones left out.
 * @param {string} text
 */
function names(text) {
  return text.split(",").map((n) => n.trim()).filter((n) => n !== "");
}

/**
 * One shop's part of the sheet: its name, order, pins and the buttons that change them.
 * @param {ListScreen} screen
 * @param {Shop} shop
 * @param {() => void} redraw
 */
function shopPart(screen, shop, redraw) {
  const info = screen.replica.state(screen.list)?.info;
  const owner = screen.role() === "owner" || screen.role() == null;
  const slug = shop.id.slice(0, 8);
  const [nameLabel, name] = field(`shop-name-${slug}`, `Name of ${shop.name}`, { value: shop.name, maxlength: 100 });
  const [orderLabel, order] = field(`shop-order-${slug}`, `Aisle order at ${shop.name}`, { value: walkOrder(shop, info?.aisles ?? []).join(", "), placeholder: "Produce, Dairy & eggs, Bakery" });
  const [pinLabel, pins] = field(`shop-pins-${slug}`, `Pinned aisles at ${shop.name}`, { value: shop.pinned.join(", "), disabled: !owner });
  const done = async (/** @type {string} */ said) => {
    screen.sync.send(screen.list);
    screen.app.showToast(said, screen.list);
    screen.data = null;
    screen.render();
    redraw();
  };
  return h("section", { class: "shop", "aria-label": shop.name },
    h("h3", {}, shop.name),
    h("p", { class: "hint" }, `Walked in this order, ${learnedNote(shop, Date.now())}. A pinned aisle keeps its place whatever the trips say; setting the order by hand starts the learning anew.`),
    nameLabel, name,
    h("button", { type: "button", onclick: () => screen.run(async () => { await renameShop(screen.replica, screen.list, shop.id, name.value); await done(`Renamed the shop to ${name.value.trim()}`); }) }, "Rename"),
    orderLabel, order,
    h("button", { type: "button", onclick: () => screen.run(async () => { await setShopOrder(screen.replica, screen.list, shop.id, names(order.value)); await done(`Saved the order of ${shop.name}`); }) }, "Save the order"),
    pinLabel, pins,
    owner ? h("button", { type: "button", onclick: () => screen.run(async () => { await setPinned(screen.replica, screen.list, shop.id, names(pins.value)); await done(`Saved the pinned aisles of ${shop.name}`); }) }, "Save the pins") : null,
    h("button", { type: "button", class: "danger", onclick: () => screen.run(async () => { await removeShop(screen.replica, screen.list, shop.id); await done(`Removed the shop ${shop.name}`); }) }, `Remove ${shop.name}`),
  );
}

/**
 * Opens the list's shops.
 * @param {ListScreen} screen
 */
export function editShops(screen) {
  const parts = h("div", { class: "shops" });
  const [newLabel, newName] = field("new-shop", "New shop", { maxlength: 100, placeholder: "Lidl" });
  const error = h("p", { class: "error", role: "alert" });
  const redraw = () => {
    const shops = shopsOf(screen.replica, screen.list);
    parts.replaceChildren(...shops.map((s) => shopPart(screen, s, redraw)));
    if (shops.length === 0) parts.replaceChildren(h("p", { class: "hint" }, "No shops yet. Each shop you add is walked in its own aisle order."));
  };
  redraw();
  const form = h("form", {
    onsubmit: (/** @type {SubmitEvent} */ event) => {
      event.preventDefault();
      screen.run(async () => {
        error.textContent = "";
        try {
          await addShop(screen.replica, screen.list, newName.value);
        } catch (e) {
          error.textContent = e instanceof Error ? e.message : String(e);
          return;
        }
        screen.sync.send(screen.list);
        screen.app.showToast(`Added the shop ${newName.value.trim()}`, screen.list);
        newName.value = "";
        redraw();
        screen.render();
      });
    },
  }, newLabel, newName, error, h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Add the shop")));
  openDialog("shops-title", "Shops", form, parts);
  newName.focus();
}
