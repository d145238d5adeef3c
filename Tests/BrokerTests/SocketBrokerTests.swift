import Foundation
@testable import NearbyProtocol
import Testing
@testable import Broker

@Suite struct SocketBrokerRoutingTests {
    @Test func subscriptionsRouteEventsWithMQTTWildcards() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let found = try await SocketTestConnection.open(running.path)
        let everything = try await SocketTestConnection.open(running.path)
        let system = try await SocketTestConnection.open(running.path)
        defer { found.close(); everything.close(); system.close() }
        try await found.send("SUB found/+/+\n")
        try await everything.send("SUB #\n")
        try await system.send("SUB $SYS/#\n")
        for connection in [found, everything, system] { #expect(try await connection.line() == "OK") }

        running.broker.publish(BrokerEvent(topic: "found/a/b", json: #"{"n":1}"#))
        running.broker.publish(BrokerEvent(topic: "lost/a/b", json: #"{"n":2}"#))
        running.broker.publish(BrokerEvent(topic: "$SYS/permission", json: #"{"n":3}"#))
        running.broker.publish(BrokerEvent(topic: "found/a/b/c", json: #"{"n":4}"#))

        // PING after the events is a barrier: every event queued for a client comes before its PONG.
        try await found.send("PING\n")
        #expect(try await found.lines(2) == [#"found/a/b {"n":1,"retained":false}"#, "PONG"])
        try await everything.send("PING\n")
        #expect(try await everything.lines(4) == [#"found/a/b {"n":1,"retained":false}"#, #"lost/a/b {"n":2,"retained":false}"#,
                                                  #"found/a/b/c {"n":4,"retained":false}"#, "PONG"])
        try await system.send("PING\n")
        #expect(try await system.lines(2) == [#"$SYS/permission {"n":3,"retained":false}"#, "PONG"])

        // UNSUB stops delivery; overlapping filters still deliver one copy.
        try await found.send("SUB found/a/#\nUNSUB found/+/+\n")
        #expect(try await found.lines(2) == ["OK", "OK"])
        running.broker.publish(BrokerEvent(topic: "found/a/z", json: #"{"n":5}"#))
        running.broker.publish(BrokerEvent(topic: "found/b/z", json: #"{"n":6}"#))
        try await found.send("PING\n")
        #expect(try await found.lines(2) == [#"found/a/z {"n":5,"retained":false}"#, "PONG"])
    }

    @Test func lateSubscriberGetsRetainedEventsFirst() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let broker = running.broker
        broker.publish(BrokerEvent(topic: "found/room/greeting", json: #"{"k":1}"#, retain: .set("m1")))
        broker.publish(BrokerEvent(topic: "found/room/greeting", json: #"{"k":2}"#, retain: .set("m2")))   // same topic, own key
        broker.publish(BrokerEvent(topic: "found/hall/door", json: #"{"k":3}"#, retain: .set("m3")))
        broker.publish(BrokerEvent(topic: "$SYS/permission/request", json: "{}", retain: .set("permission-request")))
        broker.publish(BrokerEvent(topic: "lost/room/greeting", json: #"{"k":1}"#, retain: .clear("m1")))
        broker.publish(BrokerEvent(topic: "found/hall/door", json: #"{"k":4}"#, retain: .set("m3")))    // replaces m3 in place

        let late = try await SocketTestConnection.open(running.path)
        defer { late.close() }
        try await late.send("SUB found/#\n")
        #expect(try await late.lines(3) == ["OK", #"found/room/greeting {"k":2,"retained":true}"#, #"found/hall/door {"k":4,"retained":true}"#])
        try await late.send("SUB $SYS/#\n")
        #expect(try await late.lines(2) == ["OK", #"$SYS/permission/request {"retained":true}"#])
        try await late.ping()   // nothing else was replayed

        broker.publish(BrokerEvent(topic: "found/room/greeting", json: #"{"k":5}"#, retain: .set("m5")))
        #expect(try await late.line() == #"found/room/greeting {"k":5,"retained":false}"#)
        #expect(running.broker.statistics.retained == 4)
    }

    @Test func repliesToOneClientKeepTheOrderOfItsCommands() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        try await client.send("PUB gate/t aGk=\nPING\nGET power\nSUB x\nPUB a/b aGk=\nPING\n")
        // The handler holds the first PUB; nothing after it may overtake it.
        #expect(await running.handler.wait { $0.requests.count == 1 })
        running.handler.openGate()
        #expect(try await client.lines(6) == ["OK p-1", "PONG", "OK value-of-power", "OK", "OK p-2", "PONG"])
        let info = try #require(running.handler.state.withLock { $0.requests.first?.1 })
        #expect(info.pid == getpid())
        #expect(info.uid == getuid())
    }

    @Test func disconnectReachesTheHandlerAfterTheRequestInFlight() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        try await client.send("PUB gate/t aGk=\n")
        #expect(await running.handler.wait { $0.requests.count == 1 })
        client.close()
        // The broker sees the hang-up while the PUB is still held; the disconnect must wait for it.
        let other = try await SocketTestConnection.open(running.path)
        defer { other.close() }
        try await other.ping()
        running.handler.openGate()
        #expect(await running.handler.wait { $0.disconnected.count == 1 })
        let log = running.handler.state.withLock { $0.log }
        #expect(log == ["handle client-1", "handled client-1", "disconnected client-1"])
    }

    @Test func clientsBeyondMaxClientsGetAnErrorAndAreClosed() async throws {
        let running = try SocketTestBroker.start { $0.maxClients = 2 }
        defer { running.stop() }
        let first = try await SocketTestConnection.open(running.path)
        let second = try await SocketTestConnection.open(running.path)
        try await first.ping()
        try await second.ping()
        let third = try await SocketTestConnection.open(running.path)
        let refused = try await third.linesUntilClosed()
        #expect(refused.count == 1)
        #expect(refused.first?.hasPrefix("ERR too-many-clients ") == true)
        third.close()
        second.close()
        // Once the broker has noticed the hang-up, a new client is admitted.
        #expect(await running.handler.wait { $0.disconnected.count == 1 })
        let fourth = try await SocketTestConnection.open(running.path)
        defer { fourth.close(); first.close() }
        try await fourth.ping()
        try await first.ping()
        #expect(running.broker.statistics.clientsRefused == 1)
    }

    @Test func shutdownClosesClientsAndRemovesTheSocketFile() async throws {
        let running = try SocketTestBroker.start()
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        try await client.ping()
        running.broker.shutdown()
        #expect(try await client.linesUntilClosed() == [])
        #expect(!FileManager.default.fileExists(atPath: running.path))
        running.stop()   // a second shutdown is harmless
    }
}

/// Write coalescing (`writeCoalescingNanoseconds`) must not change what a client sees, only how many
/// writes carry it. A one-hour window makes every hold outlast the test, so nothing here depends on
/// timing: whatever arrives can only have been written because a rule says it must be.
@Suite struct SocketBrokerCoalescingTests {
    @Test func aReplyIsNeverHeldAndCarriesTheHeldEventsBeforeIt() async throws {
        let running = try SocketTestBroker.start { $0.writeCoalescingNanoseconds = 3_600 * 1_000_000_000 }
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        try await client.send("SUB found/#\n")
        #expect(try await client.line() == "OK")   // just written: the next events are held
        var expected: [String] = []
        for n in 0..<1_000 {
            running.broker.publish(BrokerEvent(topic: "found/a/b", json: "{\"n\":\(n)}"))
            expected.append("found/a/b {\"n\":\(n),\"retained\":false}")
        }
        // Published before the PING, so they come before the PONG, in order, although the window
        // has not ended: the PONG is not held, and the held events go out ahead of it.
        try await client.send("PING\n")
        #expect(try await client.lines(1_001) == expected + ["PONG"])
    }

    @Test func heldEventsAreWrittenAtShutdown() async throws {
        let running = try SocketTestBroker.start { $0.writeCoalescingNanoseconds = 3_600 * 1_000_000_000 }
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        try await client.send("SUB found/#\n")
        #expect(try await client.line() == "OK")
        running.broker.publish(BrokerEvent(topic: "found/a/b", json: #"{"n":1}"#))
        running.stop()
        #expect(try await client.linesUntilClosed() == [#"found/a/b {"n":1,"retained":false}"#])
    }
}
