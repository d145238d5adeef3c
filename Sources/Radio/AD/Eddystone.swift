import SystemCall

// Eddystone frames (github.com/google/eddystone, protocol-specification.md): service data for
// UUID 0xFEAA, the first byte is the frame type, multi-byte fields are big endian.

/// Eddystone-UID: 10-byte namespace and 6-byte instance.
public struct EddystoneUID: Sendable, Equatable {
    public static let frameType: UInt8 = 0x00
    /// Calibrated TX power at 0 m, dBm.
    public var txPower: Int8
    public var namespace: [UInt8]
    public var instance: [UInt8]

    public init(txPower: Int8, namespace: [UInt8], instance: [UInt8]) {
        self.txPower = txPower
        self.namespace = namespace
        self.instance = instance
    }

    /// The frame is 20 bytes with two reserved bytes at the end; many beacons leave those out.
    public init?(frame: ArraySlice<UInt8>) {
        guard frame.first == Self.frameType, frame.count == 18 || frame.count == 20 else { return nil }
        let s = frame.startIndex
        txPower = Int8(bitPattern: frame[s + 1])
        namespace = Array(frame[(s + 2)..<(s + 12)])
        instance = Array(frame[(s + 12)..<(s + 18)])
    }

    public var namespaceHex: String { Hex.lower(namespace) }
    public var instanceHex: String { Hex.lower(instance) }
}

/// Eddystone-URL: a compressed URL.
public struct EddystoneURL: Sendable, Equatable {
    public static let frameType: UInt8 = 0x10
    public var txPower: Int8
    public var url: String

    public init(txPower: Int8, url: String) {
        self.txPower = txPower
        self.url = url
    }

    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// Frame: type, TX power, scheme prefix, at most 17 encoded bytes. Bytes 0x00–0x0D expand to
    /// the listed suffixes; other bytes outside the printable range 0x21–0x7E are invalid.
    public init?(frame: ArraySlice<UInt8>) {
        guard frame.first == Self.frameType, frame.count >= 3, frame.count <= 20 else { return nil }
        let s = frame.startIndex
        let scheme = Int(frame[s + 2])
        guard scheme < Self.schemes.count else { return nil }
        var url = Self.schemes[scheme]
        for byte in frame[(s + 3)...] {
            if Int(byte) < Self.expansions.count {
                url += Self.expansions[Int(byte)]
            } else if byte >= 0x21 && byte <= 0x7E {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                return nil
            }
        }
        txPower = Int8(bitPattern: frame[s + 1])
        self.url = url
    }

    /// The host part ("goo.gl" of "https://goo.gl/S6zT6P"), which the gateway's topics use.
    public var host: String {
        let afterScheme = url.split(separator: "://", maxSplits: 1).last ?? Substring(url)
        return String(afterScheme.prefix { $0 != "/" })
    }
}

/// Eddystone-TLM, unencrypted version 0: telemetry of the beacon sending UID/URL frames.
public struct EddystoneTLM: Sendable, Equatable {
    public static let frameType: UInt8 = 0x20
    /// Battery voltage in mV; `nil` when the beacon says 0 (not battery powered).
    public var batteryMillivolts: UInt16?
    /// Beacon temperature in °C (8.8 fixed point); `nil` for 0x8000, "not supported".
    public var temperature: Double?
    /// Advertising PDUs sent since power-up or reboot.
    public var advertisingCount: UInt32
    /// Time since power-up or reboot, in units of 0.1 s.
    public var uptimeDeciseconds: UInt32

    public init(batteryMillivolts: UInt16?, temperature: Double?, advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.temperature = temperature
        self.advertisingCount = advertisingCount
        self.uptimeDeciseconds = uptimeDeciseconds
    }

    /// Frame: type, version 0x00, VBATT (2), TEMP (2), ADV_CNT (4), SEC_CNT (4). Encrypted TLM
    /// (version 0x01) needs the beacon's key and is not decoded.
    public init?(frame: ArraySlice<UInt8>) {
        guard frame.first == Self.frameType, frame.count == 14, frame[frame.startIndex + 1] == 0x00 else { return nil }
        let battery = frame.bigEndian(at: 2, as: UInt16.self)
        batteryMillivolts = battery == 0 ? nil : battery
        let rawTemperature = frame.bigEndian(at: 4, as: UInt16.self)
        temperature = rawTemperature == 0x8000 ? nil : Double(Int16(bitPattern: rawTemperature)) / 256
        advertisingCount = frame.bigEndian(at: 6, as: UInt32.self)
        uptimeDeciseconds = frame.bigEndian(at: 10, as: UInt32.self)
    }
}
