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
