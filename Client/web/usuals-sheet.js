// @ts-check
/**
 * The Usuals view: what the household buys again and again (bought on three trips or more), how
 * often and when each is due, due ones first, each added with one tap or dismissed ("not
 * anymore"). The CLI's twin is `basket usuals` and `basket add --due` (ShopCommands.swift).
 */
import { h, openDialog } from "./ui.js";
import { dismissUsuals, isDue, isOnList, usualsOf } from "./replica-shops.js";
import { every } from "./phrases.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/** @typedef {import("./replica-shops.js").Usual} Usual */

const DAY = 86400000;

/**
 * A moment as a day near `now`: "today", "yesterday", "tomorrow", "Tuesday" (this week), "Nov 12"
 * (ShopCommands.day).
 * @param {number} ms
 * @param {number} now
 */
export function dayName(ms, now) {
  const start = (/** @type {number} */ t) => { const d = new Date(t); d.setHours(0, 0, 0, 0); return d.getTime(); };
  const days = Math.round((start(ms) - start(now)) / DAY);
  if (days === 0) return "today";
  if (days === -1) return "yesterday";
  if (days === 1) return "tomorrow";
  if (Math.abs(days) <= 6) return new Date(ms).toLocaleDateString("en-US", { weekday: "long" });
  return new Date(ms).toLocaleDateString("en-US", { month: "short", day: "numeric" });
}

/**
 * "learned from 3 trips, last Saturday" (ShopCommands.learnedNote); "" before the first trip.
 * @param {import("./state.js").Shop} shop
 * @param {number} now
 */
export function learnedNote(shop, now) {
  const learned = shop.learned;
  if (learned === null || learned.trips === 0) return "not learned yet";
  return `learned from ${learned.trips} trip${learned.trips === 1 ? "" : "s"}, last ${dayName(learned.last, now)}`;
}

/**
 * "milk — every week, due since Tuesday" (ShopCommands.describe).
 * @param {Usual} usual
 * @param {number} now
 */
export function describeUsual(usual, now) {
  const due = usual.pattern.due;
  const when = isDue(usual, now) ? (dayName(due, now) === "today" ? "due today" : `due since ${dayName(due, now)}`) : `due ${dayName(due, now)}`;
  return `${usual.item.name} — ${every(usual.pattern.interval)}, ${when}` + (isOnList(usual) ? " (on the list)" : "");
}

/**
 * The due usuals not on the list to buy: what leads the offers while typing (Offers.due).
 * @param {ListScreen} screen
 */
export function dueUsuals(screen) {
  const now = screen.replica.wall();
  return usualsOf(screen.replica, screen.list).filter((u) => isDue(u, now) && !isOnList(u)).map((u) => u.item);
}

/**
 * Opens the Usuals view.
 * @param {ListScreen} screen
 */
export function showUsuals(screen) {
  const body = h("ul", { class: "rows usuals", "aria-label": "Usuals" });
  const draw = () => {
    const now = screen.replica.wall();
    const usuals = usualsOf(screen.replica, screen.list);
    body.replaceChildren(
      ...usuals.map((u) =>
        h("li", { class: isDue(u, now) ? "usual due" : "usual" },
          h("span", {}, describeUsual(u, now)),
          isOnList(u) || screen.readOnly()
            ? null
            : h("button", { "aria-label": `Add ${u.item.name}`, onclick: () => screen.run(async () => {
                await screen.addEntries([{ name: u.item.name, quantity: null }]);
                draw();
              }) }, "Add"),
          screen.readOnly()
            ? null
            : h("button", { class: "link", "aria-label": `${u.item.name}: not anymore`, onclick: () => screen.run(async () => {
                await dismissUsuals(screen.replica, screen.list, [u.item.id]);
                screen.sync.send(screen.list);
                screen.app.showToast(`${u.item.name}: no usual anymore`, screen.list);
                draw();
              }) }, "Not anymore"),
        ),
      ),
    );
    if (usuals.length === 0) body.replaceChildren(h("li", { class: "hint" }, "No usuals yet: an item checked off on three trips becomes one."));
  };
  draw();
  openDialog("usuals-title", "Usuals", h("p", { class: "hint" }, "What you buy again and again, due ones first."), body);
}
