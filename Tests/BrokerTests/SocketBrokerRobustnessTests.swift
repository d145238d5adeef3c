import Foundation
@testable import NearbyProtocol
import SplitMix
import Testing
@testable import Broker

@Suite struct SocketBrokerRobustnessTests {
    static let badLines: [([UInt8], String)] = [
        (Array("HELLO\n".utf8), "ERR unknown-verb "),
        (Array("SUB\n".utf8), "ERR missing-argument "),
        (Array("PUB a/b\n".utf8), "ERR missing-argument "),
        (Array("PUB a/b %%%\n".utf8), "ERR bad-base64 "),
        (Array("SUB a/#/b\n".utf8), "ERR bad-filter "),
        (Array("SUB a+\n".utf8), "ERR bad-filter "),
        (Array("SET power off\n".utf8), "ERR bad-argument "),
        (Array("GET\n".utf8), "ERR missing-argument "),
        (Array("UNPUB nope\n".utf8), "ERR not-found "),            // from the handler
        ([UInt8](repeating: 0x41, count: 5000) + [0x0A], "ERR too-long "),
        (Array("SUB ".utf8) + [UInt8](repeating: 0x61, count: 4092) + [0x0A], "ERR too-long "),   // 4097 with \n
        (Array("PI".utf8) + [0x00] + Array("NG\n".utf8), "ERR bad-encoding "),
        ([0xFF, 0xFE, 0x0A], "ERR bad-encoding "),
        (Array("SUB ".utf8) + [0xC3, 0x28] + [0x0A], "ERR bad-encoding "),
        (Array("PING\r\n".utf8), "PONG"),
        (Array("SUB ".utf8) + [UInt8](repeating: 0x61, count: 1000) + Array("\r\n".utf8), "OK"),
        (Array("PING\n".utf8), "PONG"),
    ]

