// Members and invites (BasketCLI's `basket members`, `basket invites`, `basket share`): who
// shares the list, their roles, the invites out, a new invite link.
import { ROUTES, Unreachable, request } from "./api.js";
import { h, openDialog, when } from "./ui.js";

/** @typedef {import("./list-screen.js").ListScreen} ListScreen */
/**
 * A member as the server's answer lists it (checked: an account name, a role).
 * @typedef {{ account: string, role: unknown, replicas?: unknown }} Member
 */
/**
 * An invite as the server's answer lists it (checked: an id).
 * @typedef {{ id: string, role: unknown, usesLeft: unknown, expiresAt: unknown }} InviteRow
 */

/**
 * The members sheet while it is open: its screen, the token it asks with, and its body.
 * @typedef {{ screen: ListScreen, token: string | null | undefined, body: HTMLElement }} Sheet
 */

/**
 * Who shares the list, their roles, and the invites out: the owner changes roles, removes a
 * member (and what they added) and withdraws invites.
 * @param {ListScreen} screen
 */
export async function members(screen) {
  const token = screen.replica.meta.account?.token;
  const body = h("div", {}, h("p", {}, "Loading…"));
  /** @type {Sheet} */
  const sheet = { screen, token, body };
  openDialog("members-title", "Members and invites", body);
  try {
    await screen.sync.sync(screen.list);
    const [m, inv] = await Promise.all([
      request(ROUTES.members, [screen.list], { token }),
      screen.role() === "owner" ? request(ROUTES.invites, [screen.list], { token }) : Promise.resolve({ invites: [] }),
    ]);
    const owner = screen.role() === "owner";
    /** @type {Member[]} */
    const people = (Array.isArray(m.members) ? m.members : []).slice(0, 1000).filter((/** @type {any} */ x) => typeof x?.account === "string");
    /** @type {InviteRow[]} */
    const invites = (Array.isArray(inv.invites) ? inv.invites : []).slice(0, 1000).filter((/** @type {any} */ x) => typeof x?.id === "string");
    body.replaceChildren(
      peopleList(sheet, people, owner),
      ...(owner ? [h("h3", {}, "Invites that still work"), invitesList(sheet, invites)] : []),
    );
  } catch (error) {
    const why = error instanceof Unreachable ? "Members need a connection to the server." : error instanceof Error ? error.message : String(error);
    body.replaceChildren(h("p", { class: "error", role: "alert" }, why));
  }
}

/**
 * The members, each with their role (an owner's sheet: a choice, and Remove).
 * @param {Sheet} sheet
 * @param {Member[]} people
 * @param {boolean} owner whether this account owns the list
 */
function peopleList(sheet, people, owner) {
  const me = sheet.screen.replica.meta.account?.name;
  return h("ul", { class: "people", "aria-label": "Members" },
    ...people.map((p) =>
      h("li", {},
        h("span", { class: "who" }, p.account === me ? `${p.account} (you)` : p.account),
        owner && p.account !== me
          ? h("select", { "aria-label": `Role of ${p.account}`, onchange: (/** @type {Event} */ e) => sheet.screen.run(() => changeRole(sheet, p.account, /** @type {HTMLSelectElement} */ (e.target).value)) },
              ...["owner", "editor", "viewer"].map((r) => h("option", { value: r, selected: r === p.role }, r)))
          : h("span", { class: "role" }, String(p.role)),
        owner && p.account !== me ? h("button", { class: "link danger", "aria-label": `Remove ${p.account}`, onclick: () => askRemoval(sheet, p.account) }, "Remove") : null,
      ),
    ),
  );
}

/**
 * The invites that still work, each with Withdraw.
 * @param {Sheet} sheet
 * @param {InviteRow[]} invites
 */
function invitesList(sheet, invites) {
  return h("ul", { class: "people", "aria-label": "Invites" },
    ...(invites.length === 0 ? [h("li", { class: "hint" }, "None.")] : invites.map((i) =>
      h("li", {},
        h("span", { class: "who" }, `${String(i.role)} · ${String(i.usesLeft)} use${i.usesLeft === 1 ? "" : "s"} left · until ${when(Number(i.expiresAt))}`),
        h("button", { class: "link danger", "aria-label": `Withdraw the ${String(i.role)} invite`, onclick: () => sheet.screen.run(() => withdraw(sheet, i.id)) }, "Withdraw"),
      ),
    )));
}

