import SystemCall
import Testing

@testable import Radio

#if canImport(Glibc)
import Glibc
#endif

/// This machine's kernel has no Bluetooth: opening hci0 must fail with a typed error naming the
/// device and the errno, and a radio on it must report that once and keep running. On a kernel
/// with Bluetooth (a Pi, the qemu system test) the same holds for a device that does not exist.
@Suite("Kernel HCI transport without a device")
struct KernelTransportTests {
    /// What the kernel says to an AF_BLUETOOTH socket here, asked directly.
    static let socketErrno: Int32? = {
        let fd = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
        if fd >= 0 {
            close(fd)
            return nil
        }
        return errno
    }()

    /// hci0 where the kernel has no Bluetooth (the socket call fails); else a device index no
    /// machine has, which the bind refuses with ENODEV.
    static let (index, expectedErrno): (Int, Int32) = socketErrno.map { (0, $0) } ?? (999, ENODEV)

    @Test(arguments: [false, true])
    func openingFailsWithTheDeviceAndErrno(exclusive: Bool) throws {
        let expected = Self.expectedErrno
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let error = try #require(throws: RadioError.self) { _ = try RadioDevice.kernel(index: Self.index, exclusive: exclusive).open(loop: loop) }
        #expect(error.device == "hci\(Self.index)")
        #expect(error.errno?.rawValue == expected)
        #expect(error.kind == (expected == EPERM || expected == EACCES ? .permission : .unavailable))
        #expect(error.description.hasPrefix("hci\(Self.index): "))
    }

    @Test func aRadioOnAMissingDeviceReportsDownOnceWithTheCause() async throws {
        let expected = Self.expectedErrno
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = Radio(
            device: try RadioDevice(parsing: "hci\(Self.index)", exclusive: false),
            configuration: RadioConfiguration(reconnectInitialDelay: .milliseconds(1), reconnectMaximumDelay: .milliseconds(5)),
            logger: quietLogger, loop: loop)
        let task = Task { await radio.run() }
        let down = try await first("down", in: radio.events) { $0.downError }
        #expect(down.errno?.rawValue == expected)
        #expect(down.device == "hci\(Self.index)")
        task.cancel()
        // Many retries happened meanwhile; the stream ends with no second `down`.
        var more: [RadioEvent] = []
        for await event in radio.events { more.append(event) }
        #expect(more.allSatisfy { $0.downError == nil })
    }

    @Test func errnoKinds() {
        #expect(RadioError.Kind(errno: EPERM) == .permission)
        #expect(RadioError.Kind(errno: EACCES) == .permission)
        #expect(RadioError.Kind(errno: EAFNOSUPPORT) == .unavailable)
        #expect(RadioError.Kind(errno: ENODEV) == .unavailable)
        #expect(RadioError.Kind(errno: EBUSY) == .unavailable)
    }
}
