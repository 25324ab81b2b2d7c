// Snapshots of encrypted lists (Snapshot.swift in BasketSeal; docs/encryption.md, "Snapshots"):
// the list's state at a cursor of the server's log, gzipped, padded to 4 KiB and sealed as one
// text, so a device new to a long-lived list opens one text and pulls the tail after it.
import { readAtMost } from "./bounded.js";
import { fromHex } from "./sha256.js";
import { decode, encode } from "./ops.js";
import { aesGCMOpen, aesGCMSeal, hkdfSHA256, randomBytes } from "./platform-crypto.js";
import { parseSnapshot, toBase64URL } from "./sealed.js";
import { ListKeys, SealError } from "./seal.js";

const utf8 = new TextEncoder();

/**
 * A byte stream's transform, as CompressionStream and DecompressionStream are (the type checker's
 * library here predates them).
 * @typedef {{ readable: ReadableStream<Uint8Array>, writable: WritableStream<Uint8Array> }} ByteTransform
 */
/** @type {{ Compression: new (format: string) => ByteTransform, Decompression: new (format: string) => ByteTransform }} */
const streams = {
  Compression: /** @type {any} */ (globalThis).CompressionStream,
  Decompression: /** @type {any} */ (globalThis).DecompressionStream,
};

/** A snapshot's padded plaintext is a multiple of this many bytes (ListKeys.snapshotBucket). */
export const SNAPSHOT_BUCKET = 4096;
/** The most bytes a snapshot's operations may take uncompressed (ListKeys.maxSnapshotBytes). */
export const MAX_SNAPSHOT_OPS_BYTES = 64 << 20;

/**
 * The associated data of a snapshot of `list` at `cursor` under `epoch`:
 * "basket-snapshot-v1" 0x00, the list's 16 bytes, the cursor's 8 and the epoch's 4 (big-endian).
 * @param {string} list
 * @param {number} cursor
 * @param {number} epoch
 */
function snapshotAssociatedData(list, cursor, epoch) {
  const head = utf8.encode("basket-snapshot-v1\0");
  const out = new Uint8Array(head.length + 16 + 12);
  out.set(head);
  out.set(fromHex(list), head.length);
  const view = new DataView(out.buffer, head.length + 16);
  view.setBigUint64(0, BigInt(cursor));
  view.setUint32(8, epoch);
  return out;
}

/**
 * The snapshot key of `epoch`, when `keys` hold it.
 * @param {ListKeys} keys
 * @param {number} epoch
 */
async function snapshotKey(keys, epoch) {
  const key = keys.epochs.get(epoch);
  return key === undefined ? null : hkdfSHA256(key, fromHex(keys.list), utf8.encode("basket-snapshots-v1"), 32);
}

/**
 * `bytes` through a CompressionStream or DecompressionStream, at most `limit` bytes out (null past it).
 * @param {Uint8Array} bytes
 * @param {ByteTransform} stream
 * @param {number} limit
 */
async function through(bytes, stream, limit) {
  const writer = stream.writable.getWriter();
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  return readAtMost(stream.readable, limit);
}

/**
 * The list's `ops` (its state at `cursor` of the server's log) sealed under the current epoch as
 * one text (ListKeys.sealSnapshot); `nonce`: 12 bytes, random unless given.
 * @param {ListKeys} keys
 * @param {readonly import("./ops.js").Op[]} ops
 * @param {number} cursor
 * @param {Uint8Array} [nonce]
 */
export async function sealSnapshot(keys, ops, cursor, nonce = randomBytes(12)) {
  const zipped = /** @type {Uint8Array} */ (await through(utf8.encode(encode(ops, true)), new streams.Compression("gzip"), Infinity));
  const length = Math.ceil((4 + zipped.length) / SNAPSHOT_BUCKET) * SNAPSHOT_BUCKET;
  const padded = new Uint8Array(length);
  new DataView(padded.buffer).setUint32(0, zipped.length);
  padded.set(zipped, 4);
  const key = /** @type {Uint8Array} */ (await snapshotKey(keys, keys.current));
  const sealed = await aesGCMSeal(padded, key, nonce, snapshotAssociatedData(keys.list, cursor, keys.current));
  const payload = new Uint8Array(12 + sealed.length);
  payload.set(nonce);
  payload.set(sealed, 12);
  return `n1.${keys.current}.` + toBase64URL(payload);
}

/**
 * The operations of a snapshot of the list at `cursor`, each validated (ListKeys.openSnapshot);
 * throws a SealError when it is no snapshot, its epoch is unknown here, it does not open for this
 * list at this cursor, or it opens to what is not the list's operations.
 * @param {ListKeys} keys
 * @param {string} text
 * @param {number} cursor
 */
export async function openSnapshot(keys, text, cursor) {
  const parsed = parseSnapshot(text);
  if (parsed === null) throw new SealError("notSealed", "not a snapshot");
  const key = await snapshotKey(keys, parsed.epoch);
  if (key === null) throw new SealError("unknownEpoch", `sealed under key ${parsed.epoch}, which this device does not have`);
  const padded = await aesGCMOpen(parsed.payload.subarray(12), key, parsed.payload.subarray(0, 12), snapshotAssociatedData(keys.list, cursor, parsed.epoch));
  if (padded === null) throw new SealError("forged", "does not open for this list at this cursor");
  const length = padded.length >= 4 ? new DataView(padded.buffer, padded.byteOffset).getUint32(0) : -1;
  if (length < 0 || length > padded.length - 4) throw new SealError("malformed", "opens to no snapshot");
  let encoding;
  try {
    encoding = await through(padded.subarray(4, 4 + length), new streams.Decompression("gzip"), MAX_SNAPSHOT_OPS_BYTES);
  } catch {
    encoding = null;
  }
  if (encoding === null) throw new SealError("malformed", "opens to no snapshot");
  try {
    const ops = decode(new TextDecoder("utf-8", { fatal: true }).decode(encoding));
    if (ops.every((op) => op.list === keys.list)) return ops;
  } catch {
    // below
  }
  throw new SealError("malformed", "opens to what is not the list's operations");
}
