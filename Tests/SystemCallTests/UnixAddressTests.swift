import Glibc
import SystemCall
import Testing

/// The one `sockaddr_un` of the project (broker, btvirt's socket, systemd's `$NOTIFY_SOCKET`, the
/// benchmark's clients) and the one wake-up pipe (radio loop, broker inbox, MQTT bridge).
@Suite struct UnixAddressTests {
    @Test func aPathFitsUpTo107BytesAndNoNUL() throws {
        #expect(UnixAddress.capacity == 107)
        _ = try UnixAddress(path: "/" + String(repeating: "a", count: 106))
        #expect(throws: UnixAddress.Problem.tooLong(bytes: 108, capacity: 107)) {
            try UnixAddress(path: "/" + String(repeating: "a", count: 107))
        }
        #expect(throws: UnixAddress.Problem.empty) { try UnixAddress(path: "") }
        #expect(throws: UnixAddress.Problem.containsNUL) { try UnixAddress(path: "/tmp/a\u{0}b") }
        #expect("\(UnixAddress.Problem.tooLong(bytes: 108, capacity: 107))" == "socket path is 108 bytes, at most 107 fit")
    }

    @Test func aDatagramReachesAnAbstractName() throws {
        let name = "@nearby-unix-address-test-\(getpid())"
        let address = try UnixAddress(path: name, abstract: true)
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(receiver); close(sender) }
        #expect(address.bind(receiver) == 0)
        let sent = Array("READY=1".utf8).withUnsafeBytes { address.send(sender, $0, flags: Int32(MSG_NOSIGNAL)) }
        #expect(sent == 7)
        var buffer = [UInt8](repeating: 0, count: 16)
        let received = buffer.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(Array(buffer.prefix(max(received, 0))) == Array("READY=1".utf8))
    }

    @Test func aWakeMakesThePipeReadableUntilDrained() throws {
        let pipe = try WakePipe()
        var ready = pollfd(fd: pipe.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 0) == 0, "readable before any wake")
        for _ in 0..<100_000 { pipe.wake() }   // more than the pipe holds: a full pipe never blocks
        #expect(poll(&ready, 1, 0) == 1)
        pipe.drain()
        ready.revents = 0
        #expect(poll(&ready, 1, 0) == 0, "still readable after drain")
        #expect(fcntl(pipe.fd, F_GETFD) & FD_CLOEXEC != 0)
    }
}
