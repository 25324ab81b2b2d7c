// The keys and seals of end-to-end encrypted lists (BasketSeal in Swift; docs/encryption.md):
// keyed item ids, values sealed where they stand, invite secrets, account secrets, envelopes.
// Every primitive is WebCrypto's, through platform-crypto.js.
import { hex, fromHex } from "./sha256.js";
import { itemDerivationInput, shopDerivationInput } from "./ids.js";
import { aesGCMOpen, aesGCMSeal, generateX25519KeyPair, hkdfSHA256, hmacSHA256, pbkdf2SHA256, randomBytes, x25519SharedSecret } from "./platform-crypto.js";
import { associatedData, fromBase64URL, parse, plaintext, sealedText, toBase64URL, valueOfPlaintext } from "./sealed.js";

const utf8 = new TextEncoder();
const empty = new Uint8Array(0);

/** Why a sealed value, key text or envelope could not be opened (SealError). */
export class SealError extends Error {
  /**
   * @param {"notSealed" | "unknownEpoch" | "forged" | "malformed" | "badKey"} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * @param {...Uint8Array} parts
 * @returns {Uint8Array}
 */
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * @param {number} value
 * @returns {Uint8Array}
 */
function uint32(value) {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value);
  return bytes;
}

/** The keys of one encrypted list (ListKeys): the identity key and each epoch's key. */
export class ListKeys {
  /**
   * Use ListKeys.make: the sub-keys are derived asynchronously.
   * @param {string} list
   * @param {Uint8Array} identity
   * @param {Map<number, Uint8Array>} epochs
   * @param {number} current
   * @param {Uint8Array} idKey
   * @param {Map<number, Uint8Array>} valueKeys
   */
  constructor(list, identity, epochs, current, idKey, valueKeys) {
    this.list = list;
    this.identity = identity;
    this.epochs = epochs;
    this.current = current;
    this.idKey = idKey;
    this.valueKeys = valueKeys;
    /** @type {Map<number, Uint8Array>} */
    this.nonceKeys = new Map();
  }

  /**
   * Keys of `list`; throws a SealError "badKey" when a key is not 32 bytes or `current` has none.
   * @param {string} list
   * @param {Uint8Array} identity
   * @param {Map<number, Uint8Array>} epochs
   * @param {number} current
   */
  static async make(list, identity, epochs, current) {
    const fits = [...epochs].every(([e, k]) => Number.isInteger(e) && e >= 0 && e <= 999999 && k.length === 32);
    if (identity.length !== 32 || !epochs.has(current) || !fits || epochs.size > 1000) throw new SealError("badKey", "not a key of Basket's");
    const salt = fromHex(list);
    const idKey = await hkdfSHA256(identity, salt, utf8.encode("basket-ids-v1"), 32);
    const valueKeys = new Map();
    for (const [epoch, key] of epochs) valueKeys.set(epoch, await hkdfSHA256(key, salt, utf8.encode("basket-values-v1"), 32));
    const keys = new ListKeys(list, identity, epochs, current, idKey, valueKeys);
    for (const [epoch, key] of epochs) keys.nonceKeys.set(epoch, await hkdfSHA256(key, salt, utf8.encode("basket-nonces-v1"), 32));
    return keys;
  }

  /**
   * New keys for a new list.
   * @param {string} list
   */
  static generate(list) {
    return ListKeys.make(list, randomBytes(32), new Map([[0, randomBytes(32)]]), 0);
  }

  /** These keys with a new random epoch after the newest. */
  rotated() {
    return this.adding(this.current + 1, randomBytes(32));
  }

  /**
   * These keys with `key` for `epoch`.
   * @param {number} epoch
   * @param {Uint8Array} key
   */
  adding(epoch, key) {
    return ListKeys.make(this.list, this.identity, new Map([...this.epochs, [epoch, key]]), Math.max(this.current, epoch));
  }

  /**
   * The id of the item with key `key`: HMAC-SHA-256 under the id key, first 16 bytes, as hex.
   * @param {string} key
   */
  async itemID(key) {
    return hex((await hmacSHA256(itemDerivationInput(this.list, key), this.idKey)).subarray(0, 16));
  }

