// @ts-check
/**
 * The add-only inbox on the phone (InboxCommands.swift's twin): a key for a speaker, a shortcut
 * or a home automation, made from the list's sheet and shown once with a ready `curl` line; and
 * filing what such keys put in the list's inbox, when the list is open: each text taken once
 * from the server (another device that asks too gets nothing) and added with the parser the
 * search field uses, each item's note saying who sent it ("added by Kitchen speaker").
 */
import { ApiError, ERRORS, ROUTES, request } from "./api.js";
import { entriesFor } from "./list-entries.js";
import { addPhrases } from "./phrases.js";
import { field, h, openDialog } from "./ui.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */

/** Lists being filed now, and those asked again meanwhile (filed once more when it ends). */
const filing = new Set();
const again = new Set();

/**
 * Files the list's inbox, when this account may change the list.
 * @param {ListScreen} screen
 */
export async function fileInbox(screen) {
  const token = screen.replica.meta.account?.token;
  if (!token || screen.readOnly() || screen.replica.syncState(screen.list)?.isRegistered !== true) return;
  if (filing.has(screen.list)) {
    again.add(screen.list);
    return;
  }
  filing.add(screen.list);
  try {
    const answer = await request(ROUTES.inbox, [screen.list], { token });
    const waiting = Array.isArray(answer?.entries) ? answer.entries.slice(0, 100) : [];
    for (const entry of waiting) {
      if (typeof entry?.id !== "string") continue;
      let taken;
      try {
        taken = await request(ROUTES.takeFromInbox, [screen.list, entry.id], { token });
      } catch (error) {
        if (error instanceof ApiError && error.is(ERRORS.notFound)) continue; // another device filed it
        throw error;
      }
      if (typeof taken?.text !== "string" || typeof taken?.from !== "string") continue;
      const from = taken.from.slice(0, 64);
      const credit = `added by ${from}`;
      const entries = (entriesFor(screen, taken.text.slice(0, 1024)) ?? []).map((e) => ({ ...e, note: e.note ? `${e.note}; ${credit}` : credit }));
      if (entries.length === 0) continue;
      const results = await screen.replica.add(screen.list, entries);
      screen.sync.send(screen.list);
      screen.app.showToast(`From ${from}: ${addPhrases(results).join("; ")}`, screen.list);
    }
  } finally {
    filing.delete(screen.list);
  }
  // A text that came while this filing read the inbox: filed now.
  if (again.delete(screen.list)) await fileInbox(screen);
}

/**
 * "A key for a speaker": named, made, shown once with what to send.
 * @param {ListScreen} screen
 */
export function makeAddOnlyKey(screen) {
  const [label, name] = field("key-name", "What is it for?", { maxlength: 64, placeholder: "Kitchen speaker", required: true });
  const result = h("div", { class: "share-result" });
  const dialog = openDialog(
    "key-title",
    "A key that can only add",
    h("p", { class: "hint" }, "For a speaker, a shortcut or a home automation: it can add to this list and do nothing else."),
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          screen.run(async () => {
            const made = await request(ROUTES.makeAddKey, [screen.list], { token: screen.replica.meta.account?.token, body: { name: name.value } });
            if (typeof made?.key !== "string") throw new Error("the server's answer has no key");
            const curl = `curl -X POST -H 'Authorization: Bearer ${made.key}' -H 'Content-Type: application/json' -d '{"text": "2 milk, bread"}' ${location.origin}/v1/lists/${screen.list}/inbox`;
            result.replaceChildren(
              h("p", {}, "Shown once: keep it where the speaker or shortcut keeps its settings. Members and invites lists it, and can revoke it."),
              h("p", { class: "code", id: "add-key", "aria-label": "Add-only key" }, made.key),
              h("input", { class: "link-text", readonly: true, value: curl, "aria-label": "Add with it" }),
            );
          });
        },
      },
      label,
      name,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Make the key")),
    ),
    result,
  );
  name.focus();
  return dialog;
}
