// Closeness (BasketSearch's Closeness.swift): how near a substring, typo or fuzzy match is,
// on the one scale the tiers past the strict ones are ranked by.
// Closeness (Closeness.swift).
export const LETTER = 16;
export const CONSECUTIVE = 6;
export const WORD_START = 8;
export const WHOLE_WORD = 8;
export const PER_COST_UNIT = 6;
export const ACROSS_SEPARATORS = 8;
export const COVERAGE = 64;

/**
 * @param {number} length
 * @param {number} cost
 * @param {boolean} start
 * @param {boolean} whole
 */
export function closeness(length, cost, start, whole) {
  return (
    LETTER * length + CONSECUTIVE * Math.max(0, length - 1) + (start ? WORD_START : 0) + (whole ? WHOLE_WORD : 0) - PER_COST_UNIT * cost
  );
}

/**
 * @param {number} matched
 * @param {number} letters
 */
export function covering(matched, letters) {
  return letters <= 0 ? COVERAGE : Math.trunc((COVERAGE * Math.min(matched, letters)) / letters);
}