  /**
   * The id of the shop with key `key`.
   * @param {string} key
   */
  async shopID(key) {
    return hex((await hmacSHA256(shopDerivationInput(this.list, key), this.idKey)).subarray(0, 16));
  }

  /**
   * `op` with its value sealed under `epoch` (the current one unless given), with the nonce derived
   * from what is sealed (ListKeys.seal): HMAC-SHA-256 under the epoch's nonce key of the associated
   * data and the padded plaintext, first 12 bytes.
   * @param {import("./ops.js").Op} op
   * @param {number} [epoch]
   * @returns {Promise<import("./ops.js").Op>}
   */
  async seal(op, epoch = this.current) {
    const key = this.valueKeys.get(epoch);
    const nonceKey = this.nonceKeys.get(epoch);
    if (key === undefined || nonceKey === undefined) throw new Error(`no key for epoch ${epoch}`);
    const padded = plaintext(op.value);
    const data = associatedData(op, epoch);
    const nonce = (await hmacSHA256(concat(data, padded), nonceKey)).subarray(0, 12);
    const payload = await aesGCMSeal(padded, key, nonce, data);
    return { ...op, value: sealedText(epoch, concat(nonce, payload)) };
  }

  /**
   * `op` with its value opened; throws a SealError when it is not sealed, its epoch is unknown,
   * it does not verify where it stands, or it opens to no value.
   * @param {import("./ops.js").Op} op
   * @returns {Promise<import("./ops.js").Op>}
   */
  async open(op) {
    const parsed = typeof op.value === "string" ? parse(op.value) : null;
    if (parsed === null) throw new SealError("notSealed", "not a sealed value");
    const key = this.valueKeys.get(parsed.epoch);
    if (key === undefined) throw new SealError("unknownEpoch", `sealed under key ${parsed.epoch}, which this device does not have`);
    const opened = await aesGCMOpen(parsed.payload.subarray(12), key, parsed.payload.subarray(0, 12), associatedData(op, parsed.epoch));
    if (opened === null) throw new SealError("forged", "does not open with the list's key where it stands");
    const value = valueOfPlaintext(opened);
    if (value === undefined) throw new SealError("malformed", "opens to no value");
    return { ...op, value };
  }

  /** How a device keeps the keys (ListKeys.storageText): "K1." base64url(identity, each epoch with its key). */
  get storageText() {
    const entries = [...this.epochs.keys()].sort((a, b) => a - b).flatMap((e) => [uint32(e), /** @type {Uint8Array} */ (this.epochs.get(e))]);
    return "K1." + toBase64URL(concat(this.identity, ...entries));
  }

  /**
   * The keys a kept text holds (ListKeys(list:storageText:)).
   * @param {string} list
   * @param {string} text
   */
  static fromStorageText(list, text) {
    const bytes = text.length <= 65536 && text.startsWith("K1.") ? fromBase64URL(text.slice(3)) : null;
    if (bytes === null || bytes.length <= 32 || (bytes.length - 32) % 36 !== 0) throw new SealError("badKey", "not a key of Basket's");
    const epochs = new Map();
    for (let at = 32; at < bytes.length; at += 36) epochs.set(new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0), bytes.slice(at + 4, at + 36));
    return ListKeys.make(list, bytes.slice(0, 32), epochs, Math.max(...epochs.keys()));
  }

  /**
   * A title sealed for an invite's preview (ListKeys.sealedInviteTitle): the list's title register
   * at version zero.
   * @param {string} title
   */
  async sealedInviteTitle(title) {
    const sealed = await this.seal({ list: this.list, item: "-", field: "title", ts: "0000000000000000", replica: "0000000000000000", value: title });
    return /** @type {string} */ (sealed.value);
  }

  /**
   * The title an invite's preview carries sealed; null when it does not open.
   * @param {string} sealed
   */
  async openInviteTitle(sealed) {
    try {
      const opened = await this.open({ list: this.list, item: "-", field: "title", ts: "0000000000000000", replica: "0000000000000000", value: sealed });
      return typeof opened.value === "string" ? opened.value : null;
    } catch {
      return null;
    }
  }

  /** What an invite link carries after its "#": k1. base64url(identity, epoch, its key). */
  get inviteSecret() {
    const newest = [...this.epochs.keys()].sort((a, b) => a - b).slice(-MAX_INVITE_EPOCHS);
    const parts = newest.flatMap((epoch) => [uint32(epoch), /** @type {Uint8Array} */ (this.epochs.get(epoch))]);
    return "k1." + toBase64URL(concat(this.identity, ...parts));
  }

  /**
   * The keys an invite secret carries: the identity key and up to 16 epochs, the newest last.
   * @param {string} list
   * @param {string} text
   */
  static fromInviteSecret(list, text) {
    const bytes = text.length <= 3 + Math.floor(((32 + 36 * MAX_INVITE_EPOCHS) * 4) / 3) + 2 && text.startsWith("k1.") ? fromBase64URL(text.slice(3)) : null;
    if (bytes === null || bytes.length < 68 || (bytes.length - 32) % 36 !== 0) throw new SealError("badKey", "not a key of Basket's");
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    /** @type {Map<number, Uint8Array>} */
    const epochs = new Map();
    for (let at = 32; at < bytes.length; at += 36) epochs.set(view.getUint32(at), bytes.slice(at + 4, at + 36));
    return ListKeys.make(list, bytes.slice(0, 32), epochs, Math.max(...epochs.keys()));
  }
}

