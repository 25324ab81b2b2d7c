// What a device does with an account's secrets (BasketSeal's AccountSession, docs/encryption.md):
// the password never leaves the device, the server gets the login secret it gives; a new
// password wraps the account's private key again (it rekeys nothing).
import { ERRORS, ApiError, ROUTES, request } from "./api.js";
import { generateX25519KeyPair, x25519KeyPair } from "./platform-crypto.js";
import { newRecoveryCode, recoveryKey, recoverySecret, stretch, unwrap, wrap } from "./seal.js";
import { fromBase64URL, toBase64URL } from "./sealed.js";

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
 * What signing in gave (AccountSession.SignedIn): the new token's answer, the account's key pair
 * kept as text ("X1." base64url of the private key; null when the server's does not open with
 * this password) and, when the key pair was made just now, its recovery code to show once.
 * @typedef {{ answer: Record<string, any>, accountKey: string | null, recoveryCode: string | null }} SignedIn
 */

/**
 * Creates the account, signs it in and makes its key pair.
 * @param {string} name
 * @param {string} password
 * @param {string} [invite]
 * @returns {Promise<SignedIn>}
 */
export async function signUp(name, password, invite) {
  const keys = await stretched(name, password);
  /** @type {{ name: string, password: string, invite?: string }} */
  const body = { name, password: keys.loginText };
  if (invite) body.invite = invite;
  await request(ROUTES.signUp, [], { body });
  const answer = await request(ROUTES.login, [], { body: { name, password: keys.loginText, device: "web" } });
  return withKeys(answer, keys);
}

/**
 * The account's key pair from the server, unwrapped with the password's key; made and kept
 * there when the account has none (AccountSession.withKeys).
 * @param {Record<string, any>} answer the sign-in's
 * @param {{ loginText: string, wrap: Uint8Array }} keys
 * @returns {Promise<SignedIn>}
 */
async function withKeys(answer, keys) {
  const token = answer.token;
  let stored = null;
  try {
    stored = await request(ROUTES.accountKeys, [], { token });
  } catch (error) {
    if (!(error instanceof ApiError && error.is(ERRORS.notFound))) throw error;
  }
  if (stored !== null) {
    try {
      const pair = await x25519KeyPair(await unwrap(String(stored.wrappedKey), keys.wrap, PRIVATE_KEY_PURPOSE));
      if (toBase64URL(pair.publicKey) !== stored.publicKey) throw new Error("another key pair");
      return { answer, accountKey: "X1." + toBase64URL(pair.privateKey), recoveryCode: null };
    } catch {
      return { answer, accountKey: null, recoveryCode: null };
    }
  }
  const pair = await generateX25519KeyPair();
  const code = newRecoveryCode();
  await request(ROUTES.setAccountKeys, [], {
    token,
    body: {
      password: keys.loginText,
      publicKey: toBase64URL(pair.publicKey),
      wrappedKey: await wrap(pair.privateKey, keys.wrap, PRIVATE_KEY_PURPOSE),
      recoveryKey: await wrap(pair.privateKey, await recoveryKey(code), PRIVATE_KEY_PURPOSE),
      recoverySecret: await recoverySecret(code),
    },
  });
  return { answer, accountKey: "X1." + toBase64URL(pair.privateKey), recoveryCode: code };
}

/**
 * The key pair a kept "X1." text holds; null when it holds none.
 * @param {string | undefined} text
 */
export async function accountKeyPair(text) {
  const bytes = text?.startsWith("X1.") ? fromBase64URL(text.slice(3)) : null;
  return bytes !== null && bytes.length === 32 ? x25519KeyPair(bytes) : null;
}

/**
 * Signs in with the login secret; an account made before login secrets is signed in with the
 * password once and moved to the login secret (AccountSession.signIn).
 * @param {string} name
 * @param {string} password
 * @returns {Promise<SignedIn>}
 */
export async function signIn(name, password) {
  const keys = await stretched(name, password);
  const { loginText } = keys;
  try {
    return await withKeys(await request(ROUTES.login, [], { body: { name, password: loginText, device: "web" } }), keys);
  } catch (error) {
    if (!(error instanceof ApiError && error.is(ERRORS.invalidCredentials))) throw error;
    let old;
    try {
      old = await request(ROUTES.login, [], { body: { name, password, device: "web" } });
    } catch {
      throw error;
    }
    await request(ROUTES.changePassword, [], { body: { password, newPassword: loginText }, token: old.token });
    return withKeys(old, keys);
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
 * A forgotten password (AccountSession.recover): the recovery code's secret gets the private key
 * wrapped under the code's key; it is opened here, wrapped again under the new password's key
 * and sent with it. Every other device is signed out; this one is signed in.
 * @param {string} name
 * @param {string} code the recovery code, as written down
 * @param {string} fresh the new password
 * @returns {Promise<SignedIn>}
 */
export async function recover(name, code, fresh) {
  const secret = await recoverySecret(code);
  const stored = await request(ROUTES.recover, [], { body: { name, recoverySecret: secret } });
  const privateKey = await unwrap(String(stored.recoveryKey), await recoveryKey(code), PRIVATE_KEY_PURPOSE);
  const pair = await x25519KeyPair(privateKey);
  if (toBase64URL(pair.publicKey) !== stored.publicKey) throw new Error("the recovery code opens another key pair than the account's");
  const after = await stretched(name, fresh);
  const answer = await request(ROUTES.recover, [], {
    body: { name, recoverySecret: secret, newPassword: after.loginText, wrappedKey: await wrap(privateKey, after.wrap, PRIVATE_KEY_PURPOSE), device: "web" },
  });
  return { answer, accountKey: "X1." + toBase64URL(privateKey), recoveryCode: null };
}

/**
 * The login secret of `password`, which deleting the account is confirmed with.
 * @param {string} name
 * @param {string} password
 */
export async function loginSecret(name, password) {
  return (await stretched(name, password)).loginText;
}