    @Test func badInputGetsAnErrorAndTheConnectionStaysUsable() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        for (bytes, expected) in Self.badLines {
            try await client.send(bytes: bytes)
            let reply = try await client.line()
            #expect(reply == expected || (expected.hasSuffix(" ") && reply.hasPrefix(expected)), "\(bytes.prefix(20)) → \(reply)")
            try await client.ping()
        }
        // A line of exactly 4096 bytes including its newline is accepted.
        let filter = String(repeating: "b", count: 4096 - "SUB \n".utf8.count)
        try await client.send("SUB \(filter.prefix(1024))\(String(repeating: " ", count: filter.count - 1024))\n")
        #expect(try await client.line() == "OK")
        // Blank lines are ignored.
        try await client.send("\n\r\n   \nPING\n")
        #expect(try await client.line() == "PONG")
    }

    @Test func halfLineThenDisconnectIsIgnored() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        try await client.send("PING\nPUB a/b aGk=")
        #expect(try await client.line() == "PONG")
        client.client.shutdownWriting()
        #expect(try await client.linesUntilClosed() == [])
        client.close()
        #expect(await running.handler.wait { $0.disconnected.count == 1 })
        #expect(running.handler.state.withLock { $0.requests.isEmpty })   // the unterminated PUB never ran
        let other = try await SocketTestConnection.open(running.path)
        defer { other.close() }
        try await other.ping()
    }

    /// What `echo ... | socat - UNIX-CONNECT:...` does: send, close the writing side, read the answers.
    @Test func answersEverythingBeforeClosingAfterEndOfInput() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        try await client.send("GET stats\nPUB gate/x aGk=\nPING\n")
        client.client.shutdownWriting()
        #expect(await running.handler.wait { $0.requests.count == 2 })
        running.handler.openGate()
        #expect(try await client.linesUntilClosed() == [#"OK {"clients":1}"#, "OK p-1", "PONG"])
    }

    @Test func tenThousandCommandsInOneWrite() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let client = try await SocketTestConnection.open(running.path)
        defer { client.close() }
        var batch = ""
        var expected: [String] = []
        for index in 0..<10_000 {
            switch index % 4 {
            case 0: batch += "PING\n"; expected.append("PONG")
            case 1: batch += "GET power\n"; expected.append("OK value-of-power")
            case 2: batch += "NOPE\n"; expected.append("ERR")
            default: batch += "SUB t/\(index % 100)\n"; expected.append("OK")   // within the 256-subscription bound
            }
        }
        // Written from one thread while another reads: the broker pauses a client whose replies pile up.
        let sender = client.startSending(bytes: Array(batch.utf8))
        let replies = try await client.lines(10_000)
        try await sender.finished()
        #expect(replies.count == 10_000)
        #expect(zip(replies, expected).allSatisfy { $0.0 == $0.1 || ($0.1 == "ERR" && $0.0.hasPrefix("ERR unknown-verb")) })
        try await client.ping()
    }

    @Test func clientThatNeverReadsDoesNotBlockAReadingClient() async throws {
        let running = try SocketTestBroker.start { $0.outgoingLimitBytes = 64 * 1024 }
        defer { running.stop() }
        let stuck = try await SocketTestConnection.open(running.path)
        let reader = try await SocketTestConnection.open(running.path)
        defer { stuck.close(); reader.close() }
        try await stuck.send("SUB #\n")
        #expect(try await stuck.line() == "OK")
        try await reader.send("SUB #\n")
        #expect(try await reader.line() == "OK")
        // 4 MB of events in batches; the reader takes each batch before the next is published, the
        // stuck client takes nothing, so its socket buffer and its queue fill and the rest is dropped.
        let payload = String(repeating: "x", count: 400)
        let batches = 100, perBatch = 100
        for batch in 0..<batches {
            for index in 0..<perBatch {
                running.broker.publish(BrokerEvent(topic: "found/n/t", json: #"{"i":\#(batch * perBatch + index),"p":"\#(payload)"}"#))
            }
            let lines = try await reader.lines(perBatch)
            #expect(lines.count == perBatch)
            #expect(lines.last?.hasPrefix(#"found/n/t {"i":\#(batch * perBatch + perBatch - 1),"#) == true)
        }
        let statistics = running.broker.statistics
        #expect(statistics.eventsDropped > 0)
        // The stuck client now reads: what fitted, then the drop report, then live traffic again.
        let lines = try await socketOffPool { [client = stuck.client] in
            var lines: [String] = []
            while let line = try client.readLine(timeout: socketTestTimeout) {
                lines.append(line)
                if line.hasPrefix("$SYS/dropped") { break }
            }
            return lines
        }
        let report = try #require(lines.last)
        #expect(report == #"$SYS/dropped {"count":\#(statistics.eventsDropped),"retained":false}"#)
        #expect(lines.count - 1 + statistics.eventsDropped == batches * perBatch)
        try await stuck.ping()
    }

    /// 100,000 random and mutated lines over several connections (some cut mid-line), then a
    /// well-behaved client is served and the fuzzing connections still answer PING.
    @Test func survivesAHundredThousandRandomLines() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let connections = 4, linesPerConnection = 25_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for seed in 0..<connections {
                group.addTask {
                    let client = try await SocketTestConnection.open(running.path)
                    defer { client.close() }
                    var rng = SeededGenerator(seed: UInt64(seed) &* 7919 &+ 1)
                    var bytes: [UInt8] = []
                    for _ in 0..<linesPerConnection { bytes += SocketFuzz.line(&rng) + [0x0A] }
                    bytes += Array("\nUNPUB end-of-fuzz\n".utf8)   // a line the generator never makes
                    let sender = client.startSending(bytes: bytes)
                    let seen = try await socketOffPool { [client = client.client] in
                        var count = 0
                        while let line = try client.readLine(timeout: socketTestTimeout) {
                            count += 1
                            if line == "OK fuzz-done" { return count }
                        }
                        return -1
                    }
                    try await sender.finished()
                    #expect(seen > linesPerConnection / 2)
                    try await client.ping()
                }
            }
            // One connection that sends garbage and hangs up mid-line.
            group.addTask {
                let client = try await SocketTestConnection.open(running.path)
                var rng = SeededGenerator(seed: 99)
                try await client.send(bytes: (0..<5000).map { _ in UInt8(truncatingIfNeeded: rng.next()) } + Array("PUB a/b".utf8))
                client.close()
            }
            try await group.waitForAll()
        }
        let good = try await SocketTestConnection.open(running.path)
        defer { good.close() }
        try await good.send("SUB found/#\n")
        #expect(try await good.line() == "OK")
        running.broker.publish(BrokerEvent(topic: "found/after/fuzz", json: "{}"))
        #expect(try await good.line() == #"found/after/fuzz {"retained":false}"#)
        try await good.ping()
    }
}

/// Lines for the fuzz test: valid commands, mutations of them (flipped, inserted, deleted bytes) and
/// raw random bytes. Never contains `\n` (the test frames lines itself) and never `UNPUB end-of-fuzz`.
enum SocketFuzz {
    static let seeds = ["PING", "SUB #", "SUB $SYS/#", "SUB found/+/+", "UNSUB #", "PUB a/b aGk=", "PUB a/b aGk= mediums=ble mode=scan",
                        "UNPUB p-1", "SET permission granted", "SET power standby", "SET debug on", "GET stats", "GET errors",
                        "SUB a/#/b", "SUB a+", "PUB x aGk=", "PUB a/b !!!", "SET", "GET", "sub +/+/#"]

    static func line(_ rng: inout SeededGenerator) -> [UInt8] {
        var bytes: [UInt8]
        switch rng.next() % 4 {
        case 0: bytes = Array(seeds[Int(rng.next() % UInt64(seeds.count))].utf8)
        case 1, 2:
            bytes = Array(seeds[Int(rng.next() % UInt64(seeds.count))].utf8)
            for _ in 0..<(1 + rng.next() % 4) {
                let position = bytes.isEmpty ? 0 : Int(rng.next() % UInt64(bytes.count))
                let byte = UInt8(truncatingIfNeeded: rng.next())
                switch rng.next() % 3 {
                case 0 where !bytes.isEmpty: bytes[position] = byte
                case 1: bytes.insert(byte, at: position)
                default: if !bytes.isEmpty { bytes.remove(at: position) }
                }
            }
        default:
            bytes = (0..<(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if rng.next() % 50 == 0 { bytes += [UInt8](repeating: 0x41, count: 5000) }
        }
        return bytes.map { $0 == 0x0A ? 0x20 : $0 }
    }
}
