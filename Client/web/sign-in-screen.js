// The account screen (BasketCLI's `basket signup` and `basket login`): sign in or create an
// account, each mode with its own heading, button and Enter. `app` is what app.js shares.
import { Unreachable } from "./api.js";
import { recover, signIn, signUp } from "./account-session.js";
import { h, messageOf, openDialog } from "./ui.js";
import { changes } from "./phrases.js";

/** @typedef {import("./app.js").App} App */
/**
 * The account screen, in one of two modes a person cannot mix up: "Sign in" (an account that
 * exists) or "Create an account" (a new person), each with its own heading, button and Enter.
 * @param {App} app
 * @param {string} [message]
 * @param {"signIn" | "create"} [mode]
 */
export function showSignIn(app, message = "", mode = "signIn") {
  const creating = mode === "create";
  const name = h("input", { id: "name", name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false" });
  const password = h("input", {
    id: "password",
    name: "password",
    type: "password",
    autocomplete: creating ? "new-password" : "current-password",
    required: true,
    minlength: creating ? 8 : null,
  });
  const invite = h("input", { id: "invite", name: "invite", autocomplete: "off" });
  const error = h("p", { class: "error", role: "alert" }, message);
  const stored = app.replica.meta.account?.name ?? "";
  if (stored) name.value = stored;
  const waiting = app.replica.pendingChanges();

  /**
   * The account whose lists this device holds, when another one signs in.
   * @param {string} typed
   */
  async function makeRoomFor(typed) {
    if (!stored || stored.toLowerCase() === typed.toLowerCase()) return true;
    if (app.replica.pendingChanges() > 0) {
      const n = app.replica.pendingChanges();
      error.replaceChildren(
        `This device holds ${changes(n)} of ${stored} not sent yet. Sign in as ${stored} to send them, or `,
        h("button", { type: "button", class: "link danger", onclick: () => app.run(async () => { await app.replica.forgetEverything(); showSignIn(app, "", mode); }) }, `discard ${changes(n)}`),
        ".",
      );
      return false;
    }
    await app.replica.forgetEverything();
    return true;
  }

  async function submit() {
    error.textContent = "";
    const typed = name.value.trim();
    try {
      if (!(await makeRoomFor(typed))) return;
      // The password never leaves the device: the server gets the login secret it gives.
      const signed = creating
        ? await signUp(typed, password.value, invite.value.trim() || undefined)
        : await signIn(typed, password.value);
      const answer = signed.answer;
      if (typeof answer.token !== "string") throw new Error("the server's answer has no token");
      await app.replica.setMeta({
        account: { name: answer.account ?? typed, token: answer.token, tokenID: answer.id },
        accountKey: signed.accountKey ?? undefined,
      });
      password.value = "";
      app.go("#/");
      app.sync.syncAll();
      if (signed.recoveryCode !== null) showRecoveryCode(signed.recoveryCode);
      else if (signed.accountKey === null) showKeysClosed(app);
    } catch (e) {
      error.textContent = e instanceof Unreachable ? "Can't reach the server. Try again when online." : messageOf(e);
    }
  }
  const fields = { name, password, invite, error };
  const form = accountForm(app, mode, fields, waiting > 0 && stored ? stored : "", () => submit());
  app.mount({ name: creating ? "create" : "signIn", update() {}, focus: stored && !creating ? password : name }, form);
}

/**
 * Signed in, but the account's key pair did not open with this password (the server holds a wrap
 * this password does not open): the encrypted lists stay closed here, and the person is told so.
 * @param {App} app
 */
function showKeysClosed(app) {
  openDialog(
    "keys-closed-title",
    "Your encrypted lists stay closed",
    h("p", {}, "You are signed in, but this password does not open the keys of your encrypted lists, so this phone cannot read them. Your recovery code opens them: sign out, then \"Forgot your password?\"."),
    h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => app.go("#/") }, "OK")),
  );
}

/**
 * A forgotten password (the terminal's `basket recover`): the recovery code shown when the
 * account was made sets a new one and opens the encrypted lists; every other device is signed out.
 * @param {App} app
 */
