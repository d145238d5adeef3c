import Foundation
import Logging
import Synchronization

/// The level every gateway logger follows; `SET debug on|off` changes it at run time.
public final class SharedLogLevel: Sendable {
    private let level: Mutex<Logger.Level>
    public init(_ level: Logger.Level) { self.level = Mutex(level) }
    public var value: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
}

/// One line per record on stderr (journald adds its own timestamp under systemd; we keep ours for
/// people reading a terminal): `2026-11-23T11:00:00.123Z info [radio] message key=value`.
public struct GatewayLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let sharedLevel: SharedLogLevel
    private static let output = Mutex(FileHandle.standardError)

    public init(label: String, level: SharedLogLevel) {
        self.label = label
        self.sharedLevel = level
    }

    public var logLevel: Logger.Level {
        get { sharedLevel.value }
        set { sharedLevel.value = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        line += " \(event.level) [\(label)] \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += "\n"
        let data = Data(line.utf8)
        Self.output.withLock { $0.write(data) }
    }
}
