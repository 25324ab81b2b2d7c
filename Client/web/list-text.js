// A list as text to copy or share (the CLI's ListText, held to it by the conformance vectors): the
// items to buy, by aisle in the list's order, each with its quantity and note.
import { groupByAisle } from "./aisle-group.js";

/** The heading of the items without an aisle (ListText.otherAisle). */
export const OTHER_AISLE = "Other";

/**
 * @typedef {{ id: string, name: string, checked: boolean, deleted?: boolean, quantity: string | null,
 *   note: string | null, category: string | null }} TextItem
 */

/**
 * `items` of the list `title` (whose aisle order is `aisles`) as "text" or "markdown": what is to
 * buy, grouped as `basket ls` groups it; "Nothing to buy." when nothing is (ListText.render).
 * @param {string} title
 * @param {readonly TextItem[]} items
 * @param {readonly string[]} aisles
 * @param {"text" | "markdown"} format
 * @returns {string}
 */
export function render(title, items, aisles, format) {
  const toBuy = items.filter((i) => !i.checked && !i.deleted);
  const groups = groupByAisle(toBuy, aisles);
  const headed = groups.some((g) => g.category !== null);
  const lines = [format === "markdown" ? `# ${escaped(title)}` : title];
  if (toBuy.length === 0) lines.push("", "Nothing to buy.");
  // A blank line before each group; in Markdown, one after its heading too.
  for (const group of groups) {
    lines.push("");
    if (headed) {
      const heading = group.category ?? OTHER_AISLE;
      if (format === "markdown") lines.push(`## ${escaped(heading)}`, "");
      else lines.push(heading);
    }
    for (const item of group.items) lines.push(line(item, format));
  }
  return lines.join("\n") + "\n";
}

/**
 * One item: "- 2 milk — organic" ("- [ ] …" in Markdown; ListText.line).
 * @param {TextItem} item
 * @param {"text" | "markdown"} format
 */
function line(item, format) {
  let text = item.quantity === null ? "" : `${item.quantity} `;
  text += item.name;
  if (item.note !== null) text += ` — ${item.note}`;
  return format === "markdown" ? `- [ ] ${escaped(text)}` : `- ${text}`;
}

/**
 * `text` with the characters Markdown reads as marks escaped by a backslash (ListText.escaped).
 * @param {string} text
 */
function escaped(text) {
  return text.replace(/[\\`*_[\]<>#|~]/g, (c) => `\\${c}`);
}
