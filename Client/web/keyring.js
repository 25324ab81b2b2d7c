// The keys of this device's encrypted lists, list by list (SealKeyring in BasketSeal, the
// Keyring protocol of BasketReplica): the replica keeps each list's keys as text in its meta
// record and loads them here when it opens; the sync seals and opens with them.
import { ListKeys, SealError } from "./seal.js";

export class SealKeyring {
  constructor() {
    /** @type {Map<string, ListKeys>} */
    this.keys = new Map();
  }

  /**
   * The keys of `list`; undefined for a plain list or one this device has no keys for.
   * @param {string} list
   */
  sealing(list) {
    return this.keys.get(list);
  }

  /**
   * Takes the keys `text` of `list` (kept "K1." text, or an invite's "k1." secret); epochs held
   * already stay. Throws a SealError when it is not keys of Basket's, or ("forged") keys of
   * another identity than the ones held (a list's identity key never changes).
   * @param {string} text
   * @param {string} list
   */
  async load(text, list) {
    let loaded = text.startsWith("k1.") ? await ListKeys.fromInviteSecret(list, text) : await ListKeys.fromStorageText(list, text);
    const held = this.keys.get(list)?.identity;
    if (held !== undefined && held.some((byte, i) => byte !== loaded.identity[i])) throw new SealError("forged", "keys of another identity");
    for (const [epoch, key] of this.keys.get(list)?.epochs ?? []) {
      if (!loaded.epochs.has(epoch)) loaded = await loaded.adding(epoch, key);
    }
    this.keys.set(list, loaded);
  }

  /**
   * Makes keys for a new list, takes them, and returns their text to keep.
   * @param {string} list
   */
  async makeKeys(list) {
    const made = await ListKeys.generate(list);
    this.keys.set(list, made);
    return made.storageText;
  }
}