/**
 * @param {Sheet} sheet
 * @param {string} account
 * @param {string} newRole
 */
async function changeRole({ screen, token }, account, newRole) {
  await request(ROUTES.setRole, [screen.list, account], { body: { role: newRole }, token });
  screen.app.showToast(`${account} is now ${newRole === "owner" ? "an owner" : newRole === "editor" ? "an editor" : "a viewer"}`, null);
}

/**
 * Asks before a removal, in the sheet: the member goes, and with the box ticked so do the items
 * they added since a chosen time (`basket members rm NAME --remove-their-items-since TIME`).
 * @param {Sheet} sheet
 * @param {string} account
 */
function askRemoval(sheet, account) {
  const { screen, body } = sheet;
  const title = screen.replica.state(screen.list)?.info.title ?? "this list";
  const alsoItems = h("input", { type: "checkbox", id: "remove-their-items" });
  const since = h("select", { id: "remove-since", disabled: true },
    ...SINCE.map(([value, text]) => h("option", { value, selected: value === "today" }, text)));
  alsoItems.addEventListener("change", () => { since.disabled = !alsoItems.checked; });
  body.replaceChildren(
    h("form", { "aria-label": `Remove ${account}`, onsubmit: (/** @type {Event} */ event) => {
        event.preventDefault();
        screen.run(() => removeMember(sheet, account, alsoItems.checked ? sinceTime(since.value, Date.now()) : null));
      } },
      h("p", {}, `Remove ${account} from “${title}”? Their copy stays with them, read-only; the invite codes they joined with stop working.`),
      h("p", { class: "check" }, alsoItems, h("label", { for: "remove-their-items" }, "Also remove the items they added")),
      h("label", { for: "remove-since" }, "Added since"), since,
      h("div", { class: "actions" },
        h("button", { type: "submit", class: "primary danger" }, `Remove ${account}`),
        h("button", { type: "button", onclick: () => { dialogOf(body)?.close(); screen.run(() => members(screen)); } }, "Cancel")),
    ),
  );
}

/**
 * @param {Sheet} sheet
 * @param {string} account
 * @param {number | null} since with a time, the items they added since then go too (one undo step)
 */
async function removeMember({ screen, token, body }, account, since) {
  const encrypted = screen.replica.isEncrypted(screen.list);
  if (since === null) {
    await request(ROUTES.removeMember, [screen.list, account], { token });
    // An encrypted list takes no write until it has a new key, which this device makes now and
    // leaves to the other members: what is written from now on, the removed member cannot read.
    const renewed = encrypted && (await screen.sync.renewKeys(screen.list));
    screen.app.showToast(`Removed ${account} from the list` + (renewed ? "; the list has a new key" : ""), null);
  } else {
    // Their latest writes first, and their devices' ids (each write carries one).
    await screen.sync.sync(screen.list);
    const answer = await request(ROUTES.members, [screen.list], { token });
    const member = (Array.isArray(answer.members) ? answer.members : []).find((/** @type {any} */ m) => m?.account === account);
    if (member === undefined) throw new Error(`${account} is not a member of this list`);
    const replicas = (Array.isArray(member.replicas) ? member.replicas : [])
      .slice(0, 100).filter((/** @type {unknown} */ r) => typeof r === "string" && /^[0-9a-f]{16}$/.test(r));
    await request(ROUTES.removeMember, [screen.list, account], { token });
    if (encrypted) await screen.sync.renewKeys(screen.list);
    const n = await screen.replica.removeAddedBy(screen.list, replicas, since);
    screen.sync.send(screen.list);
    screen.app.showToast(`Removed ${account} and the ${n} item${n === 1 ? "" : "s"} they added since ${when(since)}`, n > 0 ? screen.list : null);
  }
  dialogOf(body)?.close();
  await members(screen);
}

/**
 * @param {Sheet} sheet
 * @param {string} invite its id
 */
async function withdraw({ screen, token, body }, invite) {
  await request(ROUTES.revokeInvite, [screen.list, invite], { token });
  screen.app.showToast("Withdrew the invite", null);
  dialogOf(body)?.close();
  await members(screen);
}

/**
 * The sheet's dialog, when it is still open.
 * @param {HTMLElement} body
 */
function dialogOf(body) {
  return /** @type {HTMLDialogElement | null} */ (body.closest("dialog[open]"));
}

/** How far back "Added since" reaches: a value and what the person reads. */
const SINCE = [["hour", "the last hour"], ["today", "today (since midnight)"], ["2days", "the last 2 days"], ["week", "the last week"]];

