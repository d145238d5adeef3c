#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import SystemCall

/// `sd_notify(3)` without libsystemd: one datagram to `$NOTIFY_SOCKET` (a path, or `@name` for the
/// abstract namespace). Does nothing when not started by systemd.
struct SystemdNotifier: Sendable {
    let socketPath: String?
    /// Half of `$WATCHDOG_USEC`, the interval systemd's docs recommend, when the watchdog is on.
    let watchdogInterval: Duration?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int.init), usec > 0 {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
    }

    func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    func status(_ text: String) { send("STATUS=\(text)") }
    func watchdog() { send("WATCHDOG=1") }
    func stopping() { send("STOPPING=1") }
    func reloading() { send("RELOADING=1") }

    private func send(_ message: String) {
        // `@name` is the abstract namespace; a path that is no socket address is not notified.
        guard let socketPath, let address = try? UnixAddress(path: socketPath, abstract: true) else { return }
        guard let fd = try? SystemCall.retrying({ Descriptor.socket(AF_UNIX, SOCK_DGRAM) }) else { return }
        defer { close(fd) }
        var text = message
        _ = text.withUTF8 { address.send(fd, UnsafeRawBufferPointer($0), flags: Int32(MSG_NOSIGNAL)) }
    }
}
