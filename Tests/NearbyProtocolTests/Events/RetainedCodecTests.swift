@testable import NearbyProtocol
import SplitMix
import TestSupport
import Testing

/// The retained events' compact form gives back every event byte for byte (docs/footprint-found.md).
@Suite struct RetainedCodecTests {
    static let uuid = FoundEventFixture.uuid
    static let foundJSON = FoundEventFixture.json

    static func roundTrip(_ segments: [String]) -> Bool {
        let (bytes, ends) = RetainedCodec.encode(segments.map { Substring($0).utf8 })
        #expect(ends.count == segments.count && ends.last == bytes.count)
        return RetainedCodec.decode(bytes[...]) == Array(segments.joined().utf8)
    }

    @Test func aFoundEventComesBackByteForByteInAThirdOfItsBytes() {
        let key = "found/ibeacon/\(Self.uuid)/0/7#1x2y3z"
        let (bytes, ends) = RetainedCodec.encode([Substring(key).utf8, Substring(Self.foundJSON).utf8])
        #expect(RetainedCodec.decode(bytes[...]) == Array((key + Self.foundJSON).utf8))
        // The key alone encodes to the same bytes as at the start of the whole (the store's lookups).
        #expect(RetainedCodec.encode([Substring(key).utf8]).bytes == Array(bytes[..<ends[0]]))
        #expect(bytes.count * 3 <= key.utf8.count + Self.foundJSON.utf8.count)
    }

    @Test func controlBytesRepeatsLongerThanACopyAndFarRepeatsRoundTrip() {
        #expect(Self.roundTrip([""]))
        #expect(Self.roundTrip(["", "", "{}"]))
        #expect(Self.roundTrip(["\u{0}\u{1}\u{1E}\u{1F}\u{7F}", "é—😀\u{1F}\u{1F}\u{1F}\u{1F}\u{1F}\u{1F}"]))
        #expect(Self.roundTrip([String(repeating: "a", count: 1_000)]))              // overlapping copies, longer than 290
        #expect(Self.roundTrip(["xyzzy" + String(repeating: "-", count: 70_000) + "xyzzy"]))   // beyond 65,535 back
        #expect(Self.roundTrip(["abc", "abcabcab", "cabcabcabcabc"]))
    }

    @Test func randomTextsRoundTrip() {
        var rng = SeededGenerator(seed: 31)
        let alphabet = Array(#"{}":,abc0123-/#"#.utf8) + [0, 1, 0x1F, 0x20, 0xC3, 0xA9]
        for _ in 0..<500 {
            let segments = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                String(decoding: (0..<Int.random(in: 0...300, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }, as: UTF8.self)
            }
            #expect(Self.roundTrip(segments))
        }
    }
}
