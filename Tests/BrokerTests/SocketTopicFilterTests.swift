import SplitMix
import Testing
@testable import Broker

/// Vectors from MQTT 3.1.1 §4.7 (its non-normative examples) and from the behaviour of Mosquitto's
/// `mosquitto_topic_matches_sub` / `mosquitto_sub_topic_check`.
@Suite struct SocketTopicFilterTests {
    static let matching: [(String, String)] = [
        ("foo/bar", "foo/bar"),
        ("foo/+", "foo/bar"),
        ("foo/+/baz", "foo/bar/baz"),
        ("A/B/+/#", "A/B/B/C"),
        ("foo/+/#", "foo/bar/baz"),
        ("foo/+/#", "foo/bar"),
        ("#", "foo/bar/baz"),
        ("#", "foo"),
        ("#", "/foo/bar"),
        ("/#", "/foo/bar"),
        ("foo//bar", "foo//bar"),
        ("foo//+", "foo//bar"),
        ("foo/+/+/baz", "foo///baz"),
        ("foo/bar/+", "foo/bar/"),
        ("foo/#", "foo/"),
        ("foo/#", "foo"),                          // '#' also matches the parent level
        ("sport/tennis/player1/#", "sport/tennis/player1"),
        ("sport/tennis/player1/#", "sport/tennis/player1/ranking"),
        ("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon"),
        ("sport/+", "sport/"),
        ("+/+", "/finance"),
        ("/+", "/finance"),
        ("+", "finance"),
        ("+/tennis/#", "sport/tennis/player1"),
        ("$SYS/bar", "$SYS/bar"),
        ("$SYS/#", "$SYS/bar"),
        ("$SYS/#", "$SYS"),
        ("$SYS/monitor/+", "$SYS/monitor/Clients"),
        ("$SYS/+/+", "$SYS/error/bluetooth-power"),
        ("found/+/+", "found/livingroom/greeting"),
        ("found/livingroom/#", "found/livingroom/greeting"),
        ("+/livingroom/+", "lost/livingroom/greeting"),
        ("found/ibeacon/#", "found/ibeacon/f7826da6-4fa2-4e98-8024-bc5b71e0893e/1/2"),
        ("a b/c", "a b/c"),                        // spaces are ordinary characters in MQTT
        ("/", "/"),
        ("+/+", "/"),
        ("//", "//"),
        ("é/+", "é/ü"),
        ("Sport", "Sport"),
    ]

    static let notMatching: [(String, String)] = [
        ("test/6/#", "test/3"),
        ("foo/bar", "foo"),
        ("foo/+", "foo/bar/baz"),
        ("foo/+/baz", "foo/bar/bar"),
        ("foo/+/#", "fo2/bar/baz"),
        ("foo/+/#", "foo"),
        ("/#", "foo/bar"),
        ("#", "$SYS/bar"),
        ("#", "$SYS"),
        ("+/monitor/Clients", "$SYS/monitor/Clients"),
        ("+", "$SYS"),
        ("+/#", "$SYS/error"),
        ("$BOB/bar", "$SYS/bar"),
        ("sport/+", "sport"),
        ("+", "/finance"),
        ("sport", "Sport"),                         // case-sensitive
        ("sport/tennis", "sport/tennis/"),          // a trailing '/' is another level
        ("/sport", "sport"),
        ("foo", "foo/bar"),
        ("foo/bar/baz", "foo/bar"),
        ("found/+/+", "lost/livingroom/greeting"),
        ("found/+", "found/livingroom/greeting"),
        ("+/+", "a"),
        ("+/+", "a/b/c"),
    ]

    @Test(arguments: matching) func matches(filter: String, topic: String) throws {
        #expect(try TopicFilter(parsing: filter).matches(topic))
    }

    @Test(arguments: notMatching) func doesNotMatch(filter: String, topic: String) throws {
        #expect(try !TopicFilter(parsing: filter).matches(topic))
    }

    static let valid = ["#", "+", "/", "a", "a/b", "a/+", "a/#", "+/+", "+/#", "/+", "//", "a//b", "$SYS/#", "a/+/b/#",
                        "$SYS", "$", "a b", "ünï/cödé", "found/+/+", String(repeating: "a", count: TopicFilter.maxBytes)]

