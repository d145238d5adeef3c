/// Arithmetic in GF(2⁸) with the primitive polynomial x⁸+x⁴+x³+x²+1 (0x11d) and generator α = 2,
/// the field ggwave's Reed–Solomon code works in.
enum GF256 {
    /// exp[i] = αⁱ, doubled so that exp[log a + log b] needs no reduction.
    static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 512)
        var x = 1
        for i in 0..<255 {
            table[i] = UInt8(x)
            x <<= 1
            if x & 0x100 != 0 { x ^= 0x11d }
        }
        for i in 255..<512 { table[i] = table[i - 255] }
        return table
    }()

    /// log[a] for a ≠ 0; log[0] is unused.
    static let log: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for i in 0..<255 { table[Int(exp[i])] = i }
        return table
    }()

    @inline(__always)
    static func mul(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return exp[log[Int(a)] + log[Int(b)]]
    }

    @inline(__always)
    static func div(_ a: UInt8, _ b: UInt8) -> UInt8 {
        precondition(b != 0, "division by zero in GF(256)")
        if a == 0 { return 0 }
        return exp[(log[Int(a)] + 255 - log[Int(b)]) % 255]
    }

    /// αⁿ for any integer n.
    @inline(__always)
    static func alphaPow(_ n: Int) -> UInt8 {
        exp[((n % 255) + 255) % 255]
    }

    @inline(__always)
    static func inverse(_ a: UInt8) -> UInt8 {
        exp[255 - log[Int(a)]]
    }
}
