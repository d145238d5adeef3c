import Foundation
import LineClient
import SystemCall

extension SocketLineClient {
    /// The next `count` lines, each within `timeout`.
    func readLines(_ count: Int, timeout: Duration = .seconds(5)) throws -> [String] {
        var lines: [String] = []
        while lines.count < count {
            guard let line = try readLine(timeout: timeout) else {
                throw TimeoutError(description: "only \(lines.count) of \(count) lines on \(path) within \(timeout): \(lines)")
            }
            lines.append(line)
        }
        return lines
    }

    /// Every line still in the socket until the gateway's end of stream (after it died or closed us).
    func readUntilClosed(timeout: Duration = .seconds(5)) throws -> [String] {
        var lines: [String] = []
        while true {
            let next: Result<String?, SocketClientError> = Result { () throws(SocketClientError) in try readLine(timeout: timeout) }
            // ECONNRESET instead of end of stream when the gateway died with our lines unread; Linux
            // hands over everything it had written first.
            if case .failure(let error) = next, error.isEndOfStream || error.errno == Errno(rawValue: ECONNRESET) { return lines }
            guard let line = try next.get() else { throw TimeoutError(description: "no end of stream on \(path) within \(timeout) after: \(lines)") }
            lines.append(line)
        }
    }

    /// `GET background|permission|power`, as the snapshot the state file should hold.
    func stateSnapshot() throws -> StateSnapshot {
        try send(Array("GET background\nGET permission\nGET power\n".utf8))
        let replies = try readLines(3)
        let values = replies.map { $0.hasPrefix("OK ") ? String($0.dropFirst(3)) : "?\($0)" }
        return StateSnapshot(backgroundMode: values[0] == "on", permission: values[1], power: values[2])
    }
}

extension TestGatewayConfig {
    /// The state file as it is on disk now: nil when missing, the raw text when not a valid snapshot.
    func stateOnDisk() -> Result<StateSnapshot, StateFileDamage>? {
        guard let data = FileManager.default.contents(atPath: statePath) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let snapshot = StateSnapshot(json: text) else { return .failure(StateFileDamage(text: text)) }
        return .success(snapshot)
    }
}

struct StateFileDamage: Error, CustomStringConvertible {
    var text: String
    var description: String { "state file is not valid: \(text.debugDescription)" }
}
