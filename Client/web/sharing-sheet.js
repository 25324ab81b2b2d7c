// Members and invites (BasketCLI's `basket members`, `basket invites`, `basket share`): who
// shares the list, their roles, the invites out, a new invite link.
import { Unreachable, request } from "./api.js";
import { h, openDialog, when } from "./ui.js";
export async function members(screen) {
  const token = screen.replica.meta.account?.token;
  const body = h("div", {}, h("p", {}, "Loading…"));
  openDialog("members-title", "Members and invites", body);
  try {
    await screen.sync.syncList(screen.list);
    const [m, inv] = await Promise.all([
      request("GET", `/v1/lists/${screen.list}/members`, { token }),
      screen.role() === "owner" ? request("GET", `/v1/lists/${screen.list}/invites`, { token }) : Promise.resolve({ invites: [] }),
    ]);
    const me = screen.replica.meta.account?.name;
    const owner = screen.role() === "owner";
    const people = (Array.isArray(m.members) ? m.members : []).slice(0, 1000).filter((x) => typeof x?.account === "string");
    const invites = (Array.isArray(inv.invites) ? inv.invites : []).slice(0, 1000).filter((x) => typeof x?.id === "string");
    body.replaceChildren(
      h("ul", { class: "people", "aria-label": "Members" },
        ...people.map((p) =>
          h("li", {},
            h("span", { class: "who" }, p.account === me ? `${p.account} (you)` : p.account),
            owner && p.account !== me
              ? h("select", { "aria-label": `Role of ${p.account}`, onchange: (e) => screen.run(() => changeRole(p.account, e.target.value)) },
                  ...["owner", "editor", "viewer"].map((r) => h("option", { value: r, selected: r === p.role }, r)))
              : h("span", { class: "role" }, String(p.role)),
            owner && p.account !== me ? h("button", { class: "link danger", "aria-label": `Remove ${p.account}`, onclick: () => screen.run(() => removeMember(p.account)) }, "Remove") : null,
          ),
        ),
      ),
      owner ? h("h3", {}, "Invites that still work") : null,
      owner
        ? h("ul", { class: "people", "aria-label": "Invites" },
            ...(invites.length === 0 ? [h("li", { class: "hint" }, "None.")] : invites.map((i) =>
              h("li", {},
                h("span", { class: "who" }, `${i.role} · ${i.usesLeft} use${i.usesLeft === 1 ? "" : "s"} left · until ${when(Number(i.expiresAt))}`),
                h("button", { class: "link danger", "aria-label": `Withdraw the ${i.role} invite`, onclick: () => screen.run(() => withdraw(i.id)) }, "Withdraw"),
              ),
            )))
        : null,
    );
  } catch (error) {
    body.replaceChildren(h("p", { class: "error", role: "alert" }, error instanceof Unreachable ? "Members need a connection to the server." : error.message));
  }
  async function changeRole(account, newRole) {
    await request("PUT", `/v1/lists/${screen.list}/members/${encodeURIComponent(account)}`, { body: { role: newRole }, token });
    screen.app.showToast(`${account} is now ${newRole === "owner" ? "an owner" : newRole === "editor" ? "an editor" : "a viewer"}`, null);
  }
  async function removeMember(account) {
    await request("DELETE", `/v1/lists/${screen.list}/members/${encodeURIComponent(account)}`, { token });
    screen.app.showToast(`Removed ${account} from the list`, null);
    /** @type {HTMLDialogElement | null} */ (document.querySelector("dialog[open]"))?.close();
    await members(screen);
  }
  async function withdraw(invite) {
    await request("DELETE", `/v1/lists/${screen.list}/invites/${encodeURIComponent(invite)}`, { token });
    screen.app.showToast("Withdrew the invite", null);
    /** @type {HTMLDialogElement | null} */ (document.querySelector("dialog[open]"))?.close();
    await members(screen);
  }
}

/** A link the family can use: how many people, as what, for how long; Copy and Share. */
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
    { onsubmit: (event) => { event.preventDefault(); screen.run(makeLink); } },
    h("label", { for: "share-role" }, "They"), roleSelect,
    h("label", { for: "share-uses" }, "Works for"), usesSelect,
    h("label", { for: "share-expiry" }, "For"), expirySelect,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Make a link")),
  );
  openDialog("share-title", "Share this list", form, result);
  async function makeLink() {
    result.replaceChildren(h("p", {}, "Making a link…"));
    try {
      await screen.sync.syncList(screen.list);
      const title = screen.replica.state(screen.list)?.info.title;
      const invitation = { role: roleSelect.value, uses: Number(usesSelect.value), expiresIn: Number(expirySelect.value), ...(title ? { title } : {}) };
      const invite = await request("POST", `/v1/lists/${screen.list}/invites`, { body: invitation, token: screen.replica.meta.account?.token });
      if (typeof invite.code !== "string") throw new Error("the server's answer has no code");
      const link = `${location.origin}/#join=${invite.code}`;
      const people = Number(invite.usesLeft) === 1 ? "one person" : `${invite.usesLeft} people`;
      result.replaceChildren(
        h("p", {}, `Anyone with this link or code can join as ${invite.role === "editor" ? "an editor" : invite.role === "owner" ? "an owner" : "a viewer"}: ${people}, until ${when(Number(invite.expiresAt))}.`),
        h("input", { class: "link-text", readonly: true, value: link, "aria-label": "Invite link", onfocus: (e) => e.target.select() }),
        h("p", { class: "code", id: "invite-code", "aria-label": "Invite code" }, invite.code),
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
      result.replaceChildren(h("p", { class: "error", role: "alert" }, error instanceof Unreachable ? "Sharing needs a connection to the server." : error.message));
    }
  }
}
