@testable import NearbyProtocol
import Testing
@testable import MQTT

@Suite struct MQTTOutboxTests {
    @Test func eventsGoUnderThePrefixWithTheSameJSON() {
        var outbox = MQTTOutbox(prefix: "house/nb", limit: 10)
        outbox.add(BrokerEvent(topic: "$SYS/debug", json: "{\"debug\":true}"))
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "{\"a\":1}", retain: .set("k1")))
        #expect(outbox.takeAll() == [MQTTMessage(topic: "house/nb/$SYS/debug", payload: "{\"debug\":true}", retain: false),
                                     MQTTMessage(topic: "house/nb/found/ns/t", payload: "{\"a\":1}", retain: true)])
        #expect(outbox.queued == 0)
    }

    @Test func lostClearsTheRetainedFoundOrFallsBackToAnotherOnTheSameTopic() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10)
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "A", retain: .set("a")))
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "B", retain: .set("b")))
        outbox.add(BrokerEvent(topic: "lost/ns/t", json: "lostB", retain: .clear("b")))
        outbox.add(BrokerEvent(topic: "lost/ns/t", json: "lostA", retain: .clear("a")))
        #expect(outbox.takeAll().suffix(4) == [MQTTMessage(topic: "p/lost/ns/t", payload: "lostB", retain: false),
                                               MQTTMessage(topic: "p/found/ns/t", payload: "A", retain: true),
                                               MQTTMessage(topic: "p/lost/ns/t", payload: "lostA", retain: false),
                                               MQTTMessage(topic: "p/found/ns/t", payload: "", retain: true)])
        #expect(outbox.retainedState.isEmpty)
    }

    @Test func aClearedErrorStaysRetainedAsCleared() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10)
        outbox.add(BrokerEvent(topic: "$SYS/error/mqtt", json: "{\"set\":true}", retain: .set("$SYS/error/mqtt")))
        outbox.add(BrokerEvent(topic: "$SYS/error/mqtt", json: "{\"set\":false}", retain: .clear("$SYS/error/mqtt")))
        #expect(outbox.takeAll().last == MQTTMessage(topic: "p/$SYS/error/mqtt", payload: "{\"set\":false}", retain: true))
    }

    @Test func retainedStateIsTheLatestPerTopicInFirstSetOrder() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10)
        outbox.add(BrokerEvent(topic: "$SYS/power", json: "1", retain: .set("$SYS/power")))
        outbox.add(BrokerEvent(topic: "found/x/y", json: "X", retain: .set("x")))
        outbox.add(BrokerEvent(topic: "$SYS/power", json: "2", retain: .set("$SYS/power")))
        #expect(outbox.retainedState == [MQTTMessage(topic: "p/$SYS/power", payload: "2", retain: true),
                                         MQTTMessage(topic: "p/found/x/y", payload: "X", retain: true)])
    }

    @Test func theReplayAtAConnectLeavesOutWhatTheQueueHasJustSent() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10)
        outbox.add(BrokerEvent(topic: "$SYS/power", json: "1", retain: .set("$SYS/power")))
        outbox.add(BrokerEvent(topic: "found/x/y", json: "X", retain: .set("x")))
        let firstFlush = outbox.takeAll()
        outbox.add(BrokerEvent(topic: "$SYS/power", json: "2", retain: .set("$SYS/power")))
        outbox.add(BrokerEvent(topic: "found/x/y", json: "X2", retain: .set("x2")))
        outbox.add(BrokerEvent(topic: "$SYS/power", json: "3", retain: .set("$SYS/power")))
        let queued = outbox.takeAll()
        // power went 2 then 3 (3 is current: not again); found/x/y shows X2 (sent): nothing is repeated.
        #expect(MQTTOutbox.replay(outbox.retainedState, after: queued).isEmpty)
        // After a connect with an empty queue (a broker restart), the whole state goes again.
        #expect(MQTTOutbox.replay(outbox.retainedState, after: []) == outbox.retainedState)
        #expect(MQTTOutbox.replay(outbox.retainedState, after: firstFlush).map(\.payload) == ["3", "X2"])
    }

    @Test func theQueueIsBoundedAndCountsWhatItDrops() {
        var outbox = MQTTOutbox(prefix: "p", limit: 3)
        for index in 0..<5000 { outbox.add(BrokerEvent(topic: "t", json: "\(index)")) }
        #expect(outbox.queued == 3)
        #expect(outbox.dropped == 4997)
        #expect(outbox.takeAll().map(\.payload) == ["4997", "4998", "4999"])
    }
}