export function showRecovery(app) {
  const name = h("input", { id: "name", name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false" });
  const code = h("input", { id: "recovery-code", autocomplete: "off", autocapitalize: "characters", spellcheck: "false", required: true, placeholder: "ABCD-EFGH-…" });
  const password = h("input", { id: "password", name: "password", type: "password", autocomplete: "new-password", required: true, minlength: 8 });
  const error = h("p", { class: "error", role: "alert" });
  name.value = app.replica.meta.account?.name ?? "";
  async function submit() {
    error.textContent = "";
    const typed = name.value.trim();
    try {
      const stored = app.replica.meta.account?.name ?? "";
      if (stored && stored.toLowerCase() !== typed.toLowerCase()) await app.replica.forgetEverything();
      const signed = await recover(typed, code.value, password.value);
      const answer = signed.answer;
      if (typeof answer.token !== "string") throw new Error("the server's answer has no token");
      await app.replica.setMeta({ account: { name: answer.account ?? typed, token: answer.token, tokenID: answer.id }, accountKey: signed.accountKey ?? undefined });
      password.value = "";
      code.value = "";
      app.go("#/");
      app.sync.syncAll();
      app.showToast("Your new password is set; your other devices are signed out", null);
    } catch (e) {
      error.textContent = e instanceof Unreachable ? "Can't reach the server. Try again when online." : messageOf(e);
    }
  }
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "account-title", onsubmit: (/** @type {SubmitEvent} */ event) => { event.preventDefault(); submit(); } },
    h("p", { class: "brand" }, "Basket"),
    h("h1", { id: "account-title" }, "Forgot your password?"),
    h("p", { class: "hint" }, "The recovery code you wrote down when the account was made sets a new password and opens your encrypted lists. Your other devices are signed out."),
    h("label", { for: "name" }, "Account name"),
    name,
    h("label", { for: "recovery-code" }, "Recovery code"),
    code,
    h("label", { for: "password" }, "New password (8 characters or more)"),
    password,
    error,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Set the new password")),
    h("p", { class: "switch" }, "Remember it after all? ", h("button", { type: "button", class: "link", onclick: () => showSignIn(app) }, "Sign in")),
  );
  app.mount({ name: "recover", update() {}, focus: name.value ? code : name }, form);
}

/**
 * A recovery code, shown once (the terminal's "Your recovery code"): the only way back into the
 * encrypted lists when the password is forgotten.
 * @param {string} code
 */
function showRecoveryCode(code) {
  openDialog(
    "recovery-title",
    "Your recovery code",
    h("p", { class: "recovery-code", "aria-label": "Recovery code" }, code),
    h("p", {}, "Write it down and keep it apart from this phone. With it, a forgotten password still opens your encrypted lists; without the password or this code nobody can read them, the server included. It is shown this once."),
  );
}

/**
 * The account screen's form: its heading and words for the mode, the fields, a notice of the
 * changes of `waitingFor` (an account name; "" when none wait) and the link to the other mode.
 * @param {App} app
 * @param {"signIn" | "create"} mode
 * @param {{ name: HTMLInputElement, password: HTMLInputElement, invite: HTMLInputElement, error: HTMLElement }} fields
 * @param {string} waitingFor
 * @param {() => void} submit
 */
function accountForm(app, mode, { name, password, invite, error }, waitingFor, submit) {
  const creating = mode === "create";
  const waiting = app.replica.pendingChanges();
  return h(
    "form",
    {
      class: "card",
      "aria-labelledby": "account-title",
      onsubmit: (/** @type {SubmitEvent} */ event) => {
        event.preventDefault();
        submit();
      },
    },
    h("p", { class: "brand" }, "Basket"),
    h("h1", { id: "account-title" }, creating ? "Create an account" : "Sign in"),
    h("p", { class: "hint" }, creating ? "A new account for the shared shopping list that works offline." : "The shared shopping list that works offline."),
    waitingFor ? h("p", { class: "notice" }, `${changes(waiting)} of ${waitingFor} wait on this device: sign in as ${waitingFor} to send them.`) : null,
    h("label", { for: "name" }, "Account name"),
    name,
    h("label", { for: "password" }, creating ? "Choose a password (8 characters or more)" : "Password"),
    password,
    creating ? h("details", {}, h("summary", {}, "Have a signup invite?"), h("label", { for: "invite" }, "Invite code"), invite) : null,
    error,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, creating ? "Create account" : "Sign in")),
    h(
      "p",
      { class: "switch" },
      creating ? "Have an account already? " : "New to Basket? ",
      h("button", { type: "button", class: "link", onclick: () => showSignIn(app, "", creating ? "signIn" : "create") }, creating ? "Sign in" : "Create an account"),
    ),
    creating ? null : h("p", { class: "switch" }, h("button", { type: "button", class: "link", onclick: () => showRecovery(app) }, "Forgot your password?")),
  );
}
