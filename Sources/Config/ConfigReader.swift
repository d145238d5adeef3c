/// Typed access to TOML tables that records a problem (with line and key) instead of failing, so one
/// pass reports everything wrong with a file.
struct ConfigReader {
    let file: String
    private(set) var problems: [ConfigProblem] = []

    init(file: String) {
        self.file = file
    }

    mutating func problem(_ line: Int?, _ key: String, _ message: String) {
        problems.append(ConfigProblem(file: file, line: line, key: key, message: message))
    }

    mutating func append(_ others: [ConfigProblem]) {
        problems += others
    }

    static func path(_ prefix: String, _ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    /// Reports every key of `table` not in `allowed`, suggesting a near miss.
    mutating func checkKeys(_ table: TOMLTable, prefix: String, allowed: [String]) {
        for entry in table.entries where !allowed.contains(entry.key) {
            let near = allowed.first { Self.isNearMiss(entry.key, $0) }
            let hint = near.map { " (did you mean \($0)?)" } ?? ""
            problem(entry.line, Self.path(prefix, entry.key), "unknown key\(hint)")
        }
    }

    mutating func string(_ table: TOMLTable, _ key: String, prefix: String) -> (value: String, line: Int)? {
        guard let entry = table[key], !entry.value.isInvalid else { return nil }
        guard let value = entry.value.string else {
            problem(entry.line, Self.path(prefix, key), "expected a string, found \(entry.value.typeName)")
            return nil
        }
        return (value, entry.line)
    }

    mutating func integer(_ table: TOMLTable, _ key: String, prefix: String, range: ClosedRange<Int64>, unit: String = "") -> (value: Int, line: Int)? {
        guard let entry = table[key], !entry.value.isInvalid else { return nil }
        guard let value = entry.value.integer else {
            problem(entry.line, Self.path(prefix, key), "expected an integer, found \(entry.value.typeName)")
            return nil
        }
        guard range.contains(value) else {
            problem(entry.line, Self.path(prefix, key), "\(value)\(unit) is out of range \(range.lowerBound)…\(range.upperBound)\(unit)")
            return nil
        }
        return (Int(value), entry.line)
    }

    mutating func boolean(_ table: TOMLTable, _ key: String, prefix: String) -> (value: Bool, line: Int)? {
        guard let entry = table[key], !entry.value.isInvalid else { return nil }
        guard let value = entry.value.boolean else {
            problem(entry.line, Self.path(prefix, key), "expected true or false, found \(entry.value.typeName)")
            return nil
        }
        return (value, entry.line)
    }

    mutating func table(_ table: TOMLTable, _ key: String, prefix: String) -> TOMLTable? {
        guard let entry = table[key], !entry.value.isInvalid else { return nil }
        guard let value = entry.value.table else {
            problem(entry.line, Self.path(prefix, key), "expected a table ([\(Self.path(prefix, key))]), found \(entry.value.typeName)")
            return nil
        }
        return value
    }

    /// An enum from its raw string, listing the valid names when it is not one.
    mutating func choice<E: RawRepresentable & CaseIterable>(_ table: TOMLTable, _ key: String, prefix: String, _: E.Type) -> (value: E, line: Int)? where E.RawValue == String {
        guard let (text, line) = string(table, key, prefix: prefix) else { return nil }
        guard let value = E(rawValue: text) else {
            problem(line, Self.path(prefix, key), "\"\(text)\" is not one of \(E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
            return nil
        }
        return (value, line)
    }

    /// An array of enum names, without duplicates.
    mutating func choices<E: RawRepresentable & CaseIterable & Equatable>(_ table: TOMLTable, _ key: String, prefix: String, _: E.Type, allowEmpty: Bool) -> (value: [E], line: Int)? where E.RawValue == String {
        guard let entry = table[key], !entry.value.isInvalid else { return nil }
        let name = Self.path(prefix, key)
        guard let items = entry.value.array else {
            problem(entry.line, name, "expected an array of strings, found \(entry.value.typeName)")
            return nil
        }
        var values: [E] = []
        var ok = true
        for item in items {
            guard let text = item.string else {
                problem(item.line, name, "expected strings in the array, found \(item.typeName)")
                ok = false
                continue
            }
            guard let value = E(rawValue: text) else {
                problem(item.line, name, "\"\(text)\" is not one of \(E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
                ok = false
                continue
            }
            if values.contains(value) {
                problem(item.line, name, "\"\(text)\" is listed twice")
                ok = false
            }
            values.append(value)
        }
        if ok, values.isEmpty, !allowEmpty {
            problem(entry.line, name, "must not be empty")
            ok = false
        }
        return ok ? (values, entry.line) : nil
    }

    /// One edit (insert, delete, substitute or swap of neighbours) apart: typos worth a hint.
    static func isNearMiss(_ a: String, _ b: String) -> Bool {
        let x = Array(a), y = Array(b)
        if x == y { return false }
        if x.count == y.count {
            let diffs = (0..<x.count).filter { x[$0] != y[$0] }
            if diffs.count == 1 { return true }
            if diffs.count == 2, diffs[1] == diffs[0] + 1, x[diffs[0]] == y[diffs[1]], x[diffs[1]] == y[diffs[0]] { return true }
            return false
        }
        let (long, short) = x.count > y.count ? (x, y) : (y, x)
        guard long.count == short.count + 1 else { return false }
        var i = 0
        while i < short.count, long[i] == short[i] { i += 1 }
        return Array(long[(i + 1)...]) == Array(short[i...])
    }
}
