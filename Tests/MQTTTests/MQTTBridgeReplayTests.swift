@testable import Config
import Foundation
import Logging
@testable import NearbyProtocol
import Synchronization
import Testing
@testable import MQTT

/// The bridge keeps no copy of the manager's retained events: it reads them from the socket broker
/// (`RetainedEventSource`) after a reconnect and when a lost topic falls back to another message.
/// Here the source is a fake fed the same events first (as `EventFanOut` feeds the broker first),
/// answering on a thread of its own as the broker's loop does; the bridge is driven the way its
/// connection loop drives it at a connect (the real broker and Mosquitto: `EndToEnd.MQTTBridge`).
@Suite struct MQTTBridgeReplayTests {
    final class FakeSource: RetainedEventSource {
        private let kept = Mutex<[(key: String, event: BrokerEvent)]>([])
        let asked = Atomic(0)

        func publish(_ event: BrokerEvent) {
            kept.withLock { kept in
                switch event.retain {
                case .none: break
                case .set(let key):
                    if let at = kept.firstIndex(where: { $0.key == key }) { kept[at].event = event } else { kept.append((key, event)) }
                case .clear(let key): kept.removeAll { $0.key == key }
                }
            }
        }

        func retainedEvents(topics: Set<String>?, answer: @escaping @Sendable ([BrokerEvent]?) -> Void) {
            asked.add(1, ordering: .relaxed)
            let events = kept.withLock { $0.map(\.event).filter { topics?.contains($0.topic) ?? true } }
            Thread { answer(events) }.start()
        }
    }

    static func found(_ name: String, topic: String? = nil) -> BrokerEvent {
        BrokerEvent(topic: "found/\(topic ?? "ibeacon/\(name)")", json: #"{"found":"\#(name)"}"#, retain: .set("found/\(topic ?? "ibeacon/\(name)")#\(name)"))
    }

    static func lost(_ name: String, topic: String? = nil) -> BrokerEvent {
        BrokerEvent(topic: "lost/\(topic ?? "ibeacon/\(name)")", json: #"{"lost":"\#(name)"}"#, retain: .clear("found/\(topic ?? "ibeacon/\(name)")#\(name)"))
    }

    @Test("after a reconnect the broker gets every retained found event from the source, and a key lost while disconnected is not replayed as found")
    func reconnectReplaysFromTheSource() throws {
        let settings = MQTTSettings(url: "unix:///nonexistent/mqtt.sock", transport: .unix(path: "/nonexistent/mqtt.sock"),
                                    prefix: "p", queue: 100, discovery: false)
        let source = FakeSource()
        let bridge = try MQTTBridge(settings: settings, password: nil, subscriptions: [], model: "test",
                                    logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, retainedSource: source)
        func publish(_ event: BrokerEvent) {
            source.publish(event)
            bridge.publish(event)
        }
        /// What the connection loop sends at a connect after the queue: the retained state less what
        /// the queue has just sent.
        func connect() -> (queued: [MQTTMessage], replay: [MQTTMessage]) {
            let queued = bridge.takeQueued()
            return (queued, MQTTOutbox.replay(bridge.retainedState(), after: queued))
        }

        for name in ["a", "b", "c"] { publish(Self.found(name)) }
        publish(Self.found("m1", topic: "ns/t"))
        publish(Self.found("m2", topic: "ns/t"))
        let first = connect()
        #expect(first.queued.count == 5)
        #expect(first.replay.isEmpty, "everything was just sent: \(first.replay)")

        // Disconnected: b and m2 are lost (m1 still holds their shared topic), d is found.
        publish(Self.lost("b"))
        publish(Self.lost("m2", topic: "ns/t"))
        publish(Self.found("d"))
        let second = connect()
        #expect(second.queued == [MQTTMessage(topic: "p/lost/ibeacon/b", payload: #"{"lost":"b"}"#, retain: false),
                                  MQTTMessage(topic: "p/found/ibeacon/b", payload: "", retain: true),
                                  MQTTMessage(topic: "p/lost/ns/t", payload: #"{"lost":"m2"}"#, retain: false),
                                  MQTTMessage(topic: "p/found/ns/t", payload: #"{"found":"m1"}"#, retain: true),
                                  MQTTMessage(topic: "p/found/ibeacon/d", payload: #"{"found":"d"}"#, retain: true)])
        // A restarted broker (nothing queued): every retained found event, and not b.
        let expected = ["a", "c", "m1", "d"].map { name in
            MQTTMessage(topic: "p/found/\(name == "m1" ? "ns/t" : "ibeacon/\(name)")", payload: #"{"found":"\#(name)"}"#, retain: true)
        }
        #expect(second.replay == expected.filter { $0.topic == "p/found/ibeacon/a" || $0.topic == "p/found/ibeacon/c" })
        let third = connect()
        #expect(third.queued.isEmpty)
        #expect(third.replay == expected)
        #expect(source.asked.load(ordering: .relaxed) == 4, "one question per connect, one for the fallback")
    }

    @Test("a bridge shutting down stops waiting for a source that never answers")
    func aSilentSourceDoesNotHoldTheShutdown() throws {
        final class Silent: RetainedEventSource {
            func retainedEvents(topics: Set<String>?, answer: @escaping @Sendable ([BrokerEvent]?) -> Void) {}
        }
        let settings = MQTTSettings(url: "unix:///nonexistent/mqtt.sock", transport: .unix(path: "/nonexistent/mqtt.sock"),
                                    queue: 100, discovery: false)
        let bridge = try MQTTBridge(settings: settings, password: nil, subscriptions: [], model: "test",
                                    logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, retainedSource: Silent())
        bridge.publish(Self.found("a"))
        bridge.shutdown()
        #expect(bridge.retainedState().isEmpty)
    }
}
