import Synchronization
import SystemCall
import Testing

@testable import Radio

#if canImport(Glibc)
import Glibc
#endif

/// Issue 41: a shared kernel adapter that is down is brought up (HCIDEVUP), and when it cannot be, the
/// error is the power error and says what would fix it. A fake kernel answers; the real one is the
/// system test's `gateway-ble-bring-up` on hci_vhci.
@Suite struct AdapterPowerTests {
    final class FakeKernel: AdapterKernel {
        let up: Result<Bool, Errno>
        let bringUpResult: Errno?
        let bringUps = Mutex(0)

        init(up: Result<Bool, Errno>, bringUp: Errno? = nil) {
            self.up = up
            bringUpResult = bringUp
        }

        func isUp(index: Int) throws(Errno) -> Bool { try up.get() }

        func bringUp(index: Int) throws(Errno) {
            bringUps.withLock { $0 += 1 }
            if let bringUpResult { throw bringUpResult }
        }
    }

    @Test func anAdapterThatIsUpIsLeftAlone() throws {
        let kernel = FakeKernel(up: .success(true))
        #expect(try AdapterPower.ensureUp(index: 0, device: "hci0", kernel: kernel) == .wasUp)
        #expect(kernel.bringUps.withLock { $0 } == 0)
    }

    @Test func anAdapterThatIsDownIsBroughtUp() throws {
        let kernel = FakeKernel(up: .success(false))
        #expect(try AdapterPower.ensureUp(index: 0, device: "hci0", kernel: kernel) == .broughtUp)
        #expect(kernel.bringUps.withLock { $0 } == 1)
    }

    @Test func upMeanwhileIsNoError() throws {
        let kernel = FakeKernel(up: .success(false), bringUp: Errno(rawValue: EALREADY))
        #expect(try AdapterPower.ensureUp(index: 0, device: "hci0", kernel: kernel) == .wasUp)
    }

    @Test func rfkillIsAPowerErrorNamingRfkill() {
        let kernel = FakeKernel(up: .success(false), bringUp: Errno(rawValue: ERFKILL))
        let error = #expect(throws: RadioError.self) { try AdapterPower.ensureUp(index: 0, device: "hci0", kernel: kernel) }
        #expect(error?.kind == .unavailable)
        #expect(error?.errno?.rawValue == ERFKILL)
        #expect(error?.operation == "HCIDEVUP")
        #expect(error?.message.contains("rfkill unblock bluetooth") == true, "\(String(describing: error))")
    }

    /// EPERM would make any other failure `.permission` (bluetooth-permission); here the adapter being
    /// off is the problem, so it is the power error, naming the commands that turn it on.
    @Test(arguments: [EPERM, EACCES])
    func noCapabilityIsAPowerErrorNamingTheFix(code: Int32) {
        let kernel = FakeKernel(up: .success(false), bringUp: Errno(rawValue: code))
        let error = #expect(throws: RadioError.self) { try AdapterPower.ensureUp(index: 1, device: "hci1", kernel: kernel) }
        #expect(error?.kind == .unavailable)
        #expect(error?.errno?.rawValue == code)
        #expect(error?.message.contains("hciconfig hci1 up") == true, "\(String(describing: error))")
        #expect(error?.message.contains("btmgmt --index 1 power on") == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("hci1: HCIDEVUP: ") == true)
    }

    @Test func otherFailuresKeepTheirErrno() {
        let missing = FakeKernel(up: .failure(Errno(rawValue: ENODEV)))
        let error = #expect(throws: RadioError.self) { try AdapterPower.ensureUp(index: 7, device: "hci7", kernel: missing) }
        #expect(error?.errno?.rawValue == ENODEV && error?.operation == "HCIGETDEVINFO")
        #expect(missing.bringUps.withLock { $0 } == 0)
        let failing = FakeKernel(up: .success(false), bringUp: Errno(rawValue: EIO))
        let io = #expect(throws: RadioError.self) { try AdapterPower.ensureUp(index: 0, device: "hci0", kernel: failing) }
        #expect(io?.errno?.rawValue == EIO && io?.kind == .unavailable && io?.operation == "HCIDEVUP")
    }

    /// Taken down while in use, a shared adapter first fails with ENETDOWN; the retries then fail at
    /// HCIDEVUP with a remedy. That one is reported too (once), so the power error says what fixes it.
    @Test func aRadioReportsDownAgainOnceTheFailureNamesAFix() async throws {
        let (eightAttempts, reached) = AsyncStream<Void>.makeStream()
        let attempts = Mutex(0)
        let loop = try EventLoop(name: "radio-test")
        defer { loop.shutdown() }
        let radio = Radio(
            name: "hci0", configuration: RadioConfiguration(reconnectInitialDelay: .milliseconds(1), reconnectMaximumDelay: .milliseconds(2)),
            logger: quietLogger, loop: loop
        ) { _, _ throws(RadioError) in
            let attempt = attempts.withLock { $0 += 1; return $0 }
            if attempt == 8 { reached.yield() }
            if attempt == 1 {
                throw RadioError(kind: .unavailable, device: "hci0", operation: "Read Local Version", errno: Errno(rawValue: ENETDOWN), message: "down")
            }
            throw RadioError(kind: .unavailable, device: "hci0", operation: "HCIDEVUP", errno: Errno(rawValue: EPERM),
                             message: "may not bring it up", remedy: "hciconfig hci0 up")
        }
        let task = Task { await radio.run() }
        for await _ in eightAttempts { break }
        task.cancel()
        var downs: [RadioError] = []
        for await event in radio.events { if let error = event.downError { downs.append(error) } }
        #expect(downs.map(\.operation) == ["Read Local Version", "HCIDEVUP"], "\(downs)")
        #expect(downs.last?.remedy == "hciconfig hci0 up")
    }
}
