// @ts-check
/**
 * What the replica reports, said in words: the web client's sentences (phrases.js is the twin of
 * the CLI's Phrases.swift; the conformance vectors pin the add's).
 */

/**
 * What a phrase needs of an add's result (replica.js's AddResult has more).
 * @typedef {{ item: { name: string, quantity: string | null }, outcome: string, quantityChanged: boolean }} AddResult
 */

/**
 * "1 change", "3 changes" (changes as a person counts them: one per item; Phrases.changes).
 * @param {number} n
 */
export function changes(n) {
  return n === 1 ? "1 change" : `${n} changes`;
}

/**
 * What an add says, phrase by phrase (Phrases.added in Swift, pinned by the conformance
 * vectors): "Added milk (2), bread", "Brought back eggs", "milk: now 3", "milk is
 * already on the list".
 * @param {AddResult[]} results
 * @returns {string[]}
 */
export function addPhrases(results) {
  const added = results.filter((r) => r.outcome === "added").map((r) => r.item.name + (r.item.quantity !== null ? ` (${r.item.quantity})` : ""));
  const phrases = added.length > 0 ? [`Added ${added.join(", ")}`] : [];
  for (const { item, outcome, quantityChanged } of results) {
    if (outcome === "added") continue;
    if (outcome === "restored" || outcome === "unchecked") {
      phrases.push(`Brought back ${item.name}` + (quantityChanged ? ` (quantity now ${item.quantity ?? ""})` : ""));
    } else {
      phrases.push(quantityChanged ? `${item.name}: now ${item.quantity ?? ""}` : `${item.name} is already on the list`);
    }
  }
  return phrases;
}

/**
 * The toast's sentence for an add: its phrases joined.
 * @param {AddResult[]} results
 */
export function addMessage(results) {
  return addPhrases(results).join("; ");
}

/**
 * What a step of the undo journal did, as the replica records it (the words are said here, by
 * `didPhrase`): a string is a step stored by an earlier version of the page, already in words.
 * @typedef {{ did: "renamedList", title: string }
 *   | { did: "changedAisles" }
 *   | { did: "archived", archived: boolean }
 *   | { did: "language", language: string }
 *   | { did: "added", results: AddResult[] }
 *   | { did: "checked", name: string, checked: boolean }
 *   | { did: "removed", name: string }
 *   | { did: "cleared", count: number }
 *   | { did: "removedTheirs", count: number }
 *   | { did: "changed", field: string, name: string }
 *   | { did: "renamed", from: string, to: string }
 *   | string} Did
 */

/**
 * A step of the undo journal in words: "Checked Milk", "Added milk (2), bread", "Cleared 3
 * checked items" (the toast says "Undid: …" before it).
 * @param {Did} step
 * @returns {string}
 */
export function didPhrase(step) {
  if (typeof step === "string") return step;
  const items = (/** @type {number} */ n) => `${n} item${n === 1 ? "" : "s"}`;
  switch (step.did) {
    case "renamedList": return `Renamed the list to ${step.title}`;
    case "changedAisles": return "Changed the aisle order";
    case "archived": return step.archived ? "Archived the list" : "Unarchived the list";
    case "language": return `Named the aisles in ${step.language}`;
    case "added": return addMessage(step.results);
    case "checked": return `${step.checked ? "Checked" : "Unchecked"} ${step.name}`;
    case "removed": return `Removed ${step.name}`;
    case "cleared": return `Cleared ${step.count} checked item${step.count === 1 ? "" : "s"}`;
    case "removedTheirs": return `Removed ${items(step.count)} another member added`;
    case "changed": return `Changed the ${step.field} of ${step.name}`;
    case "renamed": return `Renamed ${step.from} to ${step.to}`;
  }
}

/**
 * "1 item", "12 items" (Phrases.items).
 * @param {number} n
 */
export function itemCount(n) {
  return n === 1 ? "1 item" : `${n} items`;
}

/**
 * What other devices did since the list was last shown, a line per person and kind
 * (Phrases.news in Swift, pinned by the conformance vectors): "anna added 3 items", "anna added
 * milk", "bob changed 2 items".
 * @param {{ who: string, added: boolean, name: string }[]} entries
 * @returns {string[]}
 */
export function newsPhrases(entries) {
  /** @type {{ who: string, added: boolean, names: string[] }[]} */
  const groups = [];
  for (const entry of entries) {
    const group = groups.find((g) => g.who === entry.who && g.added === entry.added);
    if (group) group.names.push(entry.name);
    else groups.push({ who: entry.who, added: entry.added, names: [entry.name] });
  }
  const rank = (/** @type {{ who: string, added: boolean }} */ g) => (g.added ? 0 : 1);
  groups.sort((a, b) => rank(a) - rank(b) || (a.who < b.who ? -1 : a.who > b.who ? 1 : 0));
  return groups.map((g) => `${g.who} ${g.added ? "added" : "changed"} ${g.names.length === 1 ? g.names[0] : itemCount(g.names.length)}`);
}

/**
 * A write of this device that another member's later one replaced, said once (Phrases.lostWrite
 * in Swift, pinned by the conformance vectors): "bob unchecked milk after you checked it".
 * @param {string} who
 * @param {string} name
 * @param {string} field
 * @param {import("./ops.js").Value} mine
 * @param {import("./ops.js").Value} theirs
 */
export function lostWrite(who, name, field, mine, theirs) {
  const quoted = (/** @type {import("./ops.js").Value} */ v) => (typeof v === "string" ? `'${v}'` : "nothing");
  switch (field) {
    case "checked":
      return theirs === true ? `${who} checked ${name} after you unchecked it` : `${who} unchecked ${name} after you checked it`;
    case "deleted":
      return theirs === true ? `${who} removed ${name} after you added it back` : `${who} brought back ${name} after you removed it`;
    case "name":
      return `${who} renamed ${quoted(mine)} to ${quoted(theirs)} after you named it`;
    case "title":
      return `${who} renamed the list ${quoted(theirs)} after you named it ${quoted(mine)}`;
    case "quantity":
    case "note":
    case "category": {
      const what = field === "category" ? "aisle" : field;
      if (theirs === null) return `${who} cleared the ${what} of ${name} after you set ${quoted(mine)}`;
      return `${who} set the ${what} of ${name} to ${quoted(theirs)} after you ${mine === null ? "cleared it" : `set ${quoted(mine)}`}`;
    }
    case "shops":
      return `${who} changed the shops of ${name} after you did`;
    case "places":
      return `${who} moved ${name} to another aisle after you did`;
    case "dismissed":
      return `${who} changed whether ${name} is a usual after you did`;
    case "shop":
    case "shopRemoved":
    case "order":
    case "pinned":
    case "learned":
      return `${who} changed a shop after you did`;
    default:
      return `${who} changed the list's ${field} after you did`;
  }
}

/**
 * How often a usual is bought (Phrases.every): "every day", "every 6 days", "every week",
 * "every 2 weeks", from an interval in milliseconds rounded to whole days.
 * @param {number} interval
 */
export function every(interval) {
  const days = Math.max(1, Math.round(interval / 86400000));
  if (days === 1) return "every day";
  if (days === 7) return "every week";
  if (days % 7 === 0) return `every ${days / 7} weeks`;
  return `every ${days} days`;
}
