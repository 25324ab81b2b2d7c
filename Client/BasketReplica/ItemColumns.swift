import BasketCore
import SQLite

/// The winning values' columns of the `items` table: one per ``Field/itemFields`` entry, named
/// as the field (Schema.swift creates them; a test checks that every item field has its
/// column). Reads and the merge's row writes go through here, so a new item field is read and
/// written without another list of columns to keep in step.
enum ItemColumns {
    /// `name, checked, deleted, …`, for a SELECT, an INSERT or (prefixed) a join's column list.
    static func names(prefix: String = "") -> String {
        Field.itemFields.map { prefix + $0.rawValue }.joined(separator: ", ")
    }

    /// `name = ?3, checked = ?4, …`: the columns bound from parameter `first` on.
    static func assignments(from first: Int) -> String {
        Field.itemFields.enumerated().map { "\($1.rawValue) = ?\(first + $0)" }.joined(separator: ", ")
    }

    /// `?3, ?4, …`: one parameter per column from `first` on.
    static func parameters(from first: Int) -> String {
        Field.itemFields.indices.map { "?\(first + $0)" }.joined(separator: ", ")
    }

    /// Each field's place among the item columns, by ``Field/code`` (-1: a list field).
    private static let offsets: [Int32] = Field.allCases.map { field in
        Field.itemFields.firstIndex(of: field).map(Int32.init) ?? -1
    }

    /// The item in `row`: its id in column `id`, then the item columns in order from `id + 1`.
    static func item(from row: Row, id: Int32 = 0) -> Item {
        Item(id: ItemID(raw: ID128(row.blob128(id)))) { field in
            let column = id + 1 + offsets[Int(field.code)]
            switch field.kind {
            case .flag: return .bool(row.int64(column) != 0)
            case .text, .optionalText: return row.string(column).map(Value.text)
            }
        }
    }

    /// Binds a row's winning values from parameter `first` on; the list's own row (`isList`)
    /// leaves `name` NULL so that every "name IS NOT NULL" query sees items only.
    static func bind(_ value: (Field) -> Value?, isList: Bool, to statement: Statement, from first: Int32) throws {
        for (offset, field) in Field.itemFields.enumerated() {
            let index = first + Int32(offset)
            switch field.kind {
            case .flag: try statement.bind(value(field)?.boolValue == true ? 1 : 0, at: index)
            case .text, .optionalText:
                try statement.bind(isList && field == .name ? nil : value(field)?.textValue, at: index)
            }
        }
    }
}