/** The most epochs an invite secret carries, the newest (ListKeys.maxInviteEpochs). */
export const MAX_INVITE_EPOCHS = 16;

/** PBKDF2's rounds (AccountKeys.iterations): OWASP's figure for PBKDF2-HMAC-SHA-256. */
export const ITERATIONS = 600000;

/**
 * The login secret and wrapping key of a password for an account (AccountKeys.stretch).
 * @param {string} password
 * @param {string} account
 * @param {number} [iterations]
 * @returns {Promise<{ login: Uint8Array, wrap: Uint8Array }>}
 */
export async function stretch(password, account, iterations = ITERATIONS) {
  const salt = concat(utf8.encode("basket-account-v1\0"), utf8.encode(account));
  const master = await pbkdf2SHA256(utf8.encode(password), salt, iterations);
  return {
    login: await hkdfSHA256(master, empty, utf8.encode("basket-login-v1"), 32),
    wrap: await hkdfSHA256(master, empty, utf8.encode("basket-wrap-v1"), 32),
  };
}

/**
 * @param {string} purpose
 */
const wrapData = (purpose) => utf8.encode(`basket-wrap-v1\0${purpose}`);

/**
 * `secret` sealed under `key` for `purpose`: "w1." base64url(nonce, ciphertext, tag).
 * @param {Uint8Array} secret
 * @param {Uint8Array} key
 * @param {string} purpose
 * @param {Uint8Array} [nonce]
 */
export async function wrap(secret, key, purpose, nonce = randomBytes(12)) {
  return "w1." + toBase64URL(concat(nonce, await aesGCMSeal(secret, key, nonce, wrapData(purpose))));
}

/**
 * The secret `wrap` sealed; a SealError "badKey" for no wrapped secret, "forged" for another key or purpose.
 * @param {string} text
 * @param {Uint8Array} key
 * @param {string} purpose
 */
export async function unwrap(text, key, purpose) {
  const bytes = text.length <= 4096 && text.startsWith("w1.") ? fromBase64URL(text.slice(3)) : null;
  if (bytes === null || bytes.length < 28) throw new SealError("badKey", "not a key of Basket's");
  const secret = await aesGCMOpen(bytes.subarray(12), key, bytes.subarray(0, 12), wrapData(purpose));
  if (secret === null) throw new SealError("forged", "does not open with this key");
  return secret;
}

const base32 = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * The recovery code of 16 bytes: Crockford's base32, dashes every four characters.
 * @param {Uint8Array} bytes
 */
export function recoveryCode(bytes) {
  let bits = "";
  for (const b of bytes) bits += b.toString(2).padStart(8, "0");
  bits = bits.padEnd(130, "0");
  let text = "";
  for (let i = 0; i < 26; i++) {
    if (i > 0 && i % 4 === 0 && i < 24) text += "-";
    text += base32[parseInt(bits.slice(i * 5, i * 5 + 5), 2)];
  }
  return text;
}

/** A new recovery code, 128 random bits. */
export function newRecoveryCode() {
  return recoveryCode(randomBytes(16));
}

