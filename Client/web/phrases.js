// @ts-check
/**
 * What the replica reports, said in words: the web client's sentences (phrases.js is the twin of
 * the CLI's Phrases.swift; the conformance vectors pin the add's).
 */

/** @typedef {import("./replica.js").AddResult} AddResult */

/**
 * "1 change", "3 changes" (changes as a person counts them: one per item; Phrases.changes).
 * @param {number} n
 */
export function changes(n) {
  return n === 1 ? "1 change" : `${n} changes`;
}

/**
 * What an add says, phrase by phrase (Phrases.added in Swift, pinned by the conformance
 * vectors): "Added milk (2), bread", "Brought back eggs", "milk: quantity now 3", "milk is
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
      phrases.push(quantityChanged ? `${item.name}: quantity now ${item.quantity ?? ""}` : `${item.name} is already on the list`);
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
