// The account sheet (BasketCLI's `basket devices`, `basket password`, `basket logout`): the
// devices signed in, the password, signing out with or without this device's lists.
import { ROUTES, Unreachable, request } from "./api.js";
import { changePassword, loginSecret } from "./account-session.js";
import { field, h, openDialog, when, messageOf } from "./ui.js";
import { changes } from "./phrases.js";

/** @typedef {import("./app.js").App} App */
/**
 * The account: the devices signed in (each can be signed out) and the password.
 * @param {App} app
 */
export async function accountSheet(app) {
  const token = app.replica.meta.account?.token;
  const devices = h("ul", { class: "people", "aria-label": "Devices" }, h("li", {}, "Loading…"));
  const [currentLabel, current] = field("current-password", "Current password", { type: "password", autocomplete: "current-password", required: true });
  const [newLabel, fresh] = field("new-password", "New password (8 characters or more)", { type: "password", autocomplete: "new-password", minlength: 8, required: true });
  const message = h("p", { role: "alert" });
  const [deleteLabel, deletePassword] = field("delete-password", "Password, to delete the account", { type: "password", autocomplete: "current-password", required: true });
  const deleteMessage = h("p", { role: "alert" });
  openDialog(
    "account-title",
    `Account ${app.replica.meta.account?.name ?? ""}`,
    h("h3", {}, "Signed-in devices"),
    devices,
    h("h3", {}, "Change the password"),
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          app.run(async () => {
            message.textContent = "";
            message.className = "error";
            try {
              const answer = await changePassword(app.replica.meta.account?.name ?? "", current.value, fresh.value, token);
              current.value = fresh.value = "";
              message.className = "";
              message.textContent = `The password is changed; ${answer?.revoked ?? 0} other device(s) signed out.`;
              await listDevices();
            } catch (e) {
              message.textContent = e instanceof Unreachable ? "Changing the password needs the server." : messageOf(e);
            }
          });
        },
      },
      currentLabel, current, newLabel, fresh, message,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Change the password")),
    ),
    h("h3", {}, "Delete the account"),
    h("p", {}, "For good: lists only you are in are deleted; a shared list you are the last owner of passes to another member; every device is signed out."),
    h(
      "form",
      {
        onsubmit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          app.run(() => deleteAccount(app, deletePassword, deleteMessage));
        },
      },
      deleteLabel, deletePassword, deleteMessage,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "danger" }, "Delete my account")),
    ),
  );
  async function listDevices() {
    try {
      const answer = await request(ROUTES.devices, [], { token });
      const tokens = (Array.isArray(answer.tokens) ? answer.tokens : []).slice(0, 1000).filter((/** @type {any} */ t) => typeof t?.id === "string");
      /** @typedef {{ id: string, device?: unknown, current?: unknown, lastUsed?: unknown, created?: unknown }} TokenRow */
      devices.replaceChildren(
        ...tokens.map((/** @type {TokenRow} */ t) =>
          h("li", {},
            h("span", { class: "who" }, `${String(t.device ?? "device").slice(0, 64)}${t.current ? " (this one)" : ""} · last used ${when(Number(t.lastUsed ?? t.created))}`),
            t.current ? null : h("button", { class: "link danger", "aria-label": `Sign out ${String(t.device ?? "device").slice(0, 64)}`, onclick: () => app.run(async () => {
              await request(ROUTES.revokeDevice, [t.id], { token });
              app.showToast("Signed that device out");
              await listDevices();
            }) }, "Sign out"),
          ),
        ),
      );
    } catch (e) {
      devices.replaceChildren(h("li", { class: "error" }, e instanceof Unreachable ? "The devices need a connection to the server." : messageOf(e)));
    }
  }
  await listDevices();
}

/**
 * Deletes the account on the server (BasketCLI's `basket delete-account`), then forgets it here:
 * says what became of the lists, and "Done" leaves for the sign-in screen.
 * @param {HTMLInputElement} password
 * @param {HTMLElement} message
 * @param {App} app
 */
