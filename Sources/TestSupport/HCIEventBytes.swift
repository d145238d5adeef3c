/// HCI events carrying advertising reports, laid out byte by byte as a controller sends them, so
/// parser tests and fuzz seeds start from the same real shapes (Core spec Vol 4 Part E 7.7.65).
public enum HCIEventBytes {
    /// An LE Meta event around `body` (subevent code first).
    public static func leMeta(_ body: [UInt8]) -> [UInt8] { [0x3E, UInt8(body.count)] + body }

    /// One LE Advertising Report of `ad` as btvirt sends it: ADV_NONCONN_IND from the random
    /// `address` (little-endian, as on the wire), RSSI 127 ("not available").
    public static func legacyReport(_ ad: [UInt8], address: [UInt8]) -> [UInt8] {
        leMeta([0x02, 0x01, 0x03, 0x01] + address + [UInt8(ad.count)] + ad + [0x7F])
    }

    /// One complete LE Extended Advertising Report of a legacy PDU carrying `ad`, from the random
    /// address C6:05:04:03:02:01 on LE 1M, RSSI -80.
    public static func extendedReport(_ ad: [UInt8]) -> [UInt8] {
        var body: [UInt8] = [0x0D, 0x01, 0x10, 0x00, 0x01, 1, 2, 3, 4, 5, 0xC6, 1, 0, 0xFF, 0x7F, 0xB0]
        body += [0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(ad.count)] + ad
        return leMeta(body)
    }
}
