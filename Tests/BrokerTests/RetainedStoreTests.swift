@testable import Broker
import NearbyProtocol
import TestSupport
import Testing

/// The retained store, in `RetainedCodec`'s form, replays what was set (docs/footprint-found.md).
@Suite struct RetainedStoreTests {
    static let uuid = FoundEventFixture.uuid
    static let foundJSON = FoundEventFixture.json

    @Test func theStoreReplacesClearsAndReplaysInOrderWhatWasSet() throws {
        var store = RetainedStore()
        let keys = (0..<300).map { "found/ibeacon/\(Self.uuid)/0/\($0)#k\($0)" }
        for (k, key) in keys.enumerated() {
            let topic = String(key[..<key.firstIndex(of: "#")!])
            store.apply(BrokerEvent(topic: topic, json: Self.foundJSON.replacing("minor\":7", with: "minor\":\(k)"), retain: .set(key)))
        }
        store.apply(BrokerEvent(topic: "$SYS/power", json: #"{"power":"on"}"#, retain: .set("$SYS/power")))
        store.apply(BrokerEvent(topic: "t/other", json: "{\"n\":1}", retain: .set("another key")))
        store.apply(BrokerEvent(topic: "lost/x", json: "{}", retain: .clear(keys[1])))
        store.apply(BrokerEvent(topic: "found/ibeacon/x", json: "{\"again\":0}", retain: .set(keys[0])))
        #expect(store.count == 301)
        let found = store.matching(try TopicFilter(parsing: "found/#"))
        #expect(found.count == 299)
        #expect(found[0] == BrokerEvent(topic: "found/ibeacon/x", json: "{\"again\":0}"))   // replaced in place
        #expect(found[1].topic == "found/ibeacon/\(Self.uuid)/0/2")
        #expect(found[1].json == Self.foundJSON.replacing("minor\":7", with: "minor\":2"))
        #expect(store.matching(try TopicFilter(parsing: "$SYS/#")) == [BrokerEvent(topic: "$SYS/power", json: #"{"power":"on"}"#)])
        #expect(store.matching(try TopicFilter(parsing: "t/+")) == [BrokerEvent(topic: "t/other", json: "{\"n\":1}")])
    }
}
