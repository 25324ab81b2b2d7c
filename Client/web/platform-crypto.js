// The browser's side of the one seam for cryptography (PlatformCrypto in Swift): WebCrypto's
// HMAC-SHA-256, HKDF-SHA-256, PBKDF2-HMAC-SHA-256, AES-GCM and X25519, never a primitive of
// Basket's own. Every function takes and gives bytes, as the Swift does.

import { fromBase64URL } from "./sealed.js";

const subtle = globalThis.crypto.subtle;

/**
 * `count` bytes from the platform's secure generator.
 * @param {number} count
 * @returns {Uint8Array}
 */
export function randomBytes(count) {
  return globalThis.crypto.getRandomValues(new Uint8Array(count));
}

/**
 * The 32-byte HMAC-SHA-256 of `message` under `key`.
 * @param {Uint8Array} message
 * @param {Uint8Array} key
 * @returns {Promise<Uint8Array>}
 */
export async function hmacSHA256(message, key) {
  const imported = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, message));
}

/**
 * HKDF-SHA-256 (RFC 5869): extract from `key` with `salt`, expand with `info` to `length` bytes.
 * @param {Uint8Array} key
 * @param {Uint8Array} salt
 * @param {Uint8Array} info
 * @param {number} length
 * @returns {Promise<Uint8Array>}
 */
export async function hkdfSHA256(key, salt, info, length) {
  const imported = await subtle.importKey("raw", key, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, imported, length * 8));
}

/**
 * PBKDF2-HMAC-SHA-256 (RFC 8018) of `password` with `salt`, `iterations` rounds, 32 bytes.
 * @param {Uint8Array} password
 * @param {Uint8Array} salt
 * @param {number} iterations
 * @returns {Promise<Uint8Array>}
 */
export async function pbkdf2SHA256(password, salt, iterations) {
  const imported = await subtle.importKey("raw", password, "PBKDF2", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, imported, 256));
}

/**
 * `plaintext` sealed with AES-GCM under `key` (16 or 32 bytes) and `nonce` (12), with
 * `associatedData` authenticated: the ciphertext, then the 16-byte tag.
 * @param {Uint8Array} plaintext
 * @param {Uint8Array} key
 * @param {Uint8Array} nonce
 * @param {Uint8Array} associatedData
 * @returns {Promise<Uint8Array>}
 */
export async function aesGCMSeal(plaintext, key, nonce, associatedData) {
  const imported = await subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
  const params = { name: "AES-GCM", iv: nonce, additionalData: associatedData, tagLength: 128 };
  return new Uint8Array(await subtle.encrypt(params, imported, plaintext));
}

/**
 * The plaintext of `sealed` (ciphertext, then tag); null when the tag does not verify.
 * @param {Uint8Array} sealed
 * @param {Uint8Array} key
 * @param {Uint8Array} nonce
 * @param {Uint8Array} associatedData
 * @returns {Promise<Uint8Array | null>}
 */
export async function aesGCMOpen(sealed, key, nonce, associatedData) {
  if (sealed.length < 16) return null;
  const imported = await subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
  const params = { name: "AES-GCM", iv: nonce, additionalData: associatedData, tagLength: 128 };
  try {
    return new Uint8Array(await subtle.decrypt(params, imported, sealed));
  } catch {
    return null;
  }
}

// PKCS #8's fixed wrapping of a raw X25519 private key (RFC 8410): WebCrypto imports private
// keys in PKCS #8 or JWK, not raw.
const pkcs8Prefix = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20]);

/**
 * An X25519 key pair (X25519KeyPair): its 32-byte private and public keys.
 * @typedef {{ privateKey: Uint8Array, publicKey: Uint8Array }} X25519KeyPair
 */

/**
 * The pair of a 32-byte private key.
 * @param {Uint8Array} privateKey
 * @returns {Promise<X25519KeyPair>}
 */
export async function x25519KeyPair(privateKey) {
  if (privateKey.length !== 32) throw new Error("an X25519 private key is 32 bytes");
  const pkcs8 = new Uint8Array(48);
  pkcs8.set(pkcs8Prefix);
  pkcs8.set(privateKey, 16);
  const key = await subtle.importKey("pkcs8", pkcs8, { name: "X25519" }, true, ["deriveBits"]);
  const jwk = await subtle.exportKey("jwk", key);
  const publicKey = fromBase64URL(jwk.x ?? "");
  if (publicKey === null || publicKey.length !== 32) throw new Error("WebCrypto gave no X25519 public key");
  return { privateKey, publicKey };
}

/**
 * A fresh X25519 key pair.
 * @returns {Promise<X25519KeyPair>}
 */
export async function generateX25519KeyPair() {
  return x25519KeyPair(randomBytes(32));
}

/**
 * The 32-byte X25519 secret of a private key and a peer's public key; null when the peer's key
 * is not 32 bytes or gives the all-zero secret (a low-order point).
 * @param {Uint8Array} privateKey
 * @param {Uint8Array} peerPublicKey
 * @returns {Promise<Uint8Array | null>}
 */
export async function x25519SharedSecret(privateKey, peerPublicKey) {
  if (peerPublicKey.length !== 32) return null;
  const pkcs8 = new Uint8Array(48);
  pkcs8.set(pkcs8Prefix);
  pkcs8.set(privateKey, 16);
  try {
    const key = await subtle.importKey("pkcs8", pkcs8, { name: "X25519" }, false, ["deriveBits"]);
    const peer = await subtle.importKey("raw", peerPublicKey, { name: "X25519" }, false, []);
    const secret = new Uint8Array(await subtle.deriveBits({ name: "X25519", public: peer }, key, 256));
    return secret.some((b) => b !== 0) ? secret : null;
  } catch {
    return null;
  }
}
