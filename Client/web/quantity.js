// Amounts as a shopping list writes them ("2", "500 g", "1,5 kg", "1 1/2 cups", "½", "3本"), and
// what adding one to another makes (BasketCore's Quantity, rule for rule; the conformance vectors
// hold them together).

/** The longest quantity a sum makes; past it the added amount replaces the old one (Quantity.maxSumBytes). */
const MAX_SUM_BYTES = 200;

/** The vulgar fractions a quantity may start with: [numerator, denominator]. @type {Map<string, [number, number]>} */
const VULGAR = new Map([
  ["½", [1, 2]], ["⅓", [1, 3]], ["⅔", [2, 3]], ["¼", [1, 4]], ["¾", [3, 4]], ["⅕", [1, 5]], ["⅖", [2, 5]], ["⅗", [3, 5]],
  ["⅘", [4, 5]], ["⅙", [1, 6]], ["⅚", [5, 6]], ["⅛", [1, 8]], ["⅜", [3, 8]], ["⅝", [5, 8]], ["⅞", [7, 8]],
]);

/**
 * A non-negative fraction in lowest terms, in BigInt (Quantity.Fraction; its Int64 limits are
 * checked by `fits`).
 * @typedef {{ n: bigint, d: bigint }} Fraction
 */

/**
 * How a number was written: "whole", "fraction", or a decimal with its separator.
 * @typedef {{ kind: "whole" } | { kind: "fraction" } | { kind: "decimal", separator: string }} Style
 */

/**
 * A number and its unit (Quantity.Amount).
 * @typedef {{ value: Fraction, unit: string, style: Style, glued: boolean }} Amount
 */

const INT64_MAX = (1n << 63n) - 1n;

/**
 * @param {bigint} a
 * @param {bigint} b
 */
function gcd(a, b) {
  while (b !== 0n) [a, b] = [b, a % b];
  return a > 0n ? a : 1n;
}

/**
 * @param {bigint} n
 * @param {bigint} d
 * @returns {Fraction | null}
 */
function fraction(n, d) {
  if (d <= 0n || n < 0n) return null;
  const g = gcd(n, d);
  return { n: n / g, d: d / g };
}

/**
 * The sum, null where the Swift's 64-bit arithmetic would overflow (Fraction.adding).
 * @param {Fraction} a
 * @param {Fraction} b
 * @returns {Fraction | null}
 */
function add(a, b) {
  const left = a.n * b.d;
  const right = b.n * a.d;
  const bottom = a.d * b.d;
  if (left > INT64_MAX || right > INT64_MAX || left + right > INT64_MAX || bottom > INT64_MAX) return null;
  return fraction(left + right, bottom);
}

/** @param {string} c */
const isDigit = (c) => c.length === 1 && c >= "0" && c <= "9";

/**
 * Reads a number at the start of `chars` from `at` (Amount.number).
 * @param {string[]} chars
 * @param {number} at
 * @returns {{ value: Fraction, style: Style, end: number } | null}
 */
function number(chars, at) {
  const vulgar = VULGAR.get(chars[at] ?? "");
  if (vulgar !== undefined) {
    const value = fraction(BigInt(vulgar[0]), BigInt(vulgar[1]));
    return value === null ? null : { value, style: { kind: "fraction" }, end: at + 1 };
  }
  let end = at;
  while (end < chars.length && isDigit(chars[end])) end++;
  if (end === at || end - at > 9) return null;
  const whole = BigInt(chars.slice(at, end).join(""));
  const next = chars[end];
  if (next === "." || next === ",") {
    let stop = end + 1;
    while (stop < chars.length && isDigit(chars[stop])) stop++;
    const count = stop - end - 1;
    if (count > 0 && count <= 6) {
      const scale = 10n ** BigInt(count);
      const value = fraction(whole * scale + BigInt(chars.slice(end + 1, stop).join("")), scale);
      return value === null ? null : { value, style: { kind: "decimal", separator: next }, end: stop };
    }
  }
  if (next === "/") {
    let stop = end + 1;
    while (stop < chars.length && isDigit(chars[stop])) stop++;
    const count = stop - end - 1;
    if (count > 0 && count <= 6) {
      const d = BigInt(chars.slice(end + 1, stop).join(""));
      if (d > 0n) {
        const value = fraction(whole, d);
        return value === null ? null : { value, style: { kind: "fraction" }, end: stop };
      }
    }
  }
  const glued = VULGAR.get(next ?? "");
  if (glued !== undefined) {
    const whole1 = fraction(whole, 1n);
    const part = fraction(BigInt(glued[0]), BigInt(glued[1]));
    const sum = whole1 === null || part === null ? null : add(whole1, part);
    if (sum !== null) return { value: sum, style: { kind: "fraction" }, end: end + 1 };
  }
  const value = fraction(whole, 1n);
  return value === null ? null : { value, style: { kind: "whole" }, end };
}

