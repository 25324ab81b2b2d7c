// The lists screen (BasketCLI's `basket lists`): every list on this device with what it has to
// buy, a new list, joining one by its invite code. `app` is what app.js shares.
import { accountSheet, signOut } from "./account-sheet.js";
import { ROUTES, Unreachable, request } from "./api.js";
import { isID128 } from "./ids.js";
import { ListKeys } from "./seal.js";
import { h } from "./ui.js";
import { hasShared } from "./paste-sheet.js";

/** @typedef {import("./app.js").App} App */
/**
 * @param {App} app
 */
export function showLists(app) {
  const rows = h("ul", { class: "lists", "aria-label": "Your lists" });
  const code = h("input", { id: "join-code", placeholder: "XXXX-XXXX-XXXX-XXXX", autocomplete: "off", autocapitalize: "off", enterkeyhint: "go" });
  function update() {
    const lists = app.replica.lists();
    rows.replaceChildren(
      ...lists.map((list) =>
        h(
          "li",
          {},
          h(
            "a",
            { href: `#/list/${list.id}`, class: "list-row" },
            h(
              "span",
              { class: "title" },
              list.title,
              list.sync.noLongerMember ? h("span", { class: "hint" }, " · no longer shared") : null,
              app.replica.isEncrypted(list.id) ? h("span", { class: "hint" }, " · encrypted") : null,
              app.sync.failures.has(list.id) ? h("span", { class: "hint" }, " · not synced") : null,
            ),
            h("span", { class: "count" }, list.total === 0 ? "empty" : `${list.toBuy} to buy`),
          ),
        ),
      ),
    );
    if (lists.length === 0) rows.append(h("li", { class: "hint" }, "No lists yet: make one below, or join one with a code."));
    app.updateStatus();
  }
  const account = app.replica.meta.account?.name ?? "";
  const heading = h("h1", {}, "Your lists");
  app.mount(
    { name: "lists", update, focus: heading },
    h(
      "header",
      { class: "bar" },
      heading,
      h("button", { class: "link account", "aria-label": `Account ${account}`, onclick: () => app.run(() => accountSheet(app)) }, account || "Account"),
      h("button", { class: "link", onclick: () => app.run(() => signOut(app)) }, "Sign out"),
    ),
    rows,
    newListForm(app),
    h(
      "form",
      {
        class: "inline",
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          app.run(() => joinList(app, code.value));
        },
      },
      h("label", { for: "join-code" }, "Join a list with an invite code"),
      h("div", { class: "row" }, code, h("button", { type: "submit" }, "Join")),
    ),
    app.statusLine(),
  );
  update();
  if (hasShared() && toListShared(app, rows)) return;
  const pendingJoin = sessionStorage.getItem("basket-join");
  if (pendingJoin) {
    sessionStorage.removeItem("basket-join");
    app.run(() => askToJoin(app, pendingJoin));
  }
}

/**
 * The form that makes a list: its title, and whether it is encrypted end to end.
 * @param {App} app
 */
function newListForm(app) {
  const title = h("input", { id: "new-list", placeholder: "New list, e.g. Groceries", autocomplete: "off", enterkeyhint: "done" });
  // Encrypted by default, as the terminal's `basket list new`; unticked for a list the server may read.
  const encrypt = h("input", { type: "checkbox", id: "new-list-encrypted", checked: true });
  return h(
    "form",
    {
      class: "inline",
      onsubmit: (/** @type {SubmitEvent} */ event) => {
        event.preventDefault();
        app.run(async () => {
          const id = await app.replica.createList(title.value, app.language, encrypt.checked);
          title.value = "";
          app.sync.send(id);
          app.go(`#/list/${id}`);
        });
      },
    },
    h("label", { for: "new-list" }, "New list"),
    h("div", { class: "row" }, title, h("button", { type: "submit" }, "Create")),
    h("p", { class: "check" }, encrypt, h("label", { for: "new-list-encrypted" }, "Encrypted end to end (the server reads none of it)")),
  );
}

/**
 * Text shared from another app goes to the list it is meant for: the only one (then true: the
 * screen is left), or the one the person opens, which a notice above `rows` asks for.
 * @param {App} app
 * @param {Element} rows
 */
function toListShared(app, rows) {
  const lists = app.replica.lists().filter((l) => !l.archived);
  if (lists.length === 1) {
    app.go(`#/list/${lists[0].id}`);
    return true;
  }
  rows.before(h("p", { class: "notice", role: "status" }, lists.length === 0 ? "Make a list to add what was shared to." : "Open the list to add what was shared to."));
  return false;
}

