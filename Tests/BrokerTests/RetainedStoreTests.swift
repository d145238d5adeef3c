@testable import Broker
import NearbyProtocol
import Testing

/// The retained store, in `RetainedCodec`'s form, replays what was set (docs/footprint-found.md).
@Suite struct RetainedStoreTests {
    static let uuid = "f100d500-0000-0000-0000-000000000000"
    static let foundJSON = #"{"namespace":"ibeacon","type":"\#(uuid)/0/7","content":"8QDVAAAAAAAAAAAAAAAAAAAHAAE=","text":null,"#
        + #""medium":"ble","rssi":-61,"first_seen":"2026-11-27T02:10:11.123Z","last_seen":"2026-11-27T02:10:11.123Z","#
        + #""rssi_avg":-61.0,"distance_m":1.20,"uuid":"\#(uuid)","major":0,"minor":7,"tx_power":-59}"#

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
