import Testing
@testable import Config

@Suite struct ConfigTOMLTests {
    @Test func everythingTheConfigUses() throws {
        let doc = try TOML.parse("""
        # comment
        api_key = "k\\u00e9y\\t\\"q\\"" # trailing comment
        'literal key' = 'C:\\path'
        "quoted.key" = 0x1F
        n = -1_000
        flag = false

        [radio]
        interval_ms = +100
        a.b.c = 1

        [state]
        defaults = { background_mode = true, permission = "granted", nested.x = 2 }

        [[publication]]
        namespace = "a"
        mediums = [
          "ble",   # comment inside
          "audio",
        ]

        [[publication]]
        namespace = "b"
        empty = []
        [publication.extra]
        z = 0o17
        """)
        #expect(doc["api_key"]?.value.string == "kéy\t\"q\"")
        #expect(doc["api_key"]?.line == 2)
        #expect(doc["literal key"]?.value.string == "C:\\path")
        #expect(doc["quoted.key"]?.value.integer == 31)
        #expect(doc["n"]?.value.integer == -1000)
        #expect(doc["flag"]?.value.boolean == false)
        let radio = try #require(doc["radio"]?.value.table)
        #expect(radio.line == 8)
        #expect(radio["interval_ms"]?.value.integer == 100)
        #expect(radio["a"]?.value.table?["b"]?.value.table?["c"]?.value.integer == 1)
        let defaults = try #require(doc["state"]?.value.table?["defaults"]?.value.table)
        #expect(defaults["permission"]?.value.string == "granted")
        #expect(defaults["nested"]?.value.table?["x"]?.value.integer == 2)
        let publications = try #require(doc["publication"]?.value.array)
        #expect(publications.map(\.line) == [15, 22])
        let mediums = try #require(publications[0].table?["mediums"]?.value.array)
        #expect(mediums.map(\.line) == [18, 19])
        #expect(mediums.compactMap(\.string) == ["ble", "audio"])
        #expect(publications[1].table?["extra"]?.value.table?["z"]?.value.integer == 15)
        #expect(publications[1].table?["empty"]?.value.array == [])
    }

    @Test func crlfAndBOM() throws {
        let doc = try TOML.parse("\u{FEFF}a = 1\r\nb = 'x'\r\n")
        #expect(doc["b"]?.line == 2)
    }

    @Test(arguments: [
        ("a = 1\na = 2", 2, "a is already defined (line 1)"),
        ("[t]\nx = 1\n[t]", 3, "table [t] is already defined (line 1)"),
        ("x = 1.5", 1, "floating-point numbers are not supported (1.5); use an integer"),
        ("x = 1e3", 1, "floating-point numbers are not supported (1e3); use an integer"),
        ("\n\nx = 2024-01-01", 3, "dates and times are not supported (2024-01-01); write them as a string"),
        ("x = \"\"\"multi\"\"\"", 1, "multi-line strings are not supported"),
        ("x = \"open", 1, "string is not closed"),
        ("x = \"open\ny = 1", 1, "string is not closed on its line"),
        ("x = 'a' 'b'", 1, "unexpected ''' after the value (one key = value per line)"),
        ("x = \"\\q\"", 1, "invalid escape \\q in a string"),
        ("x = \"\\u12\"", 1, "invalid \\u escape (needs 4 hex digits of a Unicode scalar)"),
        ("x = yes", 1, "invalid value yes (strings need quotes)"),
        ("x = 007", 1, "invalid value 007 (strings need quotes)"),
        ("x = 99999999999999999999", 1, "integer 99999999999999999999 is out of range (-9223372036854775808...9223372036854775807)"),
        ("x =", 1, "expected a value at the end of the file"),
        ("x =\ny = 1", 1, "expected a value, found the end of the line"),
        ("= 1", 1, "expected a key, found '='"),
        ("x 1", 1, "expected = after the key x"),
        ("[t\nx = 1", 1, "expected ] to close the table header"),
        ("x = [1, 2\ny = 3", 2, "expected , or ] in the array, found 'y'"),
        ("x = {a = 1,\nb = 2}", 1, "expected a key, found the end of the line"),
        ("x = 1\n[x]", 2, "[x]: x is already defined as a value (line 1)"),
        ("x = 1\n[[x]]", 2, "[[x]]: x is already defined as a table or value (line 1)"),
        ("x = {a = 1}\n[x]", 2, "[x]: x is already defined as a value (line 1)"),
        ("a.b = 1\n[a]", 2, "table [a] is already defined (line 1)"),
        ("x = \"tab\u{1}\"", 1, "control character byte 0x1 in a string (escape it)"),
    ])
    func errorsNameTheirLine(text: String, line: Int, message: String) {
        #expect(throws: TOMLError(line: line, message: message)) { try TOML.parse(text) }
    }

    @Test func integerForms() {
        #expect(TOMLParser.integer("0") == 0)
        #expect(TOMLParser.integer("-9223372036854775808") == .min)
        #expect(TOMLParser.integer("9223372036854775808") == nil)
        #expect(TOMLParser.integer("0b101") == 5)
        #expect(TOMLParser.integer("0xff") == 255)
        #expect(TOMLParser.integer("-0xff") == nil)
        #expect(TOMLParser.integer("1__0") == nil)
        #expect(TOMLParser.integer("_1") == nil)
        #expect(TOMLParser.integer("0660") == nil)
    }

    /// `UInt64(_:radix:)` takes a sign of its own: a second sign, or one after 0x/0o/0b, is not TOML.
    @Test(arguments: ["++5", "-+5", "+-5", "--5", "0x+F", "0x-F", "0o+7", "0b+1", "0b-1", "1+2", "0xg1", "0b12", "0o8"])
    func signsAndDigitsOutsideTheRadixAreNotIntegers(token: String) {
        #expect(TOMLParser.integer(token) == nil)
        #expect(TOMLParser.integerSyntax(token) == .notAnInteger)
    }

    @Test(arguments: [
        ("x = ++5", 1, "invalid value ++5 (strings need quotes)"),
        ("a = 1\nx = 0x+F", 2, "invalid value 0x+F (strings need quotes)"),
        ("x = \"\\u+041\"", 1, "invalid \\u escape (needs 4 hex digits of a Unicode scalar)"),
        ("x = \"\\U+0000041\"", 1, "invalid \\U escape (needs 8 hex digits of a Unicode scalar)"),
        ("x = \"\\e\"", 1, "invalid escape \\e in a string"),   // TOML 1.1, not 1.0
        ("x = 9223372036854775808", 1, "integer 9223372036854775808 is out of range (-9223372036854775808...9223372036854775807)"),
        ("x = -9_223_372_036_854_775_809", 1, "integer -9_223_372_036_854_775_809 is out of range (-9223372036854775808...9223372036854775807)"),
        ("x = 0xFFFFFFFFFFFFFFFFF", 1, "integer 0xFFFFFFFFFFFFFFFFF is out of range (-9223372036854775808...9223372036854775807)"),
    ])
    func malformedNumbersAndEscapesNameTheirLine(text: String, line: Int, message: String) {
        #expect(throws: TOMLError(line: line, message: message)) { try TOML.parse(text) }
    }

    @Test func integerOverflowIsNotAnUnquotedString() {
        #expect(TOMLParser.integerSyntax("9223372036854775807") == .value(.max))
        #expect(TOMLParser.integerSyntax("9223372036854775808") == .outOfRange)
        #expect(TOMLParser.integerSyntax("-9223372036854775809") == .outOfRange)
    }
}
