import Foundation
import Glibc
import SystemCall
import Testing

/// Every descriptor `Descriptor` opens is close-on-exec from the call that made it.
@Suite struct DescriptorTests {
    static func closeOnExec(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) & FD_CLOEXEC != 0 }
    static func nonBlocking(_ fd: Int32) -> Bool { fcntl(fd, F_GETFL) & O_NONBLOCK != 0 }

    @Test func socketsOpenAndPipesAreCloseOnExec() throws {
        let stream = try SystemCall.retrying { Descriptor.socket(AF_UNIX, SOCK_STREAM) }
        defer { close(stream) }
        #expect(Self.closeOnExec(stream) && !Self.nonBlocking(stream))
        let datagram = try SystemCall.retrying { Descriptor.socket(AF_UNIX, SOCK_DGRAM, nonBlocking: true) }
        defer { close(datagram) }
        #expect(Self.closeOnExec(datagram) && Self.nonBlocking(datagram))
        // Not a /proc/self file: qemu-user (the arm64 stage) emulates those with a descriptor of its own
        // making, which is not close-on-exec whatever open(2) was asked.
        let file = try SystemCall.retrying { Descriptor.open("/dev/null", O_RDONLY) }
        defer { close(file) }
        #expect(Self.closeOnExec(file))
        var ends: [Int32] = [-1, -1]
        try SystemCall.retrying { Descriptor.pipe(&ends, nonBlocking: true) }
        defer { ends.forEach { close($0) } }
        #expect(ends.allSatisfy { Self.closeOnExec($0) && Self.nonBlocking($0) })
    }

    @Test func anAcceptedAndAConnectedSocketAreCloseOnExec() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("descriptor-\(getpid()).sock").path
        unlink(path)
        defer { unlink(path) }
        let address = try UnixAddress(path: path)
        let listener = try SystemCall.retrying { Descriptor.socket(AF_UNIX, SOCK_STREAM) }
        defer { close(listener) }
        try SystemCall.retrying { address.bind(listener) }
        try SystemCall.retrying { listen(listener, 1) }
        let client = try address.connectStream()
        defer { close(client) }
        #expect(Self.closeOnExec(client))
        let accepted = try SystemCall.retrying { Descriptor.accept(listener, nonBlocking: true) }
        defer { close(accepted) }
        #expect(Self.closeOnExec(accepted) && Self.nonBlocking(accepted))
    }

    /// The radio's transport reads until EAGAIN, so its descriptor (opened blocking by libbluetooth or
    /// `connectStream`) is made non-blocking; a bad descriptor is -1 with EBADF, never a crash.
    @Test func aBlockingDescriptorIsMadeNonBlocking() throws {
        var ends: [Int32] = [-1, -1]
        try SystemCall.retrying { Descriptor.pipe(&ends, nonBlocking: false) }
        defer { ends.forEach { close($0) } }
        #expect(!Self.nonBlocking(ends[0]))
        try SystemCall.retrying { Descriptor.setNonBlocking(ends[0]) }
        #expect(Self.nonBlocking(ends[0]) && Self.closeOnExec(ends[0]))
        try SystemCall.retrying { Descriptor.setNonBlocking(ends[0]) }   // already: unchanged
        #expect(Self.nonBlocking(ends[0]))
        #expect(throws: Errno(rawValue: EBADF)) { try SystemCall.retrying { Descriptor.setNonBlocking(-1) } }
    }

    /// The HCI socket's queue (HCISocket.receiveBuffer) grows past the default: as root (or with
    /// CAP_NET_ADMIN) to what was asked, otherwise to net.core.rmem_max.
    @Test func aReceiveBufferGrowsToWhatWasAskedOrTheSystemsCap() throws {
        let fd = try SystemCall.retrying { Descriptor.socket(AF_UNIX, SOCK_DGRAM) }
        defer { close(fd) }
        let asked: Int32 = 4 << 20
        let granted = Descriptor.growReceiveBuffer(fd, to: asked)
        let cap = (try? String(contentsOfFile: "/proc/sys/net/core/rmem_max", encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        // The kernel reports twice the size set (its bookkeeping's share).
        #expect(granted >= 2 * (geteuid() == 0 ? asked : min(asked, cap)))
    }

    @Test func aConnectToNothingNamesTheCallAndItsErrno() throws {
        let address = try UnixAddress(path: "/nonexistent-\(getpid())/x.sock")
        #expect(throws: FailedCall("connect", Errno(rawValue: ENOENT))) { try address.connectStream() }
    }
}
