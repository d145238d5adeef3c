/// printf's `%.Nf` (N = 0…3), byte for byte, without vsnprintf: an event's `rssi_avg` and
/// `distance_m` are written on the loop that reads the adverts, and `String(cFormat:)` cost ~15,000
/// instructions a number there (the variadic arguments are boxed and cast, then glibc's float printer).
///
/// Exact like glibc: the double's binary value times 10ᴺ is rounded half to even as an integer
/// fraction, so 0.125 is "0.12" and 0.35 (0.34999…) is "0.3"; a negative value keeps its sign
/// even when it rounds to zero ("-0.0"). Values of 2⁵⁰ or more and non-finite ones go to
/// `String(cFormat:)` itself.
public enum FixedPoint {
    /// Appends `value` as `%.<digits>f` to `out`.
    public static func append(_ value: Double, digits: Int, to out: inout [UInt8]) {
        precondition((0...3).contains(digits), "FixedPoint: 0 to 3 digits")
        let magnitude = value.magnitude
        guard value.isFinite, magnitude < 0x1p50 else {
            out.append(contentsOf: String(cFormat: "%.\(digits)f", value).utf8)
            return
        }
        let scale: UInt64 = digits == 0 ? 1 : digits == 1 ? 10 : digits == 2 ? 100 : 1000
        // magnitude = significand · 2^exponent exactly, significand < 2⁵³.
        let fraction = magnitude.significandBitPattern
        let biased = Int(magnitude.exponentBitPattern)
        let significand = biased == 0 ? fraction : fraction | (1 << 52)
        let exponent = (biased == 0 ? 1 : biased) - 1075
        let scaled = significand * scale   // < 2⁶³
        var units: UInt64
        if exponent >= 0 {
            units = scaled << UInt64(exponent)   // magnitude < 2⁵⁰: < 2⁶⁰
        } else if exponent <= -64 {
            units = 0   // scaled < 2⁶³ ≤ half of 2^-exponent: rounds down
        } else {
            let shift = UInt64(-exponent)
            units = scaled >> shift
            let rest = scaled & ((1 << shift) - 1), half = UInt64(1) << (shift - 1)
            if rest > half || (rest == half && units & 1 == 1) { units += 1 }
        }
        if value.sign == .minus { out.append(UInt8(ascii: "-")) }
        appendDecimal(units / scale, to: &out)
        guard digits > 0 else { return }
        out.append(UInt8(ascii: "."))
        var rest = units % scale, divisor = scale / 10
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `value` as `%.<digits>f`.
    public static func string(_ value: Double, digits: Int) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        append(value, digits: digits, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        var reversed: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                       UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0, rest = value
        withUnsafeMutableBytes(of: &reversed) { digits in
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            for k in stride(from: count - 1, through: 0, by: -1) { out.append(digits[k]) }
        }
    }
}
