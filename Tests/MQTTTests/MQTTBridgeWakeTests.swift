@testable import Config
import Foundation
import Logging
@testable import NearbyProtocol
import Testing
@testable import MQTT

/// Issue 31: in the quick bench, found events reached the broker 1,005 ms after they were handed to
/// the bridge: a wake-up of the bridge's thread was lost and the events waited for its poll's 1 s
/// timeout. No timing here: the wake pipe itself says whether the thread would wake.
@Suite struct MQTTBridgeWakeTests {
    static func event(_ n: Int) -> BrokerEvent {
        BrokerEvent(topic: "found/room/t\(n)", json: #"{"n":\#(n)}"#, retain: .none)
    }

    /// Whether the bridge's poll would return at once: a byte waits in the wake pipe.
    static func wakes(_ bridge: MQTTBridge) -> Bool {
        var fd = pollfd(fd: bridge.wakeFD, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) == 1
    }

    @Test func anEventPublishedWhileTheThreadDrainsTheWakePipeStillWakesItNextTime() throws {
        let settings = MQTTSettings(url: "unix:///nonexistent/mqtt.sock", transport: .unix(path: "/nonexistent/mqtt.sock"),
                                    queue: 100, discovery: false)
        let bridge = try MQTTBridge(settings: settings, password: nil, subscriptions: [], model: "test",
                                    logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        bridge.publish(Self.event(1))
        #expect(Self.wakes(bridge))
        // The thread wakes and drains; another event comes in at that very moment.
        bridge.drainWake(afterReading: { bridge.publish(Self.event(2)) })
        #expect(bridge.takeQueued().count == 2, "the flush after the drain sends both")
        // The next event must wake the thread again, not wait for the poll's timeout.
        bridge.publish(Self.event(3))
        #expect(Self.wakes(bridge), "a wake-up was lost: the event waits for the poll timeout")
        bridge.drainWake()
        #expect(!Self.wakes(bridge))
        #expect(bridge.takeQueued().count == 1)
    }
}
