import Glibc
import SystemCall

/// The event both brokers carry: a found-event-shaped JSON object whose first member is the
/// publisher's CLOCK_MONOTONIC stamp at a fixed width, so receivers read it at a known offset.
enum FanoutPayload {
    static let topic = "found/bench/greeting"
    static let filter = "found/bench/#"
    static let stampPrefix = Array("{\"bench_ns\":".utf8)
    static let stampDigits = 20

    /// The JSON our broker is given (it appends `,"retained":false` itself). `totalBytes` is the size
    /// of the JSON as the receivers get it, which is what the MQTT payload is padded to.
    static func json(stamp: UInt64, totalBytes: Int, forBroker: Bool) -> String {
        let digits = String(stamp)
        let head = "{\"bench_ns\":" + String(repeating: "0", count: stampDigits - digits.count) + digits
            + ",\"namespace\":\"bench\",\"type\":\"greeting\",\"medium\":\"ble\",\"rssi\":null,\"content\":\""
        let tail = "\",\"first_seen\":\"2026-11-23T12:00:00.000Z\",\"last_seen\":\"2026-11-23T12:00:00.000Z\""
        let retained = ",\"retained\":false}"
        let padding = max(0, totalBytes - head.utf8.count - tail.utf8.count - retained.utf8.count)
        let body = head + String(repeating: "A", count: padding) + tail
        return forBroker ? body + "}" : body + retained
    }

    /// The stamp in a received JSON object starting at `offset` (nil if it doesn't look like ours).
    @inline(__always)
    static func stamp(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64? {
        let start = offset + stampPrefix.count
        guard start + stampDigits <= bytes.count, bytes[offset] == UInt8(ascii: "{") else { return nil }
        var value: UInt64 = 0
        for i in start..<(start + stampDigits) {
            let d = bytes[i] &- 48
            guard d < 10 else { return nil }
            value = value &* 10 &+ UInt64(d)
        }
        return value
    }
}

/// Publishes `rate` events per second for `seconds`: at every wake-up, every event due by now goes
/// out (as one batch), then it sleeps 50 µs. Both brokers' publishers use it.
struct Pacer {
    var rate: Double
    var total: Int

    func run(_ publish: (_ count: Int) throws -> Void) rethrows {
        let start = SystemCall.monotonicNanoseconds()
        var sent = 0
        while sent < total {
            let elapsed = Double(SystemCall.monotonicNanoseconds() - start) / 1e9
            let due = min(total, Int(elapsed * rate) + 1)
            if due > sent {
                try publish(due - sent)
                sent = due
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 50_000)
            nanosleep(&pause, nil)
        }
    }
}
