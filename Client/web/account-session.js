// What a device does with an account's secrets (BasketSeal's AccountSession, docs/encryption.md):
// the password never leaves the device, the server gets the login secret it gives; a new
// password wraps the account's private key again (it rekeys nothing).
import { ERRORS, ApiError, ROUTES, request } from "./api.js";
import { stretch, unwrap, wrap } from "./seal.js";
import { toBase64URL } from "./sealed.js";

/** What wraps the private key, under the password's key and the recovery code's alike. */
export const PRIVATE_KEY_PURPOSE = "private-key";

/**
 * The login secret and wrapping key of `password` for the account `name`, the secret as the
 * server gets it (AccountKeys.Stretched.loginText).
 * @param {string} name
 * @param {string} password
 */
async function stretched(name, password) {
  const keys = await stretch(password, name.toLowerCase());
  return { loginText: toBase64URL(keys.login), wrap: keys.wrap };
}

/**
 * Creates the account and signs it in: the new token's answer.
 * @param {string} name
 * @param {string} password
 * @param {string} [invite]
 */
export async function signUp(name, password, invite) {
  const { loginText } = await stretched(name, password);
  /** @type {{ name: string, password: string, invite?: string }} */
  const body = { name, password: loginText };
  if (invite) body.invite = invite;
  await request(ROUTES.signUp, [], { body });
  return request(ROUTES.login, [], { body: { name, password: loginText, device: "web" } });
}

/**
 * Signs in with the login secret; an account made before login secrets is signed in with the
 * password once and moved to the login secret (AccountSession.signIn).
 * @param {string} name
 * @param {string} password
 */
export async function signIn(name, password) {
  const { loginText } = await stretched(name, password);
  try {
    return await request(ROUTES.login, [], { body: { name, password: loginText, device: "web" } });
  } catch (error) {
    if (!(error instanceof ApiError && error.is(ERRORS.invalidCredentials))) throw error;
    let old;
    try {
      old = await request(ROUTES.login, [], { body: { name, password, device: "web" } });
    } catch {
      throw error;
    }
    await request(ROUTES.changePassword, [], { body: { password, newPassword: loginText }, token: old.token });
    return old;
  }
}

/**
 * A new password: the private key, read back from the server with the current password's key,
 * wrapped again under the new one's and sent with the change (AccountSession.changePassword).
 * @param {string} name
 * @param {string} current
 * @param {string} fresh
 * @param {string | null | undefined} token
 */
export async function changePassword(name, current, fresh, token) {
  const before = await stretched(name, current);
  const after = await stretched(name, fresh);
  /** @type {{ password: string, newPassword: string, wrappedKey?: string }} */
  const body = { password: before.loginText, newPassword: after.loginText };
  let stored = null;
  try {
    stored = await request(ROUTES.accountKeys, [], { token });
  } catch (error) {
    if (!(error instanceof ApiError && error.is(ERRORS.notFound))) throw error;
  }
  if (stored && typeof stored.wrappedKey === "string") {
    const privateKey = await unwrap(stored.wrappedKey, before.wrap, PRIVATE_KEY_PURPOSE);
    body.wrappedKey = await wrap(privateKey, after.wrap, PRIVATE_KEY_PURPOSE);
  }
  return request(ROUTES.changePassword, [], { body, token });
}

/**
 * The login secret of `password`, which deleting the account is confirmed with.
 * @param {string} name
 * @param {string} password
 */
export async function loginSecret(name, password) {
  return (await stretched(name, password)).loginText;
}
