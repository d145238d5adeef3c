@testable import Gateway
import Foundation
import Testing

@Suite("Event topics")
struct EventFormattingTests {
    @Test func topicLevelsCannotForgeOtherTopics() {
        #expect(TopicLevel.escape("kitchen") == "kitchen")
        #expect(TopicLevel.escape("a/b") == "a%2Fb")
        #expect(TopicLevel.escape("+#") == "%2B%23")
        #expect(TopicLevel.escape("x y%") == "x%20y%25")
        #expect(TopicLevel.escape("naïve\n") == "naïve%0A")
    }

    /// C1 controls (U+0085 NEL among them) and the line separators are percent-encoded in topics,
    /// byte by byte of their UTF-8, like the C0 controls.
    @Test func topicLevelsEncodeC1ControlsAndLineSeparators() {
        #expect(TopicLevel.escape("a\u{85}b") == "a%C2%85b")
        #expect(TopicLevel.escape("\u{9F}") == "%C2%9F")
        #expect(TopicLevel.escape("x\u{2028}y\u{2029}") == "x%E2%80%A8y%E2%80%A9")
        #expect(TopicLevel.escape("naïve\n") == "naïve%0A")
        #expect(TopicLevel.escape("ünï") == "ünï")
    }

    @Test func beaconTopicsFollowTheSpec() {
        let uid = DiscoveryKey.eddystoneUID(ShortBytes(Array(repeating: 0xAB, count: 10) + [1, 2, 3, 4, 5, 6]))
        #expect(uid.topicSuffix == "eddystone/abababababababababab/010203040506")
        let uuid: [UInt8] = [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
        #expect(DiscoveryKey.iBeacon(uuid: ShortBytes(uuid), major: 1, minor: 2).topicSuffix
                == "ibeacon/e2c56db5-dffb-48d2-b060-d0f5a71096e0/1/2")
        #expect(DiscoveryKey.eddystoneURL("https://example.com/x").topicSuffix == "eddystone-url/example.com")
    }
}
