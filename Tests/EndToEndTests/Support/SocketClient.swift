import Foundation
import Gateway
import Synchronization

/// A line client of the gateway's UNIX socket, like `socat - UNIX-CONNECT:path` by hand.
final class SocketClient: Sendable {
    let path: String
    private let connection: SocketLineClient
    private let handle: FileHandle
    private let lines = Mutex<[String]>([])
    private let changed = ChangeSignal()

    /// Connects once: wait for the gateway's "listening" log line first. `reading: false` makes a
    /// client that never reads (its socket buffer fills, as a stuck UI's would).
    init(path: String, reading: Bool = true) throws {
        self.path = path
        connection = try SocketLineClient(path: path)
        handle = FileHandle(fileDescriptor: connection.fd, closeOnDealloc: false)
        guard reading else { return }
        let changed = self.changed
        let pending = Mutex<[UInt8]>([])
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                changed.signal()
                return
            }
            let complete = pending.withLock { buffer -> [String] in
                buffer.append(contentsOf: data)
                var out: [String] = []
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    out.append(String(decoding: buffer[..<newline], as: UTF8.self))
                    buffer.removeSubrange(...newline)
                }
                return out
            }
            if !complete.isEmpty {
                self?.lines.withLock { $0.append(contentsOf: complete) }
                changed.signal()
            }
        }
    }

    /// Sends one line (a newline is added).
    func send(_ line: String) {
        handle.write(Data((line + "\n").utf8))
    }

    func sendRaw(_ bytes: [UInt8]) {
        handle.write(Data(bytes))
    }

    var received: [String] { lines.withLock { $0 } }

    /// Waits for the first line, after the first `after` lines, that satisfies `predicate`.
    @discardableResult
    func waitForLine(after: Int = 0, timeout: Duration = .seconds(10), what: String,
                     _ predicate: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = changed.generation
            let snapshot = received
            if snapshot.count > after, let line = snapshot[after...].first(where: predicate) { return line }
            guard ContinuousClock.now < deadline else {
                throw TimeoutError(description: "no line \(what) on \(path) within \(timeout); got:\n\(snapshot.joined(separator: "\n"))")
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

    func close() {
        handle.readabilityHandler = nil
        connection.close()
    }
}
