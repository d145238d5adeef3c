/// The few MQTT 3.1.1 packets the fan-out benchmark needs (OASIS MQTT 3.1.1, section 3), QoS 0 only.
enum MQTTWire {
    static func connect(clientID: String) -> [UInt8] {
        var body: [UInt8] = string("MQTT") + [0x04, 0x02, 0x00, 0x3C]   // level 4, clean session, keep-alive 60 s
        body += string(clientID)
        return packet(0x10, body)
    }

    static func subscribe(filter: String, packetID: UInt16 = 1) -> [UInt8] {
        packet(0x82, [UInt8(packetID >> 8), UInt8(packetID & 0xFF)] + string(filter) + [0x00])
    }

    static func publish(topic: String, payload: [UInt8]) -> [UInt8] {
        packet(0x30, string(topic) + payload)
    }

    static let disconnect: [UInt8] = [0xE0, 0x00]

    static func packet(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        var out = [type]
        var n = body.count
        repeat {
            var byte = UInt8(n & 0x7F)
            n >>= 7
            if n > 0 { byte |= 0x80 }
            out.append(byte)
        } while n > 0
        return out + body
    }

    static func string(_ s: String) -> [UInt8] {
        let bytes = Array(s.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    /// A whole packet at the start of `bytes`: (first byte, body range, total length), or nil if more
    /// bytes are needed.
    @inline(__always)
    static func frame(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (UInt8, Range<Int>, Int)? {
        var length = 0, shift = 0, i = start + 1
        while true {
            guard i < bytes.count else { return nil }
            let b = bytes[i]
            length |= Int(b & 0x7F) << shift
            i += 1
            if b & 0x80 == 0 { break }
            shift += 7
            if shift > 21 { return nil }
        }
        guard i + length <= bytes.count else { return nil }
        return (bytes[start], i..<(i + length), i + length - start)
    }
}
