/// Strict base64 (RFC 4648 §4, standard alphabet) for `PUB` content and event JSON.
///
/// Strict because a lenient decoder turns typos into silently different messages: padding is optional
/// but must be right when present, and the unused low bits of the last symbol must be zero (the
/// canonical encoding), so every byte string has exactly one accepted spelling plus its unpadded form.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next(), b2 = iterator.next()
            let n = UInt32(b0) << 16 | UInt32(b1 ?? 0) << 8 | UInt32(b2 ?? 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(b1 == nil ? UInt8(ascii: "=") : alphabet[Int(n >> 6 & 63)])
            out.append(b2 == nil ? UInt8(ascii: "=") : alphabet[Int(n & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or nil when `text` is not canonical base64.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var symbols = Array(text.utf8)
        var padding = 0
        while symbols.last == UInt8(ascii: "="), padding < 2 {
            symbols.removeLast()
            padding += 1
        }
        if padding > 0, (symbols.count + padding) % 4 != 0 { return nil }
        if symbols.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            let value = values[Int(symbol)]
            if value == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        if accumulator != 0 { return nil }   // non-zero leftover bits: not the canonical spelling
        return out
    }
}
