import Foundation
import Synchronization
import SystemCall

#if canImport(Glibc)
import Glibc
#endif

/// A scripted BLE controller on the H4 transport: a UNIX socket that `h4:<path>` radios (the
/// library's `Radio` or the `nearby-gateway` binary) connect to, answering every HCI command with
/// Command Complete, as a Broadcom-like Bluetooth 4.1 controller (legacy advertising only).
/// While scanning is enabled and `reporting` is on it delivers one advertising report every
/// `reportInterval` (20 ms unless told), of `advert` (a neighbour's phone unless told) with the RSSI
/// set in `rssi`. Turning `reporting` off makes the controller that goes quiet (issue 28): it keeps
/// answering commands but reports nothing. btvirt can do neither: it cannot go quiet, and it reports
/// every advert with RSSI 127 ("not available").
///
/// One connection at a time; each new connection is a reconnect of the radio (its HCI Reset is
/// counted in `resets`).
public final class ScriptedController: @unchecked Sendable {   // state behind `state`'s lock; fds owned by the threads
    public let path: String
    private struct State {
        var reporting = true
        var scanning = false
        var resets = 0
        var reportsSent = 0
        var rssi: Int8?
        /// The reports' random address, least significant byte first (HCI order).
        var address: [UInt8] = [1, 2, 3, 4, 5, 0xC6]
        var connection: Int32 = -1
        var stopped = false
    }
    private let state = Mutex(State())
    private let listener: Int32
    /// The opcode of every command answered, in order: a test's measure of the radio's progress.
    public let commands: AsyncStream<UInt16>
    private let commandSink: AsyncStream<UInt16>.Continuation
    /// The number of reports sent so far, after each one.
    public let reports: AsyncStream<Int>
    private let reportSink: AsyncStream<Int>.Continuation

    private let advert: [UInt8]?
    private let reportInterval: Duration