/**
 * The 16 bytes of a recovery code as typed: either case, dashes and spaces ignored, I and L as 1, O as 0.
 * @param {string} code
 */
export function recoveryBytes(code) {
  const cleaned = code.toLowerCase().replace(/[- ]/g, "").replace(/[il]/g, "1").replace(/o/g, "0");
  if (cleaned.length !== 26 || [...cleaned].some((c) => !base32.includes(c))) throw new SealError("badKey", "not a recovery code");
  const bits = [...cleaned].map((c) => base32.indexOf(c).toString(2).padStart(5, "0")).join("");
  if (bits.slice(128) !== "00") throw new SealError("badKey", "not a recovery code");
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(bits.slice(i * 8, i * 8 + 8), 2));
}

/**
 * The key a recovery code wraps the private key with.
 * @param {string} code
 */
export function recoveryKey(code) {
  return hkdfSHA256(recoveryBytes(code), empty, utf8.encode("basket-recovery-v1"), 32);
}

/**
 * What a recovery code signs in with when the password is forgotten (base64url of 32 bytes):
 * the server keeps its SHA-256 (AccountKeys.recoverySecret in Swift).
 * @param {string} code
 */
export async function recoverySecret(code) {
  return toBase64URL(await hkdfSHA256(recoveryBytes(code), empty, utf8.encode("basket-recovery-login-v1"), 32));
}

/**
 * @param {string} list
 */
const envelopeData = (list) => concat(utf8.encode("basket-envelope-v1\0"), fromHex(list));

/**
 * A list's keys sealed to a member's X25519 public key (Envelope.seal).
 * @param {ListKeys} keys
 * @param {Uint8Array} recipient
 * @param {import("./platform-crypto.js").X25519KeyPair} [ephemeralPair] fresh unless a vector gives one
 * @param {Uint8Array} [nonce]
 */
export async function sealEnvelope(keys, recipient, ephemeralPair, nonce = randomBytes(12)) {
  const ephemeral = ephemeralPair ?? (await generateX25519KeyPair());
  const shared = await x25519SharedSecret(ephemeral.privateKey, recipient);
  if (shared === null) throw new SealError("badKey", "not a key of Basket's");
  const entries = [...keys.epochs.keys()].sort((a, b) => a - b).flatMap((e) => [uint32(e), /** @type {Uint8Array} */ (keys.epochs.get(e))]);
  const key = await hkdfSHA256(shared, concat(ephemeral.publicKey, recipient), utf8.encode("basket-envelope-v1"), 32);
  const sealed = await aesGCMSeal(concat(keys.identity, ...entries), key, nonce, envelopeData(keys.list));
  return "e1." + toBase64URL(concat(ephemeral.publicKey, nonce, sealed));
}

/**
 * The keys of `list` an envelope sealed to `recipient` (Envelope.open).
 * @param {string} text
 * @param {string} list
 * @param {import("./platform-crypto.js").X25519KeyPair} recipient
 */
export async function openEnvelope(text, list, recipient) {
  const bytes = text.length <= 65536 && text.startsWith("e1.") ? fromBase64URL(text.slice(3)) : null;
  if (bytes === null || bytes.length < 32 + 12 + 16 + 32 + 36) throw new SealError("badKey", "not a key of Basket's");
  const ephemeral = bytes.subarray(0, 32);
  const shared = await x25519SharedSecret(recipient.privateKey, ephemeral);
  if (shared === null) throw new SealError("badKey", "not a key of Basket's");
  const key = await hkdfSHA256(shared, concat(ephemeral, recipient.publicKey), utf8.encode("basket-envelope-v1"), 32);
  const opened = await aesGCMOpen(bytes.subarray(44), key, bytes.subarray(32, 44), envelopeData(list));
  if (opened === null) throw new SealError("forged", "does not open with this key");
  const entries = opened.subarray(32);
  if (entries.length % 36 !== 0 || entries.length === 0 || entries.length / 36 > 1000) throw new SealError("badKey", "not a key of Basket's");
  const epochs = new Map();
  for (let at = 0; at < entries.length; at += 36) epochs.set(new DataView(entries.buffer, entries.byteOffset + at).getUint32(0), entries.slice(at + 4, at + 36));
  return ListKeys.make(list, opened.slice(0, 32), epochs, Math.max(...epochs.keys()));
}