/**
 * The Unix milliseconds an "Added since" choice means at `now`.
 * @param {string} choice
 * @param {number} now
 */
export function sinceTime(choice, now) {
  const hour = 60 * 60 * 1000;
  if (choice === "hour") return now - hour;
  if (choice === "2days") return now - 48 * hour;
  if (choice === "week") return now - 7 * 24 * hour;
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  return midnight.getTime();
}

/**
 * A link the family can use: how many people, as what, for how long; Copy and Share.
 * @param {ListScreen} screen
 */
export async function share(screen) {
  const roleSelect = h("select", { id: "share-role" },
    h("option", { value: "editor", selected: true }, "Can change the list (editor)"),
    h("option", { value: "viewer" }, "Can only view it (viewer)"),
    h("option", { value: "owner" }, "Owner (can manage members)"));
  const usesSelect = h("select", { id: "share-uses" },
    ...[[1, "1 person"], [5, "5 people"], [10, "10 people"], [25, "25 people"]].map(([n, t]) => h("option", { value: n, selected: n === 5 }, t)));
  const expirySelect = h("select", { id: "share-expiry" },
    ...[[86400, "1 day"], [604800, "7 days"], [2592000, "30 days"]].map(([n, t]) => h("option", { value: n, selected: n === 604800 }, t)));
  const result = h("div", { class: "share-result" });
  const form = h(
    "form",
    { onsubmit: (/** @type {SubmitEvent} */ event) => { event.preventDefault(); screen.run(makeLink); } },
    h("label", { for: "share-role" }, "They"), roleSelect,
    h("label", { for: "share-uses" }, "Works for"), usesSelect,
    h("label", { for: "share-expiry" }, "For"), expirySelect,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Make a link")),
  );
  openDialog("share-title", "Share this list", form, result);
  async function makeLink() {
    result.replaceChildren(h("p", {}, "Making a link…"));
    try {
      await screen.sync.sync(screen.list);
      // An encrypted list's link carries its newest key: taken first (or made, when a member left).
      if (screen.replica.isEncrypted(screen.list)) await screen.sync.renewKeys(screen.list);
      const title = screen.replica.state(screen.list)?.info.title;
      // An encrypted list's title goes sealed, and its keys after the link's "#" and the code's
      // dot: never in a request.
      const keys = screen.replica.keyring.sealing(screen.list);
      const sentTitle = title && keys ? await keys.sealedInviteTitle(title) : title;
      const invitation = { role: roleSelect.value, uses: Number(usesSelect.value), expiresIn: Number(expirySelect.value), ...(sentTitle ? { title: sentTitle } : {}) };
      const invite = await request(ROUTES.invite, [screen.list], { body: invitation, token: screen.replica.meta.account?.token });
      if (typeof invite.code !== "string") throw new Error("the server's answer has no code");
      const code = keys ? `${invite.code}.${keys.inviteSecret}` : invite.code;
      const link = `${location.origin}/#join=${code}`;
      const people = Number(invite.usesLeft) === 1 ? "one person" : `${invite.usesLeft} people`;
      result.replaceChildren(
        h("p", {}, `Anyone with this link or code can join as ${invite.role === "editor" ? "an editor" : invite.role === "owner" ? "an owner" : "a viewer"}: ${people}, until ${when(Number(invite.expiresAt))}.`),
        h("input", { class: "link-text", readonly: true, value: link, "aria-label": "Invite link", onfocus: (/** @type {FocusEvent} */ e) => /** @type {HTMLInputElement} */ (e.target).select() }),
        h("p", { class: "code", id: "invite-code", "aria-label": "Invite code" }, code),
        h("div", { class: "actions" },
          h("button", { type: "button", class: "primary", onclick: () => screen.run(async () => {
            await navigator.clipboard.writeText(link);
            screen.app.showToast("Copied the link", null);
          }) }, "Copy the link"),
          typeof navigator.share === "function"
            ? h("button", { type: "button", onclick: () => screen.run(() => navigator.share({ title: `Join ${title ?? "my list"} on Basket`, url: link }).catch(() => {})) }, "Share…")
            : null,
        ),
      );
    } catch (error) {
      const why = error instanceof Unreachable ? "Sharing needs a connection to the server." : error instanceof Error ? error.message : String(error);
      result.replaceChildren(h("p", { class: "error", role: "alert" }, why));
    }
  }
}
