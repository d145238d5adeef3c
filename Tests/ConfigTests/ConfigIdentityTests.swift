import Foundation
import Glibc
import Testing
import TestSupport
@testable import Config
import Radio

/// `[[identity]]`: the key's accepted forms and byte orders, irk_file, and every problem with its line.
@Suite struct ConfigIdentityTests {
    static let base = """
        api_key = "a-real-key"
        board = "sim"

        """
    /// The Core specification's sample IRK (Vol 3 Part H D.7), most significant byte first: the
    /// order Home Assistant's hex takes.
    static let specHex = "ec0234a357c8ad05341010a60a397d9b"
    static let specBytes: [UInt8] = [0xEC, 0x02, 0x34, 0xA3, 0x57, 0xC8, 0xAD, 0x05, 0x34, 0x10, 0x10, 0xA6, 0x0A, 0x39, 0x7D, 0x9B]
    /// The same key as a Keychain's base64: least significant byte first (Home Assistant reverses it).
    static let specBase64 = Data(specBytes.reversed()).base64EncodedString()

    @Test func hexAndBase64FormsGiveTheSameKey() throws {
        for text in [Self.specHex, Self.specHex.uppercased(), "irk:" + Self.specHex, "0x" + Self.specHex, " \(Self.specHex)\n",
                     "ec:02:34:a3:57:c8:ad:05:34:10:10:a6:0a:39:7d:9b", Self.specBase64] {
            #expect(try IdentityKey.parse(text).get().bytes == Self.specBytes, "\(text)")
        }
    }

    @Test func malformedKeysSayWhyWithoutTheKey() {
        let cases: [(String, String)] = [
            ("", "is empty"),
            (String(Self.specHex.dropLast()), "has 31 hex digits; an IRK is 32 (16 bytes)"),
            ("7AI0o1fIrQU0EBCmCjl9m$==", "is not valid base64"),
            ("AAAAAAAAAAAAAAAAAAAA", "has 20 hex digits; an IRK is 32 (16 bytes)"),
            ("AAAAAAAAAAAAAAAAAAAAAA=", "is 23 characters of base64; an IRK is 24 (16 bytes, ending in ==)"),
            ("not a key at all", "is neither 32 hex digits nor 24 characters of base64"),
        ]
        for (text, message) in cases {
            #expect(IdentityKey.parse(text) == .failure(.init(message)), "\(text)")
        }
    }

    @Test func identitiesAndTheirSubscriptions() throws {
        let (config, _) = try ConfigFixture.load(Self.base + """
            [[identity]]
            name = "alice-phone"
            irk = "\(Self.specHex)"

            [[identity]]
            name = "bob-watch"
            irk = "\(Self.specBase64)"

            [[subscription]]
            namespace = "people"
            mediums = ["ble"]
            include = ["identity"]

            [[subscription]]
            namespace = "bob"
            mediums = ["ble"]
            include = ["identity/bob-watch", "ibeacon"]
            """)
        #expect(config.identities.map(\.name) == ["alice-phone", "bob-watch"])
        #expect(config.identities.map(\.key.bytes) == [Self.specBytes, Self.specBytes])
        #expect(config.identities.map(\.line) == [3, 7])
        #expect(config.subscriptions.map(\.include) == [[.identity], [.iBeacon]])
        #expect(config.subscriptions.map(\.identities) == [[], ["bob-watch"]])
        // The config's description never shows a key.
        for text in ["\(config)", String(reflecting: config), "\(config.identities)"] {
            #expect(!text.lowercased().contains("ec02") && !text.contains(Self.specBase64), "\(text)")
        }
    }

    @Test func everyProblemWithItsLine() {
        let problems = ConfigFixture.problems(Self.base + """
            [[identity]]
            name = "a"
            irk = "\(Self.specHex.dropLast(2))"

            [[identity]]
            name = "a"
            irk = "\(Self.specHex)"
            irk_file = "/nonexistent"

            [[identity]]
            irk = "\(Self.specHex)"

            [[identity]]
            name = "no/slash"

            [[subscription]]
            namespace = "x"
            mediums = ["ble"]
            include = ["identity/carol", "people"]
            """)
        #expect(problems == [
            "5: identity[1].irk: has 30 hex digits; an IRK is 32 (16 bytes) (docs/identities.md lists the accepted forms)",
            "8: identity[2].name: \"a\" is already the name of the identity on line 4",
            "10: identity[2].irk_file: set irk or irk_file, not both (irk is on line 9)",
            "12: identity[3].name: missing: the identity's name, its topic found/identity/<name>",
            "15: identity[4].irk: missing: the device's IRK (irk, or irk_file naming a file that holds it)",
            "16: identity[4].name: must not contain '/' (it is a topic level: no '/', '+', '#', spaces or control characters)",
            "21: subscription[1].include: \"identity/carol\": no [[identity]] is named \"carol\"",
            "21: subscription[1].include: \"people\" is not one of \"eddystone-uid\", \"eddystone-url\", \"eddystone-tlm\", \"ibeacon\", \"identity\", \"identity/<name>\"",
        ])
    }

    @Test func includingIdentitiesNeedsOne() {
        let problems = ConfigFixture.problems(Self.base + "[[subscription]]\nnamespace = \"x\"\nmediums = [\"ble\"]\ninclude = [\"identity\"]\n")
        #expect(problems == ["6: subscription[1].include: includes \"identity\", but there is no [[identity]]"])
    }

    @Test func irkFileIsPrivateAndHoldsAKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("irk-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func write(_ name: String, _ text: String, mode: mode_t) -> String {
            let path = "\(folder)/\(name)"
            FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            chmod(path, mode)
            return path
        }
        let good = write("good", "\n\(Self.specBase64)\n", mode: 0o600)
        let open = write("open", Self.specHex, mode: 0o644)
        let bad = write("bad", "0123", mode: 0o600)
        let (config, _) = try ConfigFixture.load(Self.base + "[[identity]]\nname = \"a\"\nirk_file = \"\(good)\"\n")
        #expect(config.identities.first?.key.bytes == Self.specBytes)
        let problems = ConfigFixture.problems(Self.base + """
            [[identity]]
            name = "a"
            irk_file = "\(open)"
            [[identity]]
            name = "b"
            irk_file = "\(bad)"
            """)
        #expect(problems == [
            "5: identity[1].irk_file: \(open) is readable by others (mode 0644); chmod 600 it",
            "8: identity[2].irk_file: the key in \(bad) has 4 hex digits; an IRK is 32 (16 bytes) (docs/identities.md lists the accepted forms)",
        ])
    }

    @Test func anInlineKeyNeedsAConfigOthersCannotRead() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).toml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = Self.base + "[[identity]]\nname = \"a\"\nirk = \"\(Self.specHex)\"\n"
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        chmod(path, 0o644)
        #expect(throws: ConfigError.self) { _ = try ConfigLoader.load(path: path, boards: ConfigFixture.boards) }
        do {
            _ = try ConfigLoader.load(path: path, boards: ConfigFixture.boards)
        } catch {
            #expect(error.problems.map(\.line) == [5])
            #expect(error.problems.first?.message.contains("readable by everyone (mode 0644)") == true)
        }
        chmod(path, 0o640)
        let (config, _) = try ConfigLoader.load(path: path, boards: ConfigFixture.boards)
        #expect(config.identities.count == 1)
    }
}