/**
 * The text without spaces around it.
 * @param {string} text
 */
const trimSpaces = (text) => text.replace(/^ +| +$/g, "");

/**
 * The amount `text` is, null when it does not start with a number (Amount.init).
 * @param {string} text
 * @returns {Amount | null}
 */
function amount(text) {
  const chars = [...trimSpaces(text)];
  const first = number(chars, 0);
  if (first === null) return null;
  let { value, style, end } = first;
  if (style.kind === "whole") {
    let after = end;
    while (chars[after] === " ") after++;
    const part = number(chars, after);
    if (part !== null && part.style.kind === "fraction" && part.value.n < part.value.d) {
      const sum = add(value, part.value);
      if (sum !== null) {
        value = sum;
        style = { kind: "fraction" };
        end = part.end;
      }
    }
  }
  const rest = chars.slice(end).join("");
  const unit = trimSpaces(rest);
  return { value, unit, style, glued: unit !== "" && !rest.startsWith(" ") };
}

/**
 * The style of a sum: decimals win over fractions, fractions over whole numbers (Style.merged).
 * @param {Style} a
 * @param {Style} b
 * @returns {Style}
 */
function merged(a, b) {
  if (a.kind === "decimal") return a;
  if (b.kind === "decimal") return b;
  return a.kind === "fraction" || b.kind === "fraction" ? { kind: "fraction" } : { kind: "whole" };
}

/**
 * Written in `style`: "3", "1,5" (at most three decimals), "1 1/2" (Fraction.written).
 * @param {Fraction} value
 * @param {Style} style
 */
function written(value, style) {
  const whole = value.n / value.d;
  const rest = value.n % value.d;
  if (rest === 0n) return String(whole);
  if (style.kind === "decimal" && rest <= INT64_MAX / 1000n - value.d) {
    const thousandths = (rest * 1000n + value.d / 2n) / value.d;
    if (thousandths >= 1000n) return String(whole + 1n);
    const digits = String(thousandths).padStart(3, "0").replace(/0+$/, "");
    return digits === "" ? String(whole) : `${whole}${style.separator}${digits}`;
  }
  return whole === 0n ? `${rest}/${value.d}` : `${whole} ${rest}/${value.d}`;
}

/**
 * @param {Amount} a
 */
function describe(a) {
  const n = written(a.value, a.style);
  return a.unit === "" ? n : a.glued ? n + a.unit : `${n} ${a.unit}`;
}

/**
 * The parts joined with " + ", null when that is too long (Quantity.joined).
 * @param {string[]} parts
 */
function joined(parts) {
  const text = parts.join(" + ");
  return new TextEncoder().encode(text).length <= MAX_SUM_BYTES ? text : null;
}

/**
 * `added` added to `existing`: amounts of the same unit (compared without case) are summed, an
 * amount of another unit or one that is not a number is kept beside the others, never converted
 * (Quantity.adding).
 * @param {string} added
 * @param {string} existing
 * @returns {string}
 */
export function adding(added, existing) {
  const parts = existing.split(" + ").filter((p) => p !== "");
  const fresh = amount(added);
  if (fresh === null) return joined([...parts, added]) ?? added;
  for (const [index, part] of parts.entries()) {
    const old = amount(part);
    if (old === null || old.unit.toLowerCase() !== fresh.unit.toLowerCase()) continue;
    const sum = add(old.value, fresh.value);
    if (sum === null) continue;
    const summed = [...parts];
    summed[index] = describe({ value: sum, unit: old.unit, style: merged(old.style, fresh.style), glued: old.glued });
    return joined(summed) ?? added;
  }
  return joined([...parts, added]) ?? added;
}
