// Bytes read from a stream up to a bound: a server's answer (api.js), a snapshot inflated
// (snapshot.js). What is untrusted is never read whole before it is measured.

/**
 * Everything `stream` yields, or null as soon as it passes `limit` bytes (the rest is not read).
 * @param {ReadableStream<Uint8Array>} stream
 * @param {number} limit
 * @returns {Promise<Uint8Array | null>}
 */
export async function readAtMost(stream, limit) {
  const reader = stream.getReader();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}
