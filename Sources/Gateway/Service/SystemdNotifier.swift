#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

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
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }   // abstract socket
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        _ = message.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}
