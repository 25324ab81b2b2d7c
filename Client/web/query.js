// A parsed query (BasketSearch's Query.swift): words, "phrases", ^anchors, -exclusions, is: and
// in: filters; and how characters are counted, as Swift counts them.
import { normalize } from "./key.js";
import { utf8 } from "./search-bytes.js";
/**
 * How many characters (grapheme clusters) `text` has; without a combining mark or a character
 * beyond U+02FF, as many as its UTF-16 units (most names: no segmenter needed).
 * @param {string} text
 */
export function characterCount(text) {
  return /^[\u0000-\u02ff]*$/.test(text) ? text.length : graphemes(text).length;
}

/** @type {Intl.Segmenter | undefined} */
let segmenter;
/**
 * The characters (grapheme clusters) of a string.
 * @param {string} text
 */
export function graphemes(text) {
  // Printable characters up to U+02FF (Latin without combining marks: most queries): each
  // character is one grapheme, and the segmenter is not needed.
  if (/^[\u0020-\u02ff]*$/.test(text)) return Array.from(text);
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

const whiteSpace = /^\p{White_Space}/u;
const isWhiteSpaceChar = (/** @type {string} */ char) => whiteSpace.test(char);

/** A parsed query (BasketSearch's Query). */
export class Query {
  /** @param {string} text */
  constructor(text) {
    /** @type {string[]} */
    const free = [];
    /** @type {Uint8Array[]} the free words' keys */
    this.words = [];
    /** @type {Uint8Array[]} "quoted phrases", each found whole */
    this.phrases = [];
    /** @type {Uint8Array[]} ^anchors: the key starts with each */
    this.anchors = [];
    /** @type {Uint8Array[]} -exclusions */
    this.excluded = [];
    /** @type {"checked" | "unchecked" | null} is:checked, is:unchecked */
    this.state = null;
    /** @type {Uint8Array | null} in:category */
    this.category = null;
    const chars = graphemes(text);
    let i = 0;
    while (i < chars.length) {
      const first = chars[i];
      if (isWhiteSpaceChar(first)) {
        i += 1;
        continue;
      }
      if (first === '"') {
        let end = i + 1;
        while (end < chars.length && chars[end] !== '"') end += 1;
        const phrase = chars.slice(i + 1, end).join("");
        const folded = utf8.encode(normalize(phrase));
        if (folded.length > 0) {
          this.phrases.push(folded);
          free.push(phrase);
        }
        i = end < chars.length ? end + 1 : end;
        continue;
      }
      let end = i;
      while (end < chars.length && !isWhiteSpaceChar(chars[end])) end += 1;
      const tokenChars = chars.slice(i, end);
      const token = tokenChars.join("");
      i = end;
      const lower = token.toLowerCase();
      if (lower === "is:checked" || lower === "is:done") {
        this.state = "checked";
        continue;
      }
      if (lower === "is:unchecked" || lower === "is:todo") {
        this.state = "unchecked";
        continue;
      }
      if (lower.startsWith("in:") && tokenChars.length > 3) {
        const folded = utf8.encode(normalize(tokenChars.slice(3).join("")));
        if (folded.length > 0) {
          this.category = folded;
          continue;
        }
      }
      if (tokenChars.length > 1 && (token.startsWith("-") || token.startsWith("!"))) {
        const folded = utf8.encode(normalize(tokenChars.slice(1).join("")));
        if (folded.length > 0) this.excluded.push(folded);
        continue;
      }
      if (tokenChars.length > 1 && token.startsWith("^")) {
        const folded = utf8.encode(normalize(tokenChars.slice(1).join("")));
        if (folded.length > 0) {
          this.anchors.push(folded);
          free.push(tokenChars.slice(1).join(""));
        }
        continue;
      }
      free.push(token);
      for (const word of normalize(token).split(" ")) if (word !== "") this.words.push(utf8.encode(word));
    }
    this.freeText = free.join(" ");
    this.keyText = normalize(this.freeText);
    this.key = utf8.encode(this.keyText);
  }

  get hasText() {
    return this.words.length > 0 || this.phrases.length > 0 || this.anchors.length > 0;
  }

  get hasFilters() {
    return this.state !== null || this.category !== null || this.phrases.length > 0 || this.anchors.length > 0 || this.excluded.length > 0;
  }
}
