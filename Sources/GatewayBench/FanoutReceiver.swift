import Glibc
import SystemCall

/// The subscribers of the fan-out benchmark: `clients` connections on one thread with poll(2),
/// reading 64 KiB at a time and taking every event's latency (now − the publisher's stamp) when its
/// bytes are read. The same loop serves both brokers; only the framing differs (lines or MQTT).
final class FanoutReceiver {
    enum Wire: String { case line, mqtt }

    struct Client {
        var fd: Int32
        var pending: [UInt8] = []
        var received = 0
    }

    let wire: Wire
    var clients: [Client] = []
    var histogram = LatencyHistogram()
    var unparsable = 0

    init(wire: Wire, path: String, count: Int, filter: String = FanoutPayload.filter) throws {
        self.wire = wire
        for index in 0..<count {
            let fd = try BenchSocket.connect(path: path)
            switch wire {
            case .line:
                try BenchSocket.writeAll(fd, Array("SUB \(filter)\n".utf8))
                _ = try BenchSocket.readUntil(fd, seconds: 10) { $0.contains(UInt8(ascii: "\n")) }
            case .mqtt:
                try BenchSocket.writeAll(fd, MQTTWire.connect(clientID: "bench-sub-\(index)"))
                _ = try BenchSocket.readUntil(fd, seconds: 10) { $0.count >= 4 }   // CONNACK
                try BenchSocket.writeAll(fd, MQTTWire.subscribe(filter: filter))
                _ = try BenchSocket.readUntil(fd, seconds: 10) { $0.count >= 5 }   // SUBACK
            }
            BenchSocket.setNonBlocking(fd)
            clients.append(Client(fd: fd))
        }
    }

    var total: Int { clients.reduce(0) { $0 + $1.received } }

    /// Receives until `expected` events arrived in all, or nothing came for `idleSeconds` after the
    /// first event, or `deadlineSeconds` passed.
    func run(expected: Int, idleSeconds: Double, deadlineSeconds: Double) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        let deadline = SystemCall.monotonicNanoseconds() + UInt64(deadlineSeconds * 1e9)
        var lastData: UInt64?
        var received = 0
        while received < expected {
            let now = SystemCall.monotonicNanoseconds()
            if now >= deadline { break }
            if let lastData, Double(now - lastData) / 1e9 > idleSeconds { break }
            for i in fds.indices { fds[i].revents = 0 }
            let ready = poll(&fds, nfds_t(fds.count), 100)
            guard ready > 0 else { continue }
            for i in fds.indices where fds[i].revents != 0 {
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fds[i].fd, $0.baseAddress, $0.count) }
                    guard n > 0 else { break }
                    let stampNow = SystemCall.monotonicNanoseconds()
                    lastData = stampNow
                    let got = consume(client: i, bytes: buffer[0..<n], now: stampNow)
                    received += got
                    if n < buffer.count { break }
                }
            }
        }
    }

    /// Parses whole events out of what client `i` has buffered; returns how many.
    private func consume(client i: Int, bytes: ArraySlice<UInt8>, now: UInt64) -> Int {
        // Most reads end on an event boundary: parse them in place, copy only a split event.
        let data: ArraySlice<UInt8> = clients[i].pending.isEmpty ? bytes : ArraySlice(clients[i].pending + bytes)
        var events = 0
        let wire = self.wire
        let rest: Int = data.withUnsafeBufferPointer { b in
            var start = 0
            switch wire {
            case .line:
                let base = b.baseAddress!
                while start < b.count,
                      let hit = memchr(base + start, Int32(UInt8(ascii: "\n")), b.count - start) {
                    let newline = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    if let space = memchr(base + start, Int32(UInt8(ascii: " ")), newline - start),
                       let stamp = FanoutPayload.stamp(in: b, at: base.distance(to: space.assumingMemoryBound(to: UInt8.self)) + 1) {
                        histogram.record(nanoseconds: now &- stamp)
                        events += 1
                    } else {
                        unparsable += 1
                    }
                    start = newline + 1
                }
            case .mqtt:
                while start < b.count, let (type, body, length) = MQTTWire.frame(b, from: start) {
                    if type & 0xF0 == 0x30, body.count >= 2 {
                        let topicLength = Int(b[body.lowerBound]) << 8 | Int(b[body.lowerBound + 1])
                        if let stamp = FanoutPayload.stamp(in: b, at: body.lowerBound + 2 + topicLength) {
                            histogram.record(nanoseconds: now &- stamp)
                            events += 1
                        } else {
                            unparsable += 1
                        }
                    }
                    start += length
                }
            }
            return start
        }
        clients[i].pending = Array(data.dropFirst(rest))
        clients[i].received += events
        return events
    }
}
