// Changes the server will not take (a viewer's, a former member's), as the list screen shows
// them: what they were, dropping them, copying them to another list. The web twin of what
// `basket status` lists and `basket sync --discard-refused` does (SyncCommands.swift).
import { h, openDialog } from "./ui.js";
import { changes } from "./phrases.js";
import { confirmDialog } from "./list-settings.js";
import { LIST_ITEM } from "./ids.js";
import { SETTABLE_ITEM_FIELDS } from "./field.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */

/** Lines `describe` writes at most; the rest are counted. */
const MOST_LINES = 50;

/**
 * Writes as a person reads them: one line per item ("Milk: checked, quantity '2'"), at most 50
 * (SyncCommands.describe in Swift).
 * @param {{ item: string, field: string, value: any }[]} ops
 * @param {import("./state.js").ListState | undefined} state
 * @returns {string[]}
 */
export function describe(ops, state) {
  /** @type {Map<string, Record<string, any>>} */
  const last = new Map();
  for (const op of ops) last.set(op.item, { ...(last.get(op.item) ?? {}), [op.field]: op.value });
  const lines = [...last].slice(0, MOST_LINES).map(([item, fields]) => {
    if (item === LIST_ITEM) return `the list's title: ${fields.title ?? ""}`;
    const name = typeof fields.name === "string" ? fields.name : state?.item(item)?.name ?? "an item";
    const parts = [];
    if (fields.deleted === true) parts.push("removed");
    else if (fields.deleted === false) parts.push(fields.name !== undefined ? "added" : "brought back");
    if (typeof fields.checked === "boolean" && !(fields.checked === false && fields.deleted === false)) {
      parts.push(fields.checked ? "checked" : "unchecked");
    }
    for (const field of SETTABLE_ITEM_FIELDS) {
      if (!(field in fields)) continue;
      parts.push(typeof fields[field] === "string" ? `${field} '${fields[field]}'` : `${field} cleared`);
    }
    if (parts.length === 0) parts.push("renamed");
    return `${name}: ${parts.join(", ")}`;
  });
  if (last.size > MOST_LINES) lines.push(`… and ${last.size - MOST_LINES} more items`);
  return lines;
}

/**
 * What the notice of a list the server will not take changes for says about those waiting, and
 * its buttons: discard them (asked first, showing what they were) and, for a list no longer
 * shared, copy them to another list. Nothing when none wait.
 * @param {ListScreen} screen
 * @param {boolean} gone whether the list is no longer shared with this account
 * @returns {{ text: string, buttons: HTMLElement[] }}
 */
export function refusedNotice(screen, gone) {
  const ops = [...(screen.replica.outbox.get(screen.list)?.values() ?? [])];
  if (ops.length === 0) return { text: "", buttons: [] };
  const lines = describe(ops, screen.replica.state(screen.list));
  const count = screen.replica.pendingChanges(screen.list);
  const text = `${changes(count)} not sent: ${lines.join("; ")}. `;
  const discard = h("button", { class: "link danger", onclick: () => screen.run(() => discardRefused(screen, lines, count)) }, "Discard");
  const copy = gone ? h("button", { class: "link", onclick: () => copyElsewhere(screen) }, "Copy to another list") : null;
  return { text, buttons: copy === null ? [discard] : [copy, discard] };
}

/**
 * Drops the refused changes once the person says so, having seen what they were.
 * @param {ListScreen} screen
 * @param {string[]} lines
 * @param {number} count
 */
async function discardRefused(screen, lines, count) {
  const sure = await confirmDialog(
    `Discard ${changes(count)}?`,
    `${lines.join("; ")}. The list goes back to what the server has; this cannot be undone.`, "Discard");
  if (!sure) return;
  await screen.replica.discardPending(screen.list);
  screen.app.showToast(`Discarded ${changes(count)}`, null);
}

/**
 * Copies the items the refused changes touched, as they are here, to another list this account
 * can change: what was added on a list that went away is not lost with it.
 * @param {ListScreen} screen
 */
function copyElsewhere(screen) {
  const state = screen.replica.state(screen.list);
  const touched = new Set([...(screen.replica.outbox.get(screen.list)?.values() ?? [])].map((op) => op.item));
  const items = [...touched].flatMap((id) => {
    const item = state?.item(id);
    return item === undefined || item.deleted ? [] : [item];
  });
  const targets = screen.replica.lists().filter((l) => l.id !== screen.list && !l.sync.noLongerMember && l.role !== "viewer" && !l.archived);
  const body = items.length === 0
    ? [h("p", {}, "Nothing to copy: the changes waiting removed items.")]
    : targets.length === 0
      ? [h("p", {}, "No other list to copy to: make one on the lists screen first.")]
      : [
        h("p", {}, `${items.map((i) => i.name).join(", ")} to:`),
        h("div", { class: "actions" }, ...targets.map((target) => h("button", {
          class: "primary",
          onclick: () => screen.run(async () => {
            await screen.replica.add(target.id, items.map((i) => ({ name: i.name, quantity: i.quantity, category: i.category })));
            screen.sync.send(target.id);
            dialog.close();
            screen.app.showToast(`Copied ${items.length === 1 ? "1 item" : `${items.length} items`} to ${target.title}`, null);
          }),
        }, `Copy to ${target.title}`))),
      ];
  const dialog = openDialog("copy-title", "Copy to another list", ...body);
}
