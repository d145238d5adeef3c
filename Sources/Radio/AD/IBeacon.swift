import SystemCall

/// Apple iBeacon: manufacturer data 4C 00 (Apple, little endian), 02 15 (type, length), then
/// proximity UUID (16), major (2, big endian), minor (2, big endian), measured power (1).
public struct IBeacon: Sendable, Equatable {
    public var uuid: [UInt8]
    public var major: UInt16
    public var minor: UInt16
    /// RSSI at 1 m, dBm.
    public var measuredPower: Int8

    public init(uuid: [UInt8], major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    public init?(manufacturerData data: ArraySlice<UInt8>) {
        let s = data.startIndex
        guard data.count == 25, data[s] == 0x4C, data[s + 1] == 0x00, data[s + 2] == 0x02, data[s + 3] == 0x15
        else { return nil }
        uuid = Array(data[(s + 4)..<(s + 20)])
        major = data.bigEndian(at: 20, as: UInt16.self)
        minor = data.bigEndian(at: 22, as: UInt16.self)
        measuredPower = Int8(bitPattern: data[s + 24])
    }

    /// "e2c56db5-dffb-48d2-b060-d0f5a71096e0": 8-4-4-4-12, lower case.
    public var uuidString: String { Hex.uuid(uuid) }

    /// The 25 bytes of manufacturer data this beacon is sent as.
    public var manufacturerData: [UInt8] {
        [0x4C, 0x00, 0x02, 0x15] + uuid + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF),
            UInt8(bitPattern: measuredPower)]
    }
}