async function deleteAccount(app, password, message) {
  message.className = "error";
  message.textContent = "";
  let answer;
  try {
    const secret = await loginSecret(app.replica.meta.account?.name ?? "", password.value);
    answer = await request(ROUTES.deleteAccount, [], { body: { password: secret }, token: app.replica.meta.account?.token });
  } catch (e) {
    message.textContent = e instanceof Unreachable ? "Deleting the account needs the server." : messageOf(e);
    return;
  }
  password.value = "";
  const lists = (/** @type {unknown} */ n) => (n === 1 ? "1 list" : `${Number(n) || 0} lists`);
  message.className = "";
  message.textContent = `The account is deleted: ${lists(answer?.deleted)} deleted, ${lists(answer?.handedOver)} passed to another member, ${lists(answer?.left)} left.`;
  const done = h("button", { class: "primary", onclick: () => app.run(async () => {
    app.sync.stop();
    await app.replica.forgetEverything();
    location.hash = "#/";
    location.reload();
  }) }, "Done");
  message.after(h("div", { class: "actions" }, done));
  done.focus();
}

/**
 * Signs this device out. Nothing waiting is dropped silently: with changes not sent yet it asks
 * to send them first, or to keep them here until this account signs in again; discarding them
 * is a choice of its own, which names how many.
 * @param {App} app
 */
export async function signOut(app) {
  const waiting = app.replica.pendingChanges();
  if (waiting === 0) return forgetAndSignOut(app);
  const error = h("p", { class: "error", role: "alert" });
  const dialog = h(
    "dialog",
    { class: "card", "aria-labelledby": "signout-title", "aria-describedby": "signout-question" },
    h("h2", { id: "signout-title" }, "Sign out?"),
    h("p", { id: "signout-question" }, `${changes(waiting)} on this device ${waiting === 1 ? "has" : "have"} not reached the server yet.`),
    error,
    h(
      "div",
      { class: "actions column" },
      h("button", { class: "primary", onclick: () => app.run(sendThenSignOut) }, "Send them, then sign out"),
      h("button", { onclick: () => app.run(() => signOutKeeping(app)) }, "Sign out, keep them on this device"),
      h("button", { class: "danger", onclick: () => app.run(() => forgetAndSignOut(app)) }, `Discard ${changes(waiting)} and sign out`),
      h("button", { onclick: () => dialog.close() }, "Cancel"),
    ),
  );
  async function sendThenSignOut() {
    error.textContent = "Sending…";
    await app.sync.syncAll();
    const left = app.replica.pendingChanges();
    if (left === 0) return forgetAndSignOut(app);
    error.textContent =
      app.sync.status().state === "offline" || app.sync.status().state === "unreachable"
        ? `Can't reach the server: ${changes(left)} still wait here. Keep them on this device until you sign in again, or try later.`
        : `${changes(left)} could not be sent: ${app.sync.status().message}`;
  }
  document.body.append(dialog);
  dialog.addEventListener("close", () => dialog.remove());
  dialog.showModal();
}

/**
 * Forgets the token (on the server too, when it can be reached).
 * @param {App} app
 */
async function revokeToken(app) {
  // The server ends this device's push subscriptions with its token; the browser's ends here.
  if ("serviceWorker" in navigator) {
    await navigator.serviceWorker.getRegistration().then((r) => r?.pushManager.getSubscription()).then((s) => s?.unsubscribe()).catch(() => false);
  }
  const token = app.replica.meta.account?.token;
  if (!token) return;
  try {
    await request(ROUTES.logout, [], { token });
  } catch {
    // Offline: the token stays valid on the server until it expires; this device forgets it.
  }
}

/**
 * Signs out but keeps every list and change here: they are sent when this account signs in again.
 * @param {App} app
 */
async function signOutKeeping(app) {
  await revokeToken(app);
  app.sync.stop();
  await app.replica.setMeta({ account: { name: app.replica.meta.account?.name ?? "", token: null }, push: { lists: [], kinds: [] } });
  location.hash = "#/signin";
  location.reload();
}

/**
 * @param {App} app
 */
async function forgetAndSignOut(app) {
  await revokeToken(app);
  app.sync.stop();
  await app.replica.forgetEverything();
  location.hash = "#/";
  location.reload();
}
