/// The H4 packet indicator (UART transport, Core Vol 4 Part A).
public enum H4PacketType: UInt8, Sendable {
    case command = 0x01, acl = 0x02, sco = 0x03, event = 0x04, iso = 0x05
}

/// One packet cut from the stream: its indicator and its bytes after the indicator (header included).
public struct H4Packet: Sendable, Equatable {
    public var type: H4PacketType
    public var bytes: [UInt8]
    public init(type: H4PacketType, bytes: [UInt8]) {
        self.type = type
        self.bytes = bytes
    }
}

/// Cuts an H4 byte stream from a controller into packets (events, ACL, SCO, ISO). Packets may arrive in pieces; anything that is not a
/// packet start is skipped one byte at a time (resync) and counted, and a header announcing a
/// payload larger than we accept is treated as garbage too, so the buffer never holds more than
/// one maximal packet plus one read.
public struct H4Deframer: Sendable {
    /// ACL and ISO payloads above this are not from a controller we talk to (we never open
    /// connections); refusing them keeps one bad length byte from swallowing 64 KiB of stream.
    public static let maximumDataPayload = 1024
    public static let maximumPacketLength = 5 + maximumDataPayload

    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes skipped while looking for a packet start.
    public private(set) var droppedBytes = 0
    /// Headers skipped because they announced an impossible length.
    public private(set) var droppedPackets = 0

    public init() {
        buffer.reserveCapacity(4096)
    }

    /// Bytes waiting for the rest of their packet.
    public var pendingCount: Int { buffer.count - start }

    /// Appends `bytes` and hands every complete packet to `body`, in order.
    public mutating func feed<C: Collection<UInt8>>(_ bytes: C, _ body: (H4Packet) -> Void) {
        buffer.append(contentsOf: bytes)
        while let packet = nextPacket() { body(packet) }
        // Compact once per feed: what is left is at most one partial packet.
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }

    private mutating func nextPacket() -> H4Packet? {
        while start < buffer.count {
            // Controllers never send commands: a 0x01 is garbage, not a header to wait on.
            guard let type = H4PacketType(rawValue: buffer[start]), type != .command else {
                start += 1
                droppedBytes += 1
                continue
            }
            let available = buffer.count - start - 1
            let header: Int
            switch type {
            case .event: header = 2
            case .command, .sco: header = 3
            case .acl, .iso: header = 4
            }
            guard available >= header else { return nil }
            let h = start + 1
            let payload: Int
            switch type {
            case .event: payload = Int(buffer[h + 1])
            case .command, .sco: payload = Int(buffer[h + 2])
            case .acl: payload = Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8
            case .iso: payload = (Int(buffer[h + 2]) | Int(buffer[h + 3]) << 8) & 0x3FFF
            }
            if payload > Self.maximumDataPayload {
                start += 1
                droppedPackets += 1
                continue
            }
            guard available >= header + payload else { return nil }
            let packet = H4Packet(type: type, bytes: Array(buffer[h..<(h + header + payload)]))
            start = h + header + payload
            return packet
        }
        return nil
    }
}
