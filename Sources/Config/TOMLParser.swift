/// The TOML our configuration needs, and nothing more: comments, bare and quoted keys, dotted keys,
/// `[tables]`, `[[arrays of tables]]`, basic and literal strings with escapes, integers (decimal, 0x, 0o,
/// 0b, underscores), booleans, arrays (across lines) and inline tables. Floats, dates and multi-line
/// strings are refused with a clear error and their line. We write our own so that every key keeps its
/// line number for config errors.
public enum TOML {
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        let (table, errors) = parseAll(text)
        if let first = errors.first { throw first }
        return table
    }

    /// Every syntax error of the text (in order), and what parsed around them: a statement with an
    /// error is skipped to the end of its line (its key, if it parsed, holds `.invalid`), and the
    /// keys under a table header that did not parse are skipped up to the next header, so one run
    /// reports each problem once.
    public static func parseAll(_ text: String) -> (TOMLTable, [TOMLError]) {
        var parser = TOMLParser(bytes: Array(text.utf8))
        return parser.document()
    }
}

struct TOMLParser {
    let bytes: [UInt8]
    var position = 0
    var line = 1

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }
    private func peek(_ offset: Int) -> UInt8? { position + offset < bytes.count ? bytes[position + offset] : nil }

    private func error(_ message: String) -> TOMLError { TOMLError(line: line, message: message) }

    mutating func document() -> (TOMLTable, [TOMLError]) {
        let document = TOMLDocument()
        var errors: [TOMLError] = []
        /// The last table header did not parse: its keys would land in the wrong table.
        var skippingSection = false
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }   // UTF-8 byte order mark
        while position < bytes.count {
            skipSpaces()
            guard let c = peek else { break }
            let start = line
            do throws(TOMLError) {
                if c == UInt8(ascii: "[") {
                    skippingSection = true
                    if peek(1) == UInt8(ascii: "[") {
                        position += 2
                        let path = try keyPath()
                        guard peek == UInt8(ascii: "]"), peek(1) == UInt8(ascii: "]") else { throw error("expected ]] to close the array of tables header") }
                        position += 2
                        try document.appendTable(path, line: start)
                    } else {
                        position += 1
                        let path = try keyPath()
                        guard peek == UInt8(ascii: "]") else { throw error("expected ] to close the table header") }
                        position += 1
                        try document.openTable(path, line: start)
                    }
                    skippingSection = false
                } else if c != UInt8(ascii: "#"), !isNewline(c) {
                    if skippingSection { throw Skip.line }
                    let path = try keyPath()
                    guard peek == UInt8(ascii: "=") else { throw error("expected = after the key \(path.joined(separator: "."))") }
                    position += 1
                    skipSpaces()
                    let value: TOMLValue
                    do {
                        value = try self.value()
                    } catch {
                        try? document.assign(path, TOMLValue(.invalid, line: start), line: start)
                        throw error
                    }
                    try document.assign(path, value, line: start)
                }
                try endOfLine()
            } catch {
                if error != Skip.line { errors.append(error) }
                skipRestOfLine()
            }
        }
        return (document.result(), errors)
    }

    /// Not an error: a statement passed over (under a header that did not parse).
    private enum Skip {
        static let line = TOMLError(line: 0, message: "")
    }

    /// Past the next newline (or to the end): where parsing resumes after an error.
    private mutating func skipRestOfLine() {
        while let c = peek {
            position += 1
            if c == 0x0A { line += 1; return }
        }
    }

    // MARK: layout

    private func isNewline(_ c: UInt8) -> Bool { c == 0x0A || (c == 0x0D && peek(1) == 0x0A) }

    private mutating func skipSpaces() {
        while let c = peek, c == 0x20 || c == 0x09 { position += 1 }
    }

    /// Optional spaces and comment, then a newline or the end of the file.
    private mutating func endOfLine() throws(TOMLError) {
        skipSpaces()
        if peek == UInt8(ascii: "#") { try skipComment() }
        guard let c = peek else { return }
        if c == 0x0D, peek(1) == 0x0A { position += 2; line += 1; return }
        if c == 0x0A { position += 1; line += 1; return }
        throw error("unexpected \(describe(c)) after the value (one key = value per line)")
    }

    private mutating func skipComment() throws(TOMLError) {
        while let c = peek, !isNewline(c) {
            if c < 0x20 && c != 0x09 || c == 0x7F { throw error("control character \(describe(c)) in a comment") }
            position += 1
        }
    }

    /// Spaces, comments and newlines inside arrays.
    private mutating func skipBlank() throws(TOMLError) {
        while let c = peek {
            if c == 0x20 || c == 0x09 { position += 1 }
            else if c == 0x0A { position += 1; line += 1 }
            else if c == 0x0D, peek(1) == 0x0A { position += 2; line += 1 }
            else if c == UInt8(ascii: "#") { try skipComment() }
            else { return }
        }
    }

    private func describe(_ c: UInt8) -> String {
        if c == 0x0A || c == 0x0D { return "the end of the line" }
        return c >= 0x21 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16))"
    }

    // MARK: keys

    private mutating func keyPath() throws(TOMLError) -> [String] {
        var path: [String] = []
        while true {
            skipSpaces()
            path.append(try key())
            skipSpaces()
            guard peek == UInt8(ascii: ".") else { return path }
            position += 1
        }
    }

    private mutating func key() throws(TOMLError) -> String {
        switch peek {
        case UInt8(ascii: "\""): return try basicString()
        case UInt8(ascii: "'"): return try literalString()
        default:
            let start = position
            while let c = peek, isBareKey(c) { position += 1 }
            guard position > start else {
                throw peek.map { error("expected a key, found \(describe($0))") } ?? error("expected a key at the end of the file")
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }
    }

    private func isBareKey(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
    }

    // MARK: values

    private mutating func value() throws(TOMLError) -> TOMLValue {
        let start = line
        guard let c = peek else { throw error("expected a value at the end of the file") }
        switch c {
        case UInt8(ascii: "\""): return TOMLValue(.string(try basicString()), line: start)
        case UInt8(ascii: "'"): return TOMLValue(.string(try literalString()), line: start)
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "{"): return try inlineTable()
        default: return try scalar()
        }
    }

    private mutating func array() throws(TOMLError) -> TOMLValue {
        let start = line
        position += 1
        var items: [TOMLValue] = []
        while true {
            try skipBlank()
            if peek == UInt8(ascii: "]") { position += 1; break }
            items.append(try value())
            try skipBlank()
            if peek == UInt8(ascii: ",") { position += 1; continue }
            if peek == UInt8(ascii: "]") { position += 1; break }
            throw peek.map { error("expected , or ] in the array, found \(describe($0))") } ?? error("array opened on line \(start) is not closed")
        }
        return TOMLValue(.array(items), line: start)
    }

    private mutating func inlineTable() throws(TOMLError) -> TOMLValue {
        let start = line
        position += 1
        let document = TOMLDocument()
        skipSpaces()
        if peek == UInt8(ascii: "}") { position += 1; return TOMLValue(.table(TOMLTable(line: start)), line: start) }
        while true {
            let path = try keyPath()
            guard peek == UInt8(ascii: "=") else { throw error("expected = after the key \(path.joined(separator: ".")) in the inline table") }
            position += 1
            skipSpaces()
            try document.assign(path, try value(), line: start)
            skipSpaces()
            if peek == UInt8(ascii: ",") { position += 1; continue }
            if peek == UInt8(ascii: "}") { position += 1; break }
            throw error("expected , or } in the inline table (inline tables stay on one line)")
        }
        var table = document.result()
        table.line = start
        return TOMLValue(.table(table), line: start)
    }

    /// Booleans and integers; floats and dates are recognised only to refuse them clearly.
    private mutating func scalar() throws(TOMLError) -> TOMLValue {
        let start = position
        while let c = peek, !(c == 0x20 || c == 0x09 || c == 0x2C || c == 0x5D || c == 0x7D || c == 0x23 || c == 0x0A || c == 0x0D) {
            position += 1
        }
        let token = String(decoding: bytes[start..<position], as: UTF8.self)
        if token == "true" { return TOMLValue(.boolean(true), line: line) }
        if token == "false" { return TOMLValue(.boolean(false), line: line) }
        if token.isEmpty { throw peek.map { error("expected a value, found \(describe($0))") } ?? error("expected a value") }
        switch Self.integerSyntax(token) {
        case .value(let integer): return TOMLValue(.integer(integer), line: line)
        case .outOfRange: throw error("integer \(token) is out of range (\(Int64.min)...\(Int64.max))")
        case .notAnInteger: break
        }
        if token.contains("-") && token.first?.isNumber == true && token.dropFirst().contains("-") || token.contains(":") {
            throw error("dates and times are not supported (\(token)); write them as a string")
        }
        if token.contains(".") || token.lowercased().contains("e") && token.first.map({ $0.isNumber || $0 == "+" || $0 == "-" }) == true
            || ["inf", "+inf", "-inf", "nan", "+nan", "-nan"].contains(token) {
            throw error("floating-point numbers are not supported (\(token)); use an integer")
        }
        throw error("invalid value \(token) (strings need quotes)")
    }

    static func integer(_ token: String) -> Int64? {
        if case .value(let integer) = integerSyntax(token) { return integer }
        return nil
    }

    enum IntegerSyntax: Equatable {
        case value(Int64)
        /// Written as a TOML integer, but beyond 64 bits.
        case outOfRange
        case notAnInteger
    }

    static func integerSyntax(_ token: String) -> IntegerSyntax {
        var text = Substring(token)
        var negative = false
        if let sign = text.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            text = text.dropFirst()
        }
        var radix = 10
        if text.count > 2, text.first == "0", let prefix = text.dropFirst().first, "xob".contains(prefix) {
            if token.first == "+" || token.first == "-" { return .notAnInteger }   // TOML: no sign on 0x/0o/0b
            radix = prefix == "x" ? 16 : prefix == "o" ? 8 : 2
            text = text.dropFirst(2)
        } else if text.count > 1, text.first == "0" {
            return .notAnInteger   // leading zeros are not TOML
        }
        // Underscores only between digits.
        guard !text.isEmpty, text.first != "_", text.last != "_", !text.contains("__") else { return .notAnInteger }
        let digits = text.filter { $0 != "_" }
        // Only digits of the radix: `UInt64(_:radix:)` would also take a sign ("++5", "0x+F").
        guard digits.allSatisfy({ $0.isASCII && $0.hexDigitValue.map { $0 < radix } == true }) else { return .notAnInteger }
        guard let magnitude = UInt64(digits, radix: radix) else { return .outOfRange }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? .value(Int64(truncatingIfNeeded: 0 &- magnitude)) : .outOfRange }
        return magnitude <= UInt64(Int64.max) ? .value(Int64(magnitude)) : .outOfRange
    }

    // MARK: strings

    private mutating func literalString() throws(TOMLError) -> String {
        if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") { throw error("multi-line strings are not supported") }
        position += 1
        let start = position
        while let c = peek, c != UInt8(ascii: "'") {
            if c == 0x0A || c == 0x0D { throw error("string is not closed on its line") }
            if c < 0x20 && c != 0x09 || c == 0x7F { throw error("control character \(describe(c)) in a string") }
            position += 1
        }
        guard peek != nil else { throw error("string is not closed") }
        position += 1
        return try utf8(bytes[start..<(position - 1)])
    }

    private mutating func basicString() throws(TOMLError) -> String {
        if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") { throw error("multi-line strings are not supported") }
        position += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek else { throw error("string is not closed") }
            if c == UInt8(ascii: "\"") { position += 1; break }
            if c == 0x0A || c == 0x0D { throw error("string is not closed on its line") }
            if c < 0x20 && c != 0x09 || c == 0x7F { throw error("control character \(describe(c)) in a string (escape it)") }
            position += 1
            guard c == UInt8(ascii: "\\") else { out.append(c); continue }
            guard let e = peek else { throw error("string is not closed") }
            position += 1
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                let count = e == UInt8(ascii: "u") ? 4 : 8
                // Exactly `count` hex digits: `UInt32(_:radix:)` alone would take a sign ("\\u+041").
                guard position + count <= bytes.count,
                      bytes[position..<(position + count)].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                      let code = UInt32(String(decoding: bytes[position..<(position + count)], as: UTF8.self), radix: 16),
                      let scalar = Unicode.Scalar(code)
                else { throw error("invalid \\\(Character(Unicode.Scalar(e))) escape (needs \(count) hex digits of a Unicode scalar)") }
                position += count
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw error("invalid escape \\\(Character(Unicode.Scalar(e))) in a string")
            }
        }
        return try utf8(out[...])
    }

    private func utf8(_ slice: ArraySlice<UInt8>) throws(TOMLError) -> String {
        guard let text = String(validating: slice, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return text
    }
}
