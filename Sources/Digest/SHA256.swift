/// SHA-256 (FIPS 180-4, section 6.2) as a value: the state is eight words and a 64-byte block buffer
/// inline, so hashing allocates nothing and a copy of a half-fed hash continues on its own (HMAC's
/// keyed states rely on that). The frames' keys and tags are its only users (docs/protocol.md).
public struct SHA256: Sendable {
    public static let byteCount = 32
    public static let blockByteCount = 64

    /// H(0): the first 32 bits of the fractional parts of the square roots of the first 8 primes.
    private var state: SHA256Digest.Words = (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a,
                                             0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    /// The bytes of the block not yet full (only the first `buffered` count).
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var buffered = 0
    /// Bytes fed so far: the padding ends with it, in bits.
    private var length: UInt64 = 0

    public init() {}

    public static func hash(_ bytes: [UInt8]) -> SHA256Digest {
        var sha = SHA256()
        sha.update(bytes)
        return sha.finalize()
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var input = bytes.baseAddress, !bytes.isEmpty else { return }
        var count = bytes.count
        length &+= UInt64(count)
        if buffered > 0 {
            let taken = min(count, Self.blockByteCount - buffered), at = buffered, from = input
            withUnsafeMutableBytes(of: &block) { $0.baseAddress!.advanced(by: at).copyMemory(from: from, byteCount: taken) }
            buffered += taken
            input += taken
            count -= taken
            guard buffered == Self.blockByteCount else { return }
            let full = block
            withUnsafeBytes(of: full) { Self.compress(&state, $0.baseAddress!) }
            buffered = 0
        }
        // Whole blocks straight from the input, without copying them into the buffer first.
        while count >= Self.blockByteCount {
            Self.compress(&state, input)
            input += Self.blockByteCount
            count -= Self.blockByteCount
        }
        if count > 0 {
            let rest = input
            withUnsafeMutableBytes(of: &block) { $0.baseAddress!.copyMemory(from: rest, byteCount: count) }
            buffered = count
        }
    }

    /// Pads (0x80, zeros, the length in bits as u64be) and returns the digest. `consuming`: the caller's
    /// copy is what is padded, so a keyed state it was copied from is untouched.
    public consuming func finalize() -> SHA256Digest {
        let bits = length &* 8
        var pad: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        // 0x80, then zeros up to 56 mod 64, then the 8 length bytes: 9 to 72 bytes in all.
        let padCount = (buffered < 56 ? 56 : 120) - buffered + 8
        withUnsafeMutableBytes(of: &pad) { pad in
            pad[0] = 0x80
            pad.storeBytes(of: bits.bigEndian, toByteOffset: padCount - 8, as: UInt64.self)
            update(UnsafeRawBufferPointer(rebasing: pad[0..<padCount]))
        }
        return SHA256Digest(words: state)
    }

    /// The round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x &>> n | x &<< (32 &- n) }

    /// One block into the state (FIPS 180-4, 6.2.2). The message schedule lives in a stack buffer.
    private static func compress(_ h: inout SHA256Digest.Words, _ bytes: UnsafeRawPointer) {
        k.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for t in 0..<16 { w[t] = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self)) }
                for t in 16..<64 {
                    let s0 = rotr(w[t &- 15], 7) ^ rotr(w[t &- 15], 18) ^ (w[t &- 15] &>> 3)
                    let s1 = rotr(w[t &- 2], 17) ^ rotr(w[t &- 2], 19) ^ (w[t &- 2] &>> 10)
                    w[t] = w[t &- 16] &+ s0 &+ w[t &- 7] &+ s1
                }
                var (a, b, c, d, e, f, g, hh) = h
                for t in 0..<64 {
                    let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[t] &+ w[t]
                    let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                    hh = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ t2
                }
                h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
            }
        }
    }
}

/// A SHA-256 digest (or HMAC-SHA256 tag) as its eight words, so passing one around allocates nothing.
public struct SHA256Digest: Sendable, Equatable, CustomStringConvertible {
    typealias Words = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    let words: Words

    /// The 32 bytes, big-endian as FIPS 180-4 writes them, for the duration of `body`.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let w = words
        let bigEndian = (w.0.bigEndian, w.1.bigEndian, w.2.bigEndian, w.3.bigEndian,
                         w.4.bigEndian, w.5.bigEndian, w.6.bigEndian, w.7.bigEndian)
        return try Swift.withUnsafeBytes(of: bigEndian, body)
    }

    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The first `count` (≤ 8) bytes as a big-endian integer: the truncated tags and ids of the frames.
    public func prefix(_ count: Int) -> UInt64 {
        precondition((0...8).contains(count), "a prefix of 0 to 8 bytes")
        guard count > 0 else { return 0 }
        return (UInt64(words.0) << 32 | UInt64(words.1)) >> UInt64(64 - 8 * count)
    }

    /// Compares every word whatever the first difference, so the time taken says nothing about where
    /// two tags differ.
    public static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        let l = lhs.words, r = rhs.words
        let difference = (l.0 ^ r.0) | (l.1 ^ r.1) | (l.2 ^ r.2) | (l.3 ^ r.3)
            | (l.4 ^ r.4) | (l.5 ^ r.5) | (l.6 ^ r.6) | (l.7 ^ r.7)
        return difference == 0
    }

    public var description: String {
        withUnsafeBytes { $0.map { byte in String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16) }.joined() }
    }
}
