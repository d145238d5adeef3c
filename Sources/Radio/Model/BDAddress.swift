/// A Bluetooth device address. Stored as on the air (least significant byte first), written the
/// usual way, most significant byte first: "00:AA:01:02:00:42".
public struct BDAddress: Hashable, Sendable, CustomStringConvertible {
    /// The 48 address bits; byte 0 of the air order is the low byte.
    public var rawValue: UInt64

    @inlinable
    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// From the 6 bytes as HCI carries them (least significant first).
    @inlinable
    public init<C: Collection<UInt8>>(littleEndianBytes bytes: C) {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes.prefix(6) {
            value |= UInt64(byte) << shift
            shift += 8
        }
        self.init(rawValue: value)
    }

    /// From 6 bytes at `offset` of an HCI packet (least significant first): the report parser's
    /// fast path, no generic collection walk.
    @inlinable
    public init(_ packet: [UInt8], at offset: Int) {
        var value: UInt64 = 0
        for index in (0..<6).reversed() {
            value = value << 8 | UInt64(packet[offset + index])
        }
        rawValue = value
    }

    /// Parses "00:AA:01:02:00:42" (either case).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.init(rawValue: value)
    }

    /// The 6 bytes in HCI order (least significant first).
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) }
    }

    /// A random static address (Core Vol 6 Part B 1.3.2.1): the two top bits set, the other 46
    /// bits random and neither all zeros nor all ones.
    public static func randomStatic<G: RandomNumberGenerator>(using generator: inout G) -> BDAddress {
        while true {
            let random = generator.next() & 0x3FFF_FFFF_FFFF
            if random != 0 && random != 0x3FFF_FFFF_FFFF {
                return BDAddress(rawValue: random | 0xC000_0000_0000)
            }
        }
    }

    public static func randomStatic() -> BDAddress {
        var generator = SystemRandomNumberGenerator()
        return randomStatic(using: &generator)
    }

    public var isRandomStatic: Bool { rawValue >> 46 == 0b11 }

    public var description: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(17)
        for index in stride(from: 5, through: 0, by: -1) {
            let byte = Int(truncatingIfNeeded: rawValue >> (8 * UInt64(index))) & 0xFF
            text.append(digits[byte >> 4])
            text.append(digits[byte & 0xF])
            if index > 0 { text.append(UInt8(ascii: ":")) }
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The address type an advertising report carries. A struct rather than an enum: controllers may
/// send values this code does not know, and those must survive unharmed.
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let `public` = AddressType(rawValue: 0x00)
    public static let random = AddressType(rawValue: 0x01)
    public static let publicIdentity = AddressType(rawValue: 0x02)
    public static let randomIdentity = AddressType(rawValue: 0x03)
    /// Extended reports: anonymous advertisement, no address.
    public static let anonymous = AddressType(rawValue: 0xFF)

    public var description: String {
        switch rawValue {
        case 0x00: "public"
        case 0x01: "random"
        case 0x02: "public-identity"
        case 0x03: "random-identity"
        case 0xFF: "anonymous"
        default: "type-\(rawValue)"
        }
    }
}
