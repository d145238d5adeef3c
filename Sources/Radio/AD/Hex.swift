/// Lower-case hex without separators, as topics and logs write identifiers.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func string<C: Collection<UInt8>>(_ bytes: C) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