    public init(path: String, advert: [UInt8]? = nil, reportInterval: Duration = .milliseconds(20)) throws {
        self.path = path
        self.advert = advert
        self.reportInterval = reportInterval
        (commands, commandSink) = AsyncStream.makeStream()
        (reports, reportSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        unlink(path)
        listener = Descriptor.socket(AF_UNIX, SOCK_STREAM)
        let address = try? UnixAddress(path: path)
        let bound = address?.bind(listener) ?? -1
        guard listener >= 0, bound == 0, listen(listener, 4) == 0 else {
            throw PrivateAirError("scripted controller at \(path): \(Errno.current)")
        }
        Thread { [self] in acceptLoop() }.start()
        Thread { [self] in reportLoop() }.start()
    }

    /// Whether advertising reports are delivered while scanning.
    public var reporting: Bool {
        get { state.withLock { $0.reporting } }
        set { state.withLock { $0.reporting = newValue } }
    }

    /// HCI Resets received so far (one per connection of a radio that owns the controller).
    public var resets: Int { state.withLock { $0.resets } }
    public var reportsSent: Int { state.withLock { $0.reportsSent } }

    /// The RSSI of the reports from now on (nil: what `HCIEventBytes.legacyReport` puts there).
    public func setRSSI(_ value: Int8?) { state.withLock { $0.rssi = value } }

    /// The random address of the reports from now on, as written (most significant byte first,
    /// "70:81:94:0D:FB:AA"): a phone's resolvable private address, rotated by the test.
    public func setAddress(_ text: String) {
        let bytes = text.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        precondition(bytes.count == 6, "not an address: \(text)")
        state.withLock { $0.address = bytes.reversed() }
    }

    /// An iBeacon advert: flags, then Apple's manufacturer data with `uuid`, major, minor and the
    /// measured power at 1 m.
    public static func iBeacon(uuid: [UInt8], major: UInt16, minor: UInt16, measuredPower: Int8) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: measuredPower)]
    }

    public func stop() {
        let fd = state.withLock { state -> Int32 in
            state.stopped = true
            return state.connection
        }
        shutdown(listener, Int32(SHUT_RDWR))
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        unlink(path)
    }

    private func acceptLoop() {
        while true {
            guard let fd = try? SystemCall.retrying({ Descriptor.accept(listener, nonBlocking: false) }) else {
                close(listener)
                return
            }
            let previous = state.withLock { state -> Int32 in
                defer { state.connection = fd; state.scanning = false }
                return state.connection
            }
            if previous >= 0 { shutdown(previous, Int32(SHUT_RDWR)) }
            Thread { [self] in serve(fd) }.start()
        }
    }

    /// Reads H4 command packets and answers each one.
    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            guard let count = try? SystemCall.retrying({ chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) } }),
                  count > 0 else { break }
            buffer += chunk[0..<count]
            while buffer.count >= 4, buffer[0] == 0x01, buffer.count >= 4 + Int(buffer[3]) {
                let opcode = UInt16(buffer[1]) | UInt16(buffer[2]) << 8
                let parameters = Array(buffer[4..<(4 + Int(buffer[3]))])
                buffer.removeFirst(4 + Int(buffer[3]))
                answer(opcode, parameters, on: fd)
            }
            if let first = buffer.first, first != 0x01 { buffer.removeAll() }   // not a command: resynchronise
        }
        state.withLock { state in
            if state.connection == fd {
                state.connection = -1
                state.scanning = false
            }
        }
        close(fd)
    }

    private func answer(_ opcode: UInt16, _ parameters: [UInt8], on fd: Int32) {
        var returned: [UInt8] = []
        switch opcode {
        case 0x0C03:   // Reset
            state.withLock { $0.resets += 1; $0.scanning = false }
        case 0x1001:   // Read Local Version Information: HCI 4.1 (7), Broadcom (0x000F)
            returned = [0x07, 0x00, 0x00, 0x07, 0x0F, 0x00, 0x00, 0x00]
        case 0x2003:   // LE Read Local Supported Features: no extended advertising
            returned = [UInt8](repeating: 0, count: 8)
        case 0x1009:   // Read BD_ADDR
            returned = [0x42, 0x00, 0x5C, 0x12, 0x34, 0x56]
        case 0x200C:   // LE Set Scan Enable
            let enabled = parameters.first == 1
            state.withLock { $0.scanning = enabled }
        default:
            break
        }
        let body: [UInt8] = [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0x00] + returned
        write(fd, [0x04, 0x0E, UInt8(body.count)] + body)
        commandSink.yield(opcode)
    }

    /// One report every `reportInterval` while scanning and reporting.
    private func reportLoop() {
        var sequence: UInt8 = 0
        let pause = useconds_t(reportInterval.components.seconds * 1_000_000 + reportInterval.components.attoseconds / 1_000_000_000_000)
        while true {
            usleep(pause)   // the controller's own pace, not a test's synchronisation
            let (fd, sent, rssi, address) = state.withLock { state -> (Int32?, Int, Int8?, [UInt8]) in
                guard !state.stopped else { return (nil, 0, nil, []) }
                guard state.scanning, state.reporting, state.connection >= 0 else { return (-1, 0, nil, []) }
                state.reportsSent += 1
                return (state.connection, state.reportsSent, state.rssi, state.address)
            }
            guard let fd else {
                reportSink.finish()
                commandSink.finish()
                return
            }
            guard fd >= 0 else { continue }
            sequence &+= 1
            // Unless told: an iBeacon-less manufacturer advert (not ours, not a beacon), a neighbour's phone.
            let ad: [UInt8] = advert ?? [0x05, 0xFF, 0x4C, 0x00, 0x10, sequence]
            var event = HCIEventBytes.legacyReport(ad, address: address)
            if let rssi { event[event.count - 1] = UInt8(bitPattern: rssi) }
            write(fd, [0x04] + event)
            reportSink.yield(sent)
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
