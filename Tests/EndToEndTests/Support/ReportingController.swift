import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A controller on the H4 transport played by the test, for what btvirt cannot do: btvirt reports
/// every advert with RSSI 127 ("not available"), so signal strength can only be tested with reports
/// whose RSSI the test chooses. It listens on a UNIX socket (`radio.device = "h4:<path>"`), answers
/// every HCI command the way btvirt's LE controller does (version 5.0 from BlueZ, no extended
/// advertising: the same answers as RadioTests' `FakeController.btvirtLike`), and while the gateway
/// scans sends one LE Advertising Report of `advert` every 100 ms (a beacon's advertising interval,
/// not a synchronisation) with the RSSI set in `rssi`.
final class ReportingController: Sendable {
    let path: String
    private let listener: Int32
    private struct State {
        var connection: Int32 = -1
        var scanning = false
        var rssi: Int8 = -50
        var reportsSent = 0
        var stopped = false
    }
    private let state = Mutex(State())
    let advert: [UInt8]

    init(path: String, advert: [UInt8]) throws {
        self.path = path
        self.advert = advert
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        listener = fd
        let reader = Thread { [self] in serve() }
        reader.name = "ReportingController commands"
        reader.start()
        let sender = Thread { [self] in advertise() }
        sender.name = "ReportingController adverts"
        sender.start()
    }

    /// The RSSI of the reports from now on.
    func setRSSI(_ value: Int8) { state.withLock { $0.rssi = value } }
    var reportsSent: Int { state.withLock { $0.reportsSent } }

    func stop() {
        let fd = state.withLock { s -> Int32 in
            s.stopped = true
            return s.connection
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        unlink(path)
    }

    /// Accepts the gateway (again after it reconnects) and answers its commands.
    private func serve() {
        while !state.withLock({ $0.stopped }) {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { if errno == EINTR { continue } else { return } }
            state.withLock { $0.connection = fd; $0.scanning = false }
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                buffer += chunk[0..<n]
                // H4 command packets: 0x01, opcode (little-endian), length, parameters.
                while buffer.count >= 4, buffer[0] == 0x01, buffer.count >= 4 + Int(buffer[3]) {
                    let opcode = UInt16(buffer[1]) | UInt16(buffer[2]) << 8
                    let parameters = Array(buffer[4..<(4 + Int(buffer[3]))])
                    buffer.removeFirst(4 + Int(buffer[3]))
                    answer(opcode, parameters, on: fd)
                }
                if let first = buffer.first, first != 0x01 { buffer.removeAll() }   // not a command: dropped
            }
            state.withLock { $0.connection = -1; $0.scanning = false }
            close(fd)
        }
    }

    private func answer(_ opcode: UInt16, _ parameters: [UInt8], on fd: Int32) {
        let lo = UInt8(opcode & 0xFF), hi = UInt8(opcode >> 8)
        var returned: [UInt8] = []
        switch opcode {
        case 0x1001: returned = [0x09, 0x00, 0x00, 0x09, 0xF1, 0x05, 0x00, 0x00]   // Read Local Version: BlueZ, 5.0
        case 0x2003: returned = [0x0B, 0, 0, 0, 0, 0, 0, 0]                         // LE features: no extended advertising
        case 0x1009: returned = [0x42, 0x00, 0x02, 0x01, 0xAA, 0x00]                // Read BD_ADDR
        case 0x2035...0x203D, 0x2041, 0x2042:
            send([0x04, 0x0F, 4, 0x01, 1, lo, hi], on: fd)                          // Command Status: Unknown HCI Command
            return
        case 0x200C:                                                                 // LE Set Scan Enable
            state.withLock { $0.scanning = parameters.first == 1 }
        default: break
        }
        send([0x04, 0x0E, UInt8(4 + returned.count), 1, lo, hi, 0x00] + returned, on: fd)
    }

    private func advertise() {
        let address: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0xC6]
        while true {
            let (fd, scanning, rssi, stopped) = state.withLock { ($0.connection, $0.scanning, $0.rssi, $0.stopped) }
            if stopped { return }
            if fd >= 0, scanning {
                var event = HCIEventBytes.legacyReport(advert, address: address)
                event[event.count - 1] = UInt8(bitPattern: rssi)
                send([0x04] + event, on: fd)
                state.withLock { $0.reportsSent += 1 }
            }
            usleep(100_000)
        }
    }

    private func send(_ bytes: [UInt8], on fd: Int32) {
        // Both threads write; a lock keeps each packet whole on the stream.
        state.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }

    /// An iBeacon advert: flags, then Apple's manufacturer data with `uuid`, major, minor and the
    /// measured power at 1 m.
    static func iBeacon(uuid: [UInt8], major: UInt16, minor: UInt16, measuredPower: Int8) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: measuredPower)]
    }
}
