import Foundation
import Testing

extension EndToEnd {
    /// Issue 5's bad input and fan-out, against the real gateway (the broker's own tests use a fake
    /// handler; here every line reaches the real manager).
    @Suite(.serialized)
    struct SocketRobustness {
        @Test("100,000 random and mutated lines at a running gateway: it still serves a well-behaved client, and a client that never reads does not hold up one that does")
        func hostileAndStuckClientsHurtNobody() async throws {
            let folder = try TemporaryFolder("hostile")
            let key = TestEnvironment.uniqueAPIKey("hostile")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"den\"\ntype = \"lamp\"\ncontent = \"warm\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.subscriptions = ["namespace = \"den\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            let gatewayB = try await b.start()

            // A client that subscribes to everything and never reads.
            let stuck = try SocketClient(path: b.socketPath, reading: false)
            stuck.send("SUB #")
            stuck.send("SUB $SYS/#")

            // The hostile client: seeded random and mutated lines, valid verbs with broken arguments,
            // NUL, invalid UTF-8, CRLF, over-long lines, in large writes.
            let hostile = try SocketClient(path: b.socketPath)
            var generator = SeededGenerator(seed: 0x5EED)
            let valid = ["PING", "SUB found/#", "UNSUB found/#", "GET stats", "GET power", "SET debug off",
                         "PUB den/lamp d2FybQ==", "UNPUB p1", "SUB $SYS/#", "GET found"]
            var sent = 0
            while sent < 100_000 {
                var chunk = [UInt8]()
                for _ in 0..<1_000 {
                    chunk += HostileLines.line(from: valid, using: &generator)
                    chunk.append(UInt8(ascii: "\n"))
                }
                hostile.sendRaw(chunk)
                sent += 1_000
            }

            // Meanwhile a well-behaved client is served: PING answers, and a message published by
            // another gateway is found and delivered to it.
            let good = try SocketClient(path: b.socketPath)
            #expect(try await good.request("PING", timeout: .seconds(20)) == "PONG")
            _ = try await good.request("SUB found/#")
            let gatewayA = try await a.start()
            try await good.waitForLine(startingWith: "found/den/lamp ", timeout: .seconds(20))
            #expect(try await good.request("PING") == "PONG")
            // The hostile connection got answers (ERR for garbage) and is still usable too.
            #expect(hostile.received.contains { $0.hasPrefix("ERR ") })
            // Its flood may still be being answered here (replies come in order, after the flood's),
            // so the first reply after a PING can be an older line's: tie the check to a marker no
            // flood line produces, and expect the PING sent after it to be answered next.
            let before = hostile.received.count
            hostile.send("GET still-usable-marker")
            hostile.send("PING")
            let marker = try await hostile.waitForLine(after: before, timeout: .seconds(30), what: "the marker's ERR") {
                $0.contains("unknown key 'still-usable-marker'")
            }
            let markerIndex = try #require(hostile.received[before...].firstIndex(of: marker))
            let next = try await hostile.waitForLine(after: markerIndex + 1, timeout: .seconds(30), what: "the reply to PING") {
                $0.hasPrefix("OK") || $0.hasPrefix("ERR") || $0 == "PONG"
            }
            #expect(next == "PONG")
            #expect(gatewayB.isRunning)
            try await gatewayA.stop()
            #expect(try await gatewayB.stop() == 0)
        }
    }
}

/// Lines a careless or hostile client might send.
enum HostileLines {
    static func line(from valid: [String], using generator: inout SeededGenerator) -> [UInt8] {
        var bytes = Array(valid[Int(generator.next() % UInt64(valid.count))].utf8)
        switch generator.next() % 8 {
        case 0:   // pure random bytes (may contain NUL and invalid UTF-8, never a newline)
            bytes = (0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        case 1:   // flip bytes of a valid line
            for _ in 0..<3 where !bytes.isEmpty {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
        case 2:   // truncate
            bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count + 1))))
        case 3:   // CRLF
            bytes.append(UInt8(ascii: "\r"))
        case 4:   // over-long
            bytes += [UInt8](repeating: UInt8(ascii: "x"), count: 4_100)
        case 5:   // bad arguments
            bytes += Array(" \(generator.next()) +/# a/#/b =%".utf8)
        default:
            break
        }
        return bytes.map { $0 == UInt8(ascii: "\n") ? UInt8(ascii: " ") : $0 }
    }
}

/// SplitMix64: a tiny seeded generator, so a failing run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
