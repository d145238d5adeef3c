import SplitMix
import Testing
@testable import Broker

/// `ReplyLine.eventBytes` (the broker's byte path) must write exactly what `ReplyLine.event` writes.
@Suite struct SocketEventBytesTests {
    @Test(arguments: [
        "{\"a\":1}", "{}", "{ }", "{   }  ", "{\"a\":1}   ", "[1,2]", "", " ", "{", "}", "{}}", "{{}",
        "{\"text\":\"line\\nbreak\"}", "{\"x\":\"é\"}", "{\"a\":1}\n", "{\"a\":\r\n1}", "{\"a\":\r1}", "plain text",
        "{\"a\":\"\u{301}\"} ", "{\u{301}\"a\":1}", "{\"a\":1}\u{301}",
    ])
    func matchesTheStringEncoder(json: String) {
        for retained in [false, true] {
            let expected = Array(ReplyLine.event(topic: "found/ns/type", json: json, retained: retained).utf8)
            #expect(ReplyLine.eventBytes(topic: "found/ns/type", json: json, retained: retained) == expected, "\(json)")
        }
    }

    /// Seeded random JSON-ish strings from an alphabet heavy in braces, spaces, CR/LF and non-ASCII.
    @Test func matchesTheStringEncoderOnRandomInputs() {
        var rng = SeededGenerator(seed: 0xB17E5)
        let alphabet: [String] = ["{", "}", " ", " ", "a", "\"", ":", ",", "\n", "\r", "\r\n", "é", "\u{301}", "😀"]
        for _ in 0..<5_000 {
            let json = (0..<Int(rng.next() % 12)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined()
            let retained = rng.next() % 2 == 0
            let expected = Array(ReplyLine.event(topic: "t/é", json: json, retained: retained).utf8)
            #expect(ReplyLine.eventBytes(topic: "t/é", json: json, retained: retained) == expected, "\(json.debugDescription)")
        }
    }
}
