import FoundationEssentials
import Logging
import Synchronization
import SystemCall
#if canImport(Glibc)
import Glibc
#endif

/// The level every gateway logger follows; `SET debug on|off` and a reloaded `log_level` change it
/// at run time.
public final class SharedLogLevel: Sendable {
    private let level: Mutex<Logger.Level>
    /// `--log-level`: when given, it wins over the config's `log_level`, at start and after a reload.
    public let commandLine: Logger.Level?
    public init(_ level: Logger.Level, commandLine: Logger.Level? = nil) {
        self.level = Mutex(level)
        self.commandLine = commandLine
    }

    /// The level to run at outside `SET debug on`, for a config saying `configured`.
    public func base(configured: Logger.Level) -> Logger.Level { commandLine ?? configured }

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
    private static let output = LogOutput(fd: STDERR_FILENO)

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
        let site = LogRateLimiter.Site(file: event.file, line: event.line)
        Self.output.write(site: site, message: "\(event.message)") {
            var line = Self.timestamp()
            line += " \(event.level) [\(label)] \(event.message)"
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
            return line + "\n"
        } summary: { summary in
            "\(Self.timestamp()) warning [\(label)] \(summary.text) source=\(PathText.lastComponent(summary.site.file)):\(summary.site.line)\n"
        }
    }

    /// Writes the counts of lines still being suppressed (at exit, so none is lost).
    public static func flushSuppressed() {
        output.flush { summary in
            "\(timestamp()) warning [nearby-gateway] \(summary.text) source=\(PathText.lastComponent(summary.site.file)):\(summary.site.line)\n"
        }
    }

    private static func timestamp() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }
}

/// The log's file descriptor. Lines are written whole under one lock (so threads never interleave
/// them) with write(2): a reader that went away (EPIPE: journald restarted, `run … | head`) or a full
/// non-blocking stream (EAGAIN) costs the line, never the process. FileHandle.write traps on EPIPE.
/// The same lock owns the rate limiter: repeated lines from one call site are counted, not written.
final class LogOutput: Sendable {
    private let fd: Int32
    private let limiter = Mutex(LogRateLimiter())

    init(fd: Int32) { self.fd = fd }

    /// `format` runs only for a line that is written (a suppressed one costs no formatting).
    func write(site: LogRateLimiter.Site, message: @autoclosure () -> String, _ format: () -> String,
               summary: (LogRateLimiter.Summary) -> String) {
        limiter.withLock { limiter in
            let decision = limiter.admit(site, message: message(), now: SystemCall.monotonicNanoseconds())
            // EPIPE, EBADF... or EAGAIN (fewer bytes written): nobody can read this line; drop it.
            for pending in decision.summaries { _ = try? SystemCall.writeAll(summary(pending), to: fd) }
            if decision.admitted { _ = try? SystemCall.writeAll(format(), to: fd) }
        }
    }

    func flush(summary: (LogRateLimiter.Summary) -> String) {
        limiter.withLock { limiter in
            for pending in limiter.flush() { _ = try? SystemCall.writeAll(summary(pending), to: fd) }
        }
    }

}
