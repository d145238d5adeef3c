/// Assembles `[table]`, `[[array.of.tables]]` and dotted keys into one tree, enforcing TOML's rules on
/// redefinition (a table defined twice, a key defined twice, extending an inline table or a value).
/// Reference nodes while parsing, converted into value types (`TOMLTable`) at the end.
final class TOMLDocument {
    final class Table {
        var order: [String] = []
        var children: [String: Child] = [:]
        var keyLines: [String: Int] = [:]
        let line: Int
        /// Defined by its own `[header]` (a second one is an error); implicit tables may be defined later.
        var explicit: Bool
        /// Inline tables and tables made by dotted keys can't be reopened by a header.
        var sealed: Bool

        init(line: Int, explicit: Bool, sealed: Bool = false) {
            self.line = line
            self.explicit = explicit
            self.sealed = sealed
        }

        func insert(_ key: String, _ child: Child, line: Int) {
            order.append(key)
            children[key] = child
            keyLines[key] = line
        }
    }

    enum Child {
        case value(TOMLValue)
        case table(Table)
        case tables([Table])
    }

    let root = Table(line: 1, explicit: true)
    private(set) var current: Table

    init() { current = root }

    /// `[a.b.c]`
    func openTable(_ path: [String], line: Int) throws(TOMLError) {
        let parent = try descend(path.dropLast(), line: line)
        let key = path[path.count - 1]
        switch parent.children[key] {
        case nil:
            let table = Table(line: line, explicit: true)
            parent.insert(key, .table(table), line: line)
            current = table
        case .table(let table) where !table.explicit && !table.sealed:
            table.explicit = true
            current = table
        case .table(let table):
            throw TOMLError(line: line, message: "table [\(path.joined(separator: "."))] is already defined (line \(table.line))")
        case .tables, .value:
            throw TOMLError(line: line, message: "[\(path.joined(separator: "."))]: \(key) is already defined as a value (line \(parent.keyLines[key] ?? 0))")
        }
    }

    /// `[[a.b]]`
    func appendTable(_ path: [String], line: Int) throws(TOMLError) {
        let parent = try descend(path.dropLast(), line: line)
        let key = path[path.count - 1]
        let table = Table(line: line, explicit: true)
        switch parent.children[key] {
        case nil:
            parent.insert(key, .tables([table]), line: line)
        case .tables(let tables):
            parent.children[key] = .tables(tables + [table])
        case .table, .value:
            throw TOMLError(line: line, message: "[[\(path.joined(separator: "."))]]: \(key) is already defined as a table or value (line \(parent.keyLines[key] ?? 0))")
        }
        current = table
    }

    /// `a.b.c = value` in the current table.
    func assign(_ path: [String], _ value: TOMLValue, line: Int) throws(TOMLError) {
        var table = current
        for key in path.dropLast() {
            switch table.children[key] {
            case nil:
                let child = Table(line: line, explicit: false, sealed: true)
                table.insert(key, .table(child), line: line)
                table = child
            case .table(let child) where child.sealed && !child.explicit:
                table = child
            default:
                throw TOMLError(line: line, message: "\(path.joined(separator: ".")): \(key) is already defined (line \(table.keyLines[key] ?? 0))")
            }
        }
        let key = path[path.count - 1]
        if table.children[key] != nil {
            throw TOMLError(line: line, message: "\(path.joined(separator: ".")) is already defined (line \(table.keyLines[key] ?? 0))")
        }
        table.insert(key, .value(value), line: line)
    }

    /// Walks a header's leading keys, creating implicit tables; arrays of tables lead into their last element.
    private func descend(_ path: ArraySlice<String>, line: Int) throws(TOMLError) -> Table {
        var table = root
        for key in path {
            switch table.children[key] {
            case nil:
                let child = Table(line: line, explicit: false)
                table.insert(key, .table(child), line: line)
                table = child
            case .table(let child):
                table = child
            case .tables(let tables):
                table = tables[tables.count - 1]
            case .value:
                throw TOMLError(line: line, message: "\(key) is a value (line \(table.keyLines[key] ?? 0)), not a table")
            }
        }
        return table
    }

    func result() -> TOMLTable { Self.convert(root) }

    private static func convert(_ table: Table) -> TOMLTable {
        TOMLTable(entries: table.order.map { key in
            let line = table.keyLines[key] ?? table.line
            let value: TOMLValue
            switch table.children[key]! {
            case .value(let v): value = v
            case .table(let t): value = TOMLValue(.table(convert(t)), line: t.line)
            case .tables(let ts): value = TOMLValue(.array(ts.map { TOMLValue(.table(convert($0)), line: $0.line) }), line: line)
            }
            return TOMLTable.Entry(key: key, line: line, value: value)
        }, line: table.line)
    }
}