/**
 * A `#join=` link asks before it joins: who invited to which list, as what (the server's
 * preview of the code), then Join or Not now. A link is something anyone can send; joining is
 * the person's own decision. An encrypted list's title comes sealed and opens with the keys
 * after the code's dot.
 * @param {App} app
 * @param {string} given the code as the link or the person gave it
 */
async function askToJoin(app, given) {
  const { code, secret } = splitCode(given);
  let preview;
  try {
    preview = await request(ROUTES.previewInvite, [], { body: { code }, token: app.replica.meta.account?.token });
  } catch (error) {
    if (error instanceof Unreachable) throw new Error("Joining a list needs the server: open the link again when you are online.");
    throw error;
  }
  if (!isID128(preview?.list)) throw new Error("the server's answer has no list");
  if (preview.member === true && app.replica.state(preview.list)) return app.go(`#/list/${preview.list}`);
  if (preview.encrypted === true && secret === null) throw new Error(MISSING_KEYS);
  // An encrypted list's title comes sealed: the link's keys open it here.
  let title = typeof preview.title === "string" && preview.title ? preview.title : null;
  if (preview.encrypted === true && title !== null && secret !== null) {
    title = await (await ListKeys.fromInviteSecret(preview.list, secret)).openInviteTitle(title);
  }
  title = title?.slice(0, 100) ?? null;
  const who = typeof preview.createdBy === "string" && preview.createdBy ? preview.createdBy.slice(0, 64) : "Someone";
  const role = ["owner", "editor", "viewer"].includes(preview.role) ? preview.role : "member";
  const article = role === "viewer" || role === "member" ? "a" : "an";
  const dialog = h(
    "dialog",
    { class: "card", "aria-labelledby": "join-title", "aria-describedby": "join-question" },
    h("h2", { id: "join-title" }, "Join this list?"),
    // The title is the inviter's words (any text a list title may be): quoted as a name, so it
    // cannot pass for the page's own sentence ("Family. Your account is locked: …").
    h("p", { id: "join-question" }, `${who} invited you to ${title === null ? "a list" : `the list “${title}”`} as ${article} ${role}.`),
    h(
      "form",
      {
        method: "dialog",
        class: "actions",
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          if (event.submitter instanceof HTMLButtonElement && event.submitter.value === "join") app.run(() => joinList(app, given));
        },
      },
      h("button", { value: "join", class: "primary" }, "Join"),
      h("button", { value: "cancel" }, "Not now"),
    ),
  );
  document.body.append(dialog);
  dialog.addEventListener("close", () => dialog.remove());
  dialog.showModal();
}

const MISSING_KEYS = "This list is encrypted end to end, and the code lacks its keys (the part after the dot): ask for the whole link or code.";

/**
 * An invite code as given, and the keys after its dot (an encrypted list's), or null.
 * @param {string} given
 * @returns {{ code: string, secret: string | null }}
 */
function splitCode(given) {
  const text = given.trim();
  const dot = text.indexOf(".");
  return dot < 0 ? { code: text.toUpperCase(), secret: null } : { code: text.slice(0, dot).toUpperCase(), secret: text.slice(dot + 1) };
}

/**
 * Joins with a code (and, for an encrypted list, keeps the keys after its dot first).
 * @param {App} app
 * @param {string} given
 */
async function joinList(app, given) {
  const { code, secret } = splitCode(given);
  const token = app.replica.meta.account?.token;
  // A code that is not a list's keys after the dot, or an encrypted list's without them, is
  // refused before the invite is spent.
  if (secret !== null) await ListKeys.fromInviteSecret("00000000000000000000000000000000", secret);
  else if ((await request(ROUTES.previewInvite, [], { body: { code }, token })).encrypted === true) throw new Error(MISSING_KEYS);
  const answer = await request(ROUTES.join, [], { body: { code }, token });
  if (!isID128(answer.id)) throw new Error("the server's answer has no list");
  if (answer.encrypted === true && secret !== null) await app.replica.saveKeys(secret, answer.id);
  // Joined again after a removal: every mark of the old membership goes (read-only, the refusal
  // of its changes, the stopped watch), and what waited from then is sent now.
  await app.replica.saveSyncState(answer.id, { isRegistered: true, role: answer.role, epoch: answer.epoch ?? null, noLongerMember: false });
  app.sync.rejoined(answer.id);
  await app.sync.sync(answer.id);
  app.go(`#/list/${answer.id}`);
}
