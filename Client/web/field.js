// The registers of a list and of an item, in one table (BasketCore's Field.swift): a field's wire
// code is its place here. Everything that walks an item's fields (a rename's copy, setField,
// undo, the state of a merge, the conformance vectors) walks ITEM_FIELDS, so a field added here
// is handled everywhere or fails the vectors' "fields" table.

/**
 * A register's name, as on the wire.
 * @typedef {"title" | "name" | "checked" | "deleted" | "quantity" | "note" | "category" | "aisles" | "archived" | "language" | "typed" | "shops" | "places" | "dismissed" | "shop" | "shopRemoved" | "order" | "pinned" | "learned"} Field
 */
/**
 * What a register holds: a boolean, text always there once written, or text or null.
 * @typedef {"flag" | "text" | "optionalText"} FieldKind
 */
/**
 * What a register belongs to: the list, an item or a shop (Field.Target).
 * @typedef {"list" | "item" | "shop"} FieldTarget
 */
/**
 * @typedef {{ name: Field, list: boolean, target: FieldTarget, kind: FieldKind, maxBytes: number, settable: boolean }} FieldInfo
 */

/** @type {readonly FieldInfo[]} Every register in wire order (Field.allCases). */
export const FIELD_TABLE = Object.freeze([
  { name: "title", list: true, target: "list", kind: "text", maxBytes: 2048, settable: false },
  { name: "name", list: false, target: "item", kind: "text", maxBytes: 2048, settable: false },
  { name: "checked", list: false, target: "item", kind: "flag", maxBytes: 0, settable: false },
  { name: "deleted", list: false, target: "item", kind: "flag", maxBytes: 0, settable: false },
  { name: "quantity", list: false, target: "item", kind: "optionalText", maxBytes: 256, settable: true },
  { name: "note", list: false, target: "item", kind: "optionalText", maxBytes: 4096, settable: true },
  { name: "category", list: false, target: "item", kind: "optionalText", maxBytes: 256, settable: true },
  { name: "aisles", list: true, target: "list", kind: "optionalText", maxBytes: 4096, settable: false },
  { name: "archived", list: true, target: "list", kind: "flag", maxBytes: 0, settable: false },
  { name: "language", list: true, target: "list", kind: "optionalText", maxBytes: 16, settable: false },
  { name: "typed", list: false, target: "item", kind: "optionalText", maxBytes: 2048, settable: false },
  { name: "shops", list: false, target: "item", kind: "optionalText", maxBytes: 1024, settable: false },
  { name: "places", list: false, target: "item", kind: "optionalText", maxBytes: 4096, settable: false },
  { name: "dismissed", list: false, target: "item", kind: "optionalText", maxBytes: 16, settable: false },
  { name: "shop", list: false, target: "shop", kind: "text", maxBytes: 256, settable: false },
  { name: "shopRemoved", list: false, target: "shop", kind: "flag", maxBytes: 0, settable: false },
  { name: "order", list: false, target: "shop", kind: "optionalText", maxBytes: 4096, settable: false },
  { name: "pinned", list: false, target: "shop", kind: "optionalText", maxBytes: 4096, settable: false },
  { name: "learned", list: false, target: "shop", kind: "optionalText", maxBytes: 4096, settable: false },
]);

/** @type {readonly Field[]} Fields in their wire order (Field.code). */
export const FIELDS = FIELD_TABLE.map((f) => f.name);

/** @type {readonly Field[]} An item's fields in wire order (Field.itemFields). */
export const ITEM_FIELDS = FIELD_TABLE.filter((f) => f.target === "item").map((f) => f.name);

/** @type {readonly Field[]} A shop's fields in wire order (Field.shopFields). */
export const SHOP_FIELDS = FIELD_TABLE.filter((f) => f.target === "shop").map((f) => f.name);

/** @type {readonly Field[]} The item fields a person sets or clears (Field.settableItemFields). */
export const SETTABLE_ITEM_FIELDS = FIELD_TABLE.filter((f) => f.target === "item" && f.kind === "optionalText" && f.settable).map((f) => f.name);

const byName = new Map(FIELD_TABLE.map((f) => [f.name, f]));

/**
 * The table's row for `name`; undefined for a name that is no field.
 * @param {string} name
 * @returns {FieldInfo | undefined}
 */
export function fieldInfo(name) {
  return byName.get(/** @type {Field} */ (name));
}

/**
 * A field's wire code (Field.code): its place in FIELD_TABLE; -1 for a name that is no field.
 * @param {string} name
 * @returns {number}
 */
export function fieldCode(name) {
  return FIELD_TABLE.findIndex((f) => f.name === name);
}

/**
 * The value a field holds before any write (Field.initialValue): false for a flag, null for text.
 * @param {string} field
 * @returns {boolean | null}
 */
export function initialValue(field) {
  return fieldInfo(field)?.kind === "flag" ? false : null;
}
