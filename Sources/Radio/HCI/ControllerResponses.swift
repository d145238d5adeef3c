/// Decoders for the return parameters of the informational commands (status byte first).
enum ControllerResponses {
    struct LocalVersion: Equatable {
        var hciVersion: UInt8
        var hciRevision: UInt16
        var lmpVersion: UInt8
        var manufacturer: UInt16
        var lmpSubversion: UInt16
    }

    /// Read Local Version Information: status, HCI version, HCI revision, LMP version,
    /// manufacturer, LMP subversion.
    static func localVersion(_ p: ArraySlice<UInt8>) -> LocalVersion? {
        guard p.count >= 9 else { return nil }
        let b = Array(p)
        return LocalVersion(
            hciVersion: b[1], hciRevision: u16(b, 2), lmpVersion: b[4], manufacturer: u16(b, 5),
            lmpSubversion: u16(b, 7))
    }

    /// LE Read Local Supported Features: status, 8 bytes of feature bits.
    static func leFeatures(_ p: ArraySlice<UInt8>) -> UInt64? {
        guard p.count >= 9 else { return nil }
        var features: UInt64 = 0
        for (index, byte) in p.dropFirst().prefix(8).enumerated() {
            features |= UInt64(byte) << (8 * UInt64(index))
        }
        return features
    }

    static func bdAddress(_ p: ArraySlice<UInt8>) -> BDAddress? {
        guard p.count >= 7 else { return nil }
        return BDAddress(littleEndianBytes: p.dropFirst().prefix(6))
    }

    static func maximumAdvertisingDataLength(_ p: ArraySlice<UInt8>) -> Int? {
        guard p.count >= 3 else { return nil }
        let b = Array(p)
        return Int(u16(b, 1))
    }

    /// LE Read Number of Supported Advertising Sets: status, count (1…0xF0).
    static func advertisingSets(_ p: ArraySlice<UInt8>) -> Int? {
        guard p.count >= 2 else { return nil }
        return Int(p[p.startIndex + 1])
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16 {
        UInt16(b[i]) | UInt16(b[i + 1]) << 8
    }
}

/// LE feature bits we look at (Core Vol 6 Part B 4.6).
public enum LEFeature {
    public static let extendedAdvertising: UInt64 = 1 << 12
}
