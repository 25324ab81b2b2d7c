// @ts-check
/**
 * What other devices did, on the phone (NewsLines.swift's twin): the items of a list another
 * member's device added or changed since the list was last shown here, marked on their rows
 * ("new: anna") and said in one line per person ("anna added 3 items"); and this device's writes
 * another member's later one replaced, told once in a quiet message ("bob unchecked milk after
 * you checked it"). Who a device is comes from the members answer, asked when one is unknown.
 */
import { ROUTES, request } from "./api.js";
import { lostWrite, newsPhrases } from "./phrases.js";

export class News {
  /**
   * @param {import("./replica.js").Replica} replica
   */
  constructor(replica) {
    this.replica = replica;
    /** @type {Map<string, Map<string, string>>} list → replica id → member */
    this.members = new Map();
  }

  /**
   * Who each of `replicas` is on `list`: a member's name, "you" for this account's other
   * devices, "someone" when the server cannot say.
   * @param {string} list
   * @param {string[]} replicas
   * @returns {Promise<Map<string, string>>}
   */
  async names(list, replicas) {
    let known = this.members.get(list);
    if (known === undefined || replicas.some((r) => !known?.has(r))) {
      try {
        const answer = await request(ROUTES.members, [list], { token: this.replica.meta.account?.token });
        known = new Map();
        for (const member of Array.isArray(answer?.members) ? answer.members.slice(0, 10000) : []) {
          if (typeof member?.account !== "string") continue;
          for (const replica of Array.isArray(member.replicas) ? member.replicas.slice(0, 100) : []) {
            if (typeof replica === "string") known.set(replica, member.account.slice(0, 64));
          }
        }
        this.members.set(list, known);
      } catch {
        known ??= new Map();
      }
    }
    const me = this.replica.meta.account?.name;
    return new Map(replicas.map((r) => {
      const name = known?.get(r);
      return [r, name === undefined ? "someone" : name === me ? "you" : name];
    }));
  }

  /**
   * The list's news, taken (the list is shown): a mark per item and the lines that say them.
   * @param {string} list
   * @returns {Promise<{ marks: Map<string, string>, lines: string[] } | null>}
   */
  async take(list) {
    const entries = this.replica.takeNews(list);
    if (entries.length === 0) return null;
    const who = await this.names(list, [...new Set(entries.map((e) => e.replica))]);
    const state = this.replica.state(list);
    /** @type {Map<string, string>} */
    const marks = new Map();
    /** @type {{ who: string, added: boolean, name: string }[]} */
    const said = [];
    for (const entry of entries) {
      const item = state?.item(entry.item);
      if (item === undefined || item.deleted) continue;
      const name = who.get(entry.replica) ?? "someone";
      marks.set(entry.item, `${entry.added ? "new" : "changed"}: ${name}`);
      said.push({ who: name, added: entry.added, name: item.name });
    }
    return { marks, lines: newsPhrases(said) };
  }

  /**
   * This device's writes others replaced since last asked, in words (each told once).
   * @returns {Promise<string[]>}
   */
  async lost() {
    const lost = this.replica.takeLostWrites();
    /** @type {string[]} */
    const lines = [];
    for (const write of lost) {
      const who = (await this.names(write.list, [write.replica])).get(write.replica) ?? "someone";
      const state = this.replica.state(write.list);
      const name = write.item === "-" ? state?.info.title ?? "" : state?.item(write.item)?.name ?? "";
      lines.push(lostWrite(who, name, write.field, write.mine, write.theirs));
    }
    return lines;
  }
}