    @Test(arguments: valid) func accepts(filter: String) throws {
        let parsed = try TopicFilter(parsing: filter)
        #expect(parsed.text == filter)
    }

    static let invalid: [(String, TopicFilterError)] = [
        ("", .empty),
        ("a/#/b", .multiLevelNotLast),
        ("#/a", .multiLevelNotLast),
        ("#/#", .multiLevelNotLast),
        ("#/", .multiLevelNotLast),
        ("a+", .wildcardInsideLevel),
        ("+a", .wildcardInsideLevel),
        ("a/b+/c", .wildcardInsideLevel),
        ("a#", .wildcardInsideLevel),
        ("foo#", .wildcardInsideLevel),
        ("fo#o/", .wildcardInsideLevel),
        ("a/b#", .wildcardInsideLevel),
        ("++", .wildcardInsideLevel),
        ("##", .wildcardInsideLevel),
        ("+#", .wildcardInsideLevel),
        ("a/\u{0}", .containsNUL),
        (String(repeating: "a", count: TopicFilter.maxBytes + 1), .tooLong),
    ]

    @Test(arguments: invalid) func refuses(filter: String, error: TopicFilterError) {
        #expect(throws: error) { try TopicFilter(parsing: filter) }
    }

    @Test func wildcardsAreReported() throws {
        #expect(try TopicFilter(parsing: "a/+/b").hasWildcards)
        #expect(try TopicFilter(parsing: "#").hasWildcards)
        #expect(try !TopicFilter(parsing: "a/b").hasWildcards)
    }

    @Test func topicNames() {
        #expect(TopicName.isValid("found/a/b"))
        #expect(TopicName.isValid("$SYS/dropped"))
        #expect(!TopicName.isValid(""))
        #expect(!TopicName.isValid("found/+/b"))
        #expect(!TopicName.isValid("found/#"))
        #expect(!TopicName.isValid("a\u{0}"))
    }

    /// Cross-check against a second, naive implementation on random filters and topics drawn from a
    /// small alphabet, so that wildcards, empty levels and `$` collide often.
    @Test func agreesWithReferenceOnRandomInputs() throws {
        var rng = SeededGenerator(seed: 0x5EED)
        let alphabet: [Character] = ["a", "b", "/", "/", "+", "#", "$"]
        var checked = 0
        for _ in 0..<50_000 {
            let filter = String((0..<Int(rng.next() % 7 + 1)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
            let topicAlphabet: [Character] = ["a", "b", "/", "$"]
            let topic = String((0..<Int(rng.next() % 7 + 1)).map { _ in topicAlphabet[Int(rng.next() % UInt64(topicAlphabet.count))] })
            let parsed = try? TopicFilter(parsing: filter)
            #expect((parsed != nil) == Reference.isValid(filter), "validity of \(filter)")
            if let parsed {
                #expect(parsed.matches(topic) == Reference.matches(filter, topic), "\(filter) vs \(topic)")
                checked += 1
            }
        }
        #expect(checked > 10_000)
    }

    /// The rules written the slow, obvious way, straight from the specification's wording.
    enum Reference {
        static func isValid(_ filter: String) -> Bool {
            let levels = filter.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if filter.isEmpty { return false }
            for (i, level) in levels.enumerated() {
                if level.contains("+") && level != "+" { return false }
                if level.contains("#") && (level != "#" || i != levels.count - 1) { return false }
            }
            return true
        }

        static func matches(_ filter: String, _ topic: String) -> Bool {
            let f = filter.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let t = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if topic.hasPrefix("$"), f[0] == "+" || f[0] == "#" { return false }
            return match(f[...], t[...])
        }

        private static func match(_ f: ArraySlice<String>, _ t: ArraySlice<String>) -> Bool {
            guard let head = f.first else { return t.isEmpty }
            if head == "#" { return true }
            guard let level = t.first else { return false }
            if head != "+" && head != level { return false }
            return match(f.dropFirst(), t.dropFirst())
        }
    }
}
