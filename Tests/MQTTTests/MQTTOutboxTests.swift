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

    @Test("A flood's burst, taken, leaves the queue with a trickle's capacity, not the burst's")
    func aTakenBurstGivesTheQueueBack() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10_000)
        for index in 0..<4_096 { outbox.add(BrokerEvent(topic: "t/\(index)", json: "{}")) }
        #expect(outbox.queueCapacity >= 4_096)
        #expect(outbox.takeAll().count == 4_096)
        #expect(outbox.queueCapacity <= MQTTOutbox.keptQueueCapacity, "\(outbox.queueCapacity) slots kept")
        // A trickle keeps its slots from one flush to the next.
        for index in 0..<10 { outbox.add(BrokerEvent(topic: "t/\(index)", json: "{}")) }
        _ = outbox.takeAll()
        #expect(outbox.queueCapacity >= 10)
    }

    @Test("retained found events come back byte for byte after a reconnect, and a lost one falls back to its own topic's other message only")
    func retainedCopiesAreKeptCompactlyAndExactly() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10_000)
        let uuid = "f100d500-0000-0000-0000-000000000000"
        func json(_ k: Int) -> String {
            #"{"namespace":"ibeacon","type":"\#(uuid)/0/\#(k)","content":"8QDVAAAAAAAAAAAAAAAAAAAHAAE=","text":null,"medium":"ble","#
                + #""rssi":null,"first_seen":"2026-11-27T02:10:11.123Z","last_seen":"2026-11-27T02:10:11.123Z","uuid":"\#(uuid)","minor":\#(k)}"#
        }
        for k in 0..<200 {
            outbox.add(BrokerEvent(topic: "found/ibeacon/\(uuid)/0/\(k)", json: json(k), retain: .set("found/ibeacon/\(uuid)/0/\(k)#\(k)")))
        }
        // A second message on topic …/0/1 (and none on …/0/10, whose topic starts with …/0/1's).
        outbox.add(BrokerEvent(topic: "found/ibeacon/\(uuid)/0/1", json: "{\"second\":1}", retain: .set("other")))
        _ = outbox.takeAll()
        #expect(outbox.retainedState == (0..<200).map { k in
            MQTTMessage(topic: "p/found/ibeacon/\(uuid)/0/\(k)", payload: k == 1 ? "{\"second\":1}" : json(k), retain: true)
        })
        outbox.add(BrokerEvent(topic: "lost/ibeacon/\(uuid)/0/1", json: "{}", retain: .clear("other")))
        outbox.add(BrokerEvent(topic: "lost/ibeacon/\(uuid)/0/10", json: "{}", retain: .clear("found/ibeacon/\(uuid)/0/10#10")))
        #expect(outbox.takeAll() == [MQTTMessage(topic: "p/lost/ibeacon/\(uuid)/0/1", payload: "{}", retain: false),
                                     MQTTMessage(topic: "p/found/ibeacon/\(uuid)/0/1", payload: json(1), retain: true),
                                     MQTTMessage(topic: "p/lost/ibeacon/\(uuid)/0/10", payload: "{}", retain: false),
                                     MQTTMessage(topic: "p/found/ibeacon/\(uuid)/0/10", payload: "", retain: true)])
        #expect(outbox.retainedState.count == 199)
    }

    @Test("after most retained found events are cleared, the copies' table is rebuilt smaller, once, and what is left stays")
    func theRetainedTableShrinksAfterALargeExpiry() {
        var outbox = MQTTOutbox(prefix: "p", limit: 100)
        for k in 0..<4096 { outbox.add(BrokerEvent(topic: "found/n/\(k)", json: "{\"k\":\(k)}", retain: .set("k\(k)"))) }
        let full = outbox.retainedBytes
        let early = outbox.takeShrunk()
        #expect(!early)
        for k in 0..<4000 { outbox.add(BrokerEvent(topic: "lost/n/\(k)", json: "{}", retain: .clear("k\(k)"))) }
        let (first, second) = (outbox.takeShrunk(), outbox.takeShrunk())
        #expect(first && !second)
        #expect(outbox.retainedBytes * 10 < full)
        #expect(outbox.retainedState.map(\.payload) == (4000..<4096).map { "{\"k\":\($0)}" })
    }
}

