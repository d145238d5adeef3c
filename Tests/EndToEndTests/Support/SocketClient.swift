import Foundation
import Glibc
import LineClient
import Synchronization

/// A line client of the gateway's UNIX socket, like `socat - UNIX-CONNECT:path` by hand.
final class SocketClient: Sendable {
    let path: String
    private let connection: SocketLineClient
    private let lines = Mutex<[String]>([])
    private let changed = ChangeSignal()
    private let reading: Bool

    /// Connects once: wait for the gateway's "listening" log line first. `reading: false` makes a
    /// client that never reads (its socket buffer fills, as a stuck UI's would).
    ///
    /// A reading client has its own thread in a blocking `readLine` (Foundation's
    /// `readabilityHandler` stopped firing under load, with replies unread in the socket).
    init(path: String, reading: Bool = true) throws {
        self.path = path
        self.reading = reading
        connection = try SocketLineClient(path: path)
        guard reading else { return }
        let reader = Thread { [self] in
            // Ends at end of stream: the gateway closed, or `close()` shut the socket down. The
            // reader closes the descriptor itself, so it never reads one that was reused.
            while let line = try? connection.readLine(timeout: nil) {
                lines.withLock { $0.append(line) }
                changed.signal()
            }
            connection.close()
            changed.signal()
        }
        reader.name = "SocketClient \(path)"
        reader.start()
    }

    /// Sends one line (a newline is added).
    func send(_ line: String) {
        sendRaw(Array((line + "\n").utf8))
    }

    /// Blocks until all is written; a gateway that closed the connection is found out by the reads.
    func sendRaw(_ bytes: [UInt8]) {
        try? connection.send(bytes)
    }

    var received: [String] { lines.withLock { $0 } }

    /// For waits of other kinds (`ask`): take the generation before checking, then wait for a change.
    var changedGeneration: Int { changed.generation }

    func waitForChange(since seen: Int, until deadline: ContinuousClock.Instant) async {
        await changed.wait(since: seen, until: deadline)
    }

    /// Waits for the first line, after the first `after` lines, that satisfies `predicate`.
    @discardableResult
    func waitForLine(after: Int = 0, timeout: Duration = .seconds(10), what: String,
                     _ predicate: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        // Only lines not looked at yet are tested: a flood of 100,000 replies must not make every
        // wake-up rescan all of them.
        var next = after
        while true {
            try Task.checkCancellation()
            let seen = changed.generation
            let snapshot = received
            if snapshot.count > next, let line = snapshot[next...].first(where: predicate) { return line }
            next = max(next, snapshot.count)
            guard ContinuousClock.now < deadline else {
                let diagnostics = RadioDiagnostics.needsTheAir(what) ? RadioDiagnostics.report() : ""
                throw TimeoutError(description: "no line \(what) on \(path) within \(timeout); got:\n\(snapshot.joined(separator: "\n"))\(diagnostics)")
            }
            await changed.wait(since: seen, until: deadline)
        }
    }

    /// Waits for a line starting with `prefix`.
    @discardableResult
    func waitForLine(startingWith prefix: String, after: Int = 0, timeout: Duration = .seconds(10)) async throws -> String {
        try await waitForLine(after: after, timeout: timeout, what: "starting with '\(prefix)'") { $0.hasPrefix(prefix) }
    }

    /// Sends a command and returns its reply line (the first OK/ERR/PONG after it).
    func request(_ line: String, timeout: Duration = .seconds(5)) async throws -> String {
        let before = received.count
        send(line)
        return try await waitForLine(after: before, timeout: timeout, what: "reply to '\(line)'") {
            $0.hasPrefix("OK") || $0.hasPrefix("ERR") || $0 == "PONG"
        }
    }

    /// `GET found`: the JSON object of each `$SYS/found` line, up to the closing `OK <count>`.
    func requestFound(timeout: Duration = .seconds(5)) async throws -> [String] {
        try await requestList("found", timeout: timeout)
    }

    /// `GET <key>` of a list reading (found, subscriptions): the JSON object of each `$SYS/<key>`
    /// line, up to the closing `OK <count>`.
    func requestList(_ key: String, timeout: Duration = .seconds(5)) async throws -> [String] {
        let before = received.count
        send("GET \(key)")
        try await waitForLine(startingWith: "OK ", after: before, timeout: timeout)
        let prefix = "$SYS/\(key) "
        return received[before...].prefix { !$0.hasPrefix("OK ") }.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    func close() {
        if reading {
            _ = Glibc.shutdown(connection.fd, Int32(SHUT_RDWR))
        } else {
            connection.close()
        }
    }
}
