/// A parsed TOML value with the line it starts on (1-based), so every config problem can name its line.
public struct TOMLValue: Sendable, Equatable {
    public indirect enum Kind: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case boolean(Bool)
        case array([TOMLValue])
        case table(TOMLTable)
        /// A value that did not parse: its syntax error is already reported (`TOML.parseAll`), so the
        /// key counts as present and nothing else is said about it.
        case invalid
    }

    public var kind: Kind
    public var line: Int

    public init(_ kind: Kind, line: Int) {
        self.kind = kind
        self.line = line
    }

    /// "string", "integer", ... for "expected X, found Y" messages.
    public var typeName: String {
        switch kind {
        case .string: "string"
        case .integer: "integer"
        case .boolean: "boolean"
        case .array: "array"
        case .table: "table"
        case .invalid: "an invalid value"
        }
    }

    public var isInvalid: Bool { kind == .invalid }

    public var string: String? { if case .string(let s) = kind { s } else { nil } }
    public var integer: Int64? { if case .integer(let i) = kind { i } else { nil } }
    public var boolean: Bool? { if case .boolean(let b) = kind { b } else { nil } }
    public var array: [TOMLValue]? { if case .array(let a) = kind { a } else { nil } }
    public var table: TOMLTable? { if case .table(let t) = kind { t } else { nil } }
}

/// A TOML table: its entries in file order, each with the line of its key.
public struct TOMLTable: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var key: String
        /// Line of the key (for an array of tables: of its first `[[header]]`).
        public var line: Int
        public var value: TOMLValue
    }

    public var entries: [Entry]
    /// Line of the `[header]` (or of the inline table, or 1 for the root).
    public var line: Int

    public init(entries: [Entry] = [], line: Int) {
        self.entries = entries
        self.line = line
    }

    public subscript(key: String) -> Entry? { entries.first { $0.key == key } }
}

/// A syntax error, or something TOML allows that our configuration does not need.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}