/// With `retainedElsewhere` (the gateway: the socket broker keeps the manager's retained events) the
/// outbox keeps no copy of them, only which keys are set and how many share a topic.
@Suite struct MQTTOutboxKeptElsewhereTests {
    @Test("the manager's retained events are sent, not copied; the bridge's own states are copied")
    func onlyOwnStatesAreCopied() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10, retainedElsewhere: true)
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "A", retain: .set("found/ns/t#a")))
        outbox.add(BrokerEvent(topic: "$SYS/power", json: "1", retain: .set("$SYS/power")))
        outbox.addOwn(BrokerEvent(topic: "ha/found", json: "1", retain: .set("ha/found")))
        #expect(outbox.takeAll() == [MQTTMessage(topic: "p/found/ns/t", payload: "A", retain: true),
                                     MQTTMessage(topic: "p/$SYS/power", payload: "1", retain: true),
                                     MQTTMessage(topic: "p/ha/found", payload: "1", retain: true)])
        #expect(outbox.retainedState == [MQTTMessage(topic: "p/ha/found", payload: "1", retain: true)])
        // The source's events (in the order first set, several on one topic: the last wins) come first.
        let kept = [BrokerEvent(topic: "found/ns/t", json: "A", retain: .set("found/ns/t#a")),
                    BrokerEvent(topic: "$SYS/power", json: "1", retain: .set("$SYS/power")),
                    BrokerEvent(topic: "found/ns/t", json: "B", retain: .set("found/ns/t#b"))]
        #expect(outbox.retainedState(with: kept) == [MQTTMessage(topic: "p/found/ns/t", payload: "B", retain: true),
                                                     MQTTMessage(topic: "p/$SYS/power", payload: "1", retain: true),
                                                     MQTTMessage(topic: "p/ha/found", payload: "1", retain: true)])
    }

    @Test("a lost empties its found topic, or marks it to be read from the source while another key holds it")
    func lostEmptiesOrFallsBack() {
        var outbox = MQTTOutbox(prefix: "p", limit: 10, retainedElsewhere: true)
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "A", retain: .set("found/ns/t#a")))
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "B", retain: .set("found/ns/t#b")))
        outbox.add(BrokerEvent(topic: "found/ns/t", json: "B", retain: .set("found/ns/t#b")))   // set again: still two keys
        _ = outbox.takeAll()
        outbox.add(BrokerEvent(topic: "lost/ns/t", json: "lostB", retain: .clear("found/ns/t#b")))
        outbox.add(BrokerEvent(topic: "lost/ns/t", json: "lostA", retain: .clear("found/ns/t#a")))
        outbox.add(BrokerEvent(topic: "lost/ns/t", json: "again", retain: .clear("found/ns/t#a")))   // not set: not retained
        #expect(outbox.takeAll() == [MQTTMessage(topic: "p/lost/ns/t", payload: "lostB", retain: false),
                                     MQTTMessage(topic: "p/found/ns/t", payload: "", retain: true, latestOf: "found/ns/t"),
                                     MQTTMessage(topic: "p/lost/ns/t", payload: "lostA", retain: false),
                                     MQTTMessage(topic: "p/found/ns/t", payload: "", retain: true),
                                     MQTTMessage(topic: "p/lost/ns/t", payload: "again", retain: false)])
        outbox.add(BrokerEvent(topic: "$SYS/error/mqtt", json: "{\"set\":true}", retain: .set("$SYS/error/mqtt")))
        outbox.add(BrokerEvent(topic: "$SYS/error/mqtt", json: "{\"set\":false}", retain: .clear("$SYS/error/mqtt")))
        #expect(outbox.takeAll().last == MQTTMessage(topic: "p/$SYS/error/mqtt", payload: "{\"set\":false}", retain: true))
    }

    @Test("after most keys are cleared, their tables are rebuilt smaller, once")
    func theKeysShrinkAfterALargeExpiry() {
        var outbox = MQTTOutbox(prefix: "p", limit: 100, retainedElsewhere: true)
        for k in 0..<4096 { outbox.add(BrokerEvent(topic: "found/n/\(k)", json: "{}", retain: .set("found/n/\(k)#\(k)"))) }
        let full = outbox.retainedBytes
        let early = outbox.takeShrunk()
        #expect(!early)
        for k in 0..<4000 { outbox.add(BrokerEvent(topic: "lost/n/\(k)", json: "{}", retain: .clear("found/n/\(k)#\(k)"))) }
        let (first, second) = (outbox.takeShrunk(), outbox.takeShrunk())
        #expect(first && !second)
        #expect(outbox.retainedBytes * 10 < full)
        // The 96 left still empty their own topics.
        _ = outbox.takeAll()
        outbox.add(BrokerEvent(topic: "lost/n/4095", json: "{}", retain: .clear("found/n/4095#4095")))
        let last = outbox.takeAll().last
        #expect(last == MQTTMessage(topic: "p/found/n/4095", payload: "", retain: true))
    }
}
