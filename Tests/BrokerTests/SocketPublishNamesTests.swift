@testable import Broker
import Testing
import TestSupport

/// `PUB` and check-config apply one rule to namespaces, types and mediums: what a `[[publication]]`
/// may not hold, a `PUB` may not publish either.
@Suite("PUB and the config agree on names")
struct SocketPublishNamesTests {
    private static let refusedNamespaces = ["$SYS", "$x", "eddystone", "ibeacon", "a\u{85}b", "a\u{9F}", "a\u{2028}b", "a\tb", "*"]

    @Test(arguments: refusedNamespaces)
    func refusedByBoth(namespace: String) throws {
        let toml = """
            api_key = "k"
            board = "sim"
            [[publication]]
            namespace = "\(namespace.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 ? String(format: "\\u%04X", $0.value) : String($0) }.joined())"
            type = "t"
            """
        let problems = ConfigFixture.problems(toml)
        #expect(problems.contains { $0.contains("publication[1].namespace") }, "check-config accepted \(namespace.debugDescription): \(problems)")
        #expect(throws: SocketProtocolError.self, "PUB accepted \(namespace.debugDescription)") {
            try PublishParser.parse(["\(namespace)/t", "aGk="])
        }
        let error = try #require(throws: SocketProtocolError.self) { try PublishParser.parse(["\(namespace)/t", "aGk="]) }
        #expect(error.code == .badTopic)
    }

    /// "*" is the subscriptions' wildcard: a message of type "*" could not be subscribed to alone.
    @Test func wildcardTypeIsRefusedByBoth() throws {
        let problems = ConfigFixture.problems("""
            api_key = "k"
            board = "sim"
            [[publication]]
            namespace = "a"
            type = "*"
            """)
        #expect(problems.contains { $0.contains("publication[1].type") }, "\(problems)")
        let error = try #require(throws: SocketProtocolError.self) { try PublishParser.parse(["a/*", "aGk="]) }
        #expect(error.code == .badTopic && error.text.contains("*"), "\(error)")
    }

    @Test func mediumsListedTwiceAreRefusedLikeTheConfigDoes() throws {
        let error = try #require(throws: SocketProtocolError.self) { try PublishParser.parse(["a/b", "aGk=", "mediums=ble,ble"]) }
        #expect(error.code == .badArgument)
        #expect(error.text.contains("twice"))
        let problems = ConfigFixture.problems("""
            api_key = "k"
            board = "sim"
            [[publication]]
            namespace = "a"
            type = "t"
            mediums = ["ble", "ble"]
            """)
        #expect(problems.contains { $0.contains("listed twice") })
    }
}
