import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: 2,000 refused clients wrote 1,017 warnings. Repeated lines from one place are cut to a
    /// burst per second and the rest counted in one "N similar lines suppressed" line.
    @Suite(.serialized)
    struct LogFlood {
        @Test("2,000 refused clients: a few warnings and 'similar lines suppressed' lines that account for every refusal")
        func refusedClientsAreRateLimited() async throws {
            var config = try TestGatewayConfig("flood", name: "f")
            config.maxClients = 1
            let refusals = 2_000
            let gateway = try await withGateway(config) { gateway in
                let holder = try SocketClient(path: config.socketPath)
                #expect(try await holder.request("PING") == "PONG")
                let socketPath = config.socketPath
                let answered = await withCheckedContinuation { continuation in
                    // Blocking connects and reads: on a thread of their own, not on the shared pool.
                    Thread { continuation.resume(returning: (0..<refusals).filter { _ in Self.refusedConnection(socketPath) }.count) }.start()
                }
                #expect(answered == refusals, "every extra client gets the too-many-clients reply")
                #expect(try await holder.request("PING") == "PONG")
                return gateway
            }

            let lines = gateway.log.split(separator: "\n")
            let written = lines.filter { $0.contains("socket client refused: max_clients reached") && !$0.contains("similar lines suppressed") }.count
            let suppressed = lines.filter { $0.contains("similar lines suppressed") && $0.contains("like: socket client refused") }
                .compactMap { line in line.split(separator: " ").firstIndex(of: "similar").map { Int(line.split(separator: " ")[$0 - 1]) ?? 0 } }
            print("LogFlood: \(refusals) refused clients, \(written) warnings written, suppressed counts \(suppressed)")
            #expect(!suppressed.isEmpty, "no 'similar lines suppressed' line")
            #expect(written < refusals / 10, "\(written) refusal warnings written")
            #expect(written + suppressed.reduce(0, +) == refusals, "written \(written) + suppressed \(suppressed) != \(refusals)")
        }

        /// Connects, reads until the gateway closes; true if it said ERR (too many clients).
        private static func refusedConnection(_ path: String) -> Bool {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard connected == 0 else { return false }
            var reply: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 10_000) == 1 else { return false }
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n <= 0 { break }
                reply += buffer[0..<n]
            }
            return String(decoding: reply, as: UTF8.self).hasPrefix("ERR ")
        }
    }
}
