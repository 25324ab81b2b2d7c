// @ts-check
/**
 * Together in the shop, on the list's screen: who is shopping (and who just finished, with what
 * they bought) under the list's title, and the button that says "I'm going shopping" or "Done
 * shopping". The CLI's twin is `basket shopping` (ShoppingCommands.swift).
 */
import { field, h, openDialog, when } from "./ui.js";
import { items } from "./push-text.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */

/**
 * Draws the list's "together" line and button into `screen.together`, when they changed.
 * @param {ListScreen} screen
 */
export function showTogether(screen) {
  const me = screen.replica.meta.account?.name ?? null;
  const shared = screen.replica.syncState(screen.list)?.isRegistered === true && Boolean(screen.replica.meta.account?.token);
  const lines = screen.app.shopping.lines(screen.list, me, when);
  const shopping = screen.app.shopping.isShopping(screen.list, me);
  const can = shared && !screen.readOnly();
  const key = [lines.join("\n"), shopping, can].join("\u0000");
  if (screen.together.dataset.key === key) return;
  screen.together.dataset.key = key;
  const button = !can
    ? null
    : shopping
      ? h("button", { class: "link", onclick: () => screen.run(() => doneShopping(screen)) }, "Done shopping")
      : h("button", { class: "link", onclick: () => screen.run(() => goShopping(screen)) }, "I'm going shopping");
  screen.together.replaceChildren(...lines.map((line) => h("p", { class: "hint" }, line)), ...(button ? [button] : []));
  screen.together.hidden = lines.length === 0 && button === null;
}

/**
 * Asks the server who is shopping for the list, when it is shared (the list was opened).
 * @param {ListScreen} screen
 */
export function hearTogether(screen) {
  if (screen.replica.syncState(screen.list)?.isRegistered !== true || !screen.replica.meta.account?.token) return;
  screen.app.shopping.refresh(screen.list).catch(() => {});
}

/**
 * "I'm going shopping": a shop's name if the person gives one, and the others are told.
 * @param {ListScreen} screen
 */
export function goShopping(screen) {
  const [label, shop] = field("shop", "Shop (if you like)", { maxlength: 100, placeholder: "Lidl" });
  const dialog = openDialog(
    "shopping-title",
    "Going shopping",
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          screen.run(async () => {
            await screen.app.shopping.start(screen.list, shop.value);
            dialog.close();
            screen.app.showToast("The others see you're shopping", screen.list);
          });
        },
      },
      h("p", { class: "hint" }, "The others see it on their list until you are done (at most 3 hours)."),
      label,
      shop,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Tell the others")),
    ),
  );
  shop.focus();
}

/**
 * "Done shopping": the others are told what this phone checked off meanwhile.
 * @param {ListScreen} screen
 */
async function doneShopping(screen) {
  const bought = await screen.app.shopping.stop(screen.list, screen.replica.meta.account?.name ?? null);
  screen.app.showToast(`Done shopping: you bought ${items(bought)}`, screen.list);
}
