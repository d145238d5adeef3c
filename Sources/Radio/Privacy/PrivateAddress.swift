/// Resolvable private addresses (Core Vol 6 Part B 1.3.2.2; Vol 3 Part H 2.2.2): the top two bits
/// 01, then 22 random bits (with the top bits, `prand`), then the 24-bit `hash` = ah(IRK, prand).
public enum PrivateAddress {
    /// A random address (report type 1) whose top two bits are 01.
    @inlinable
    public static func isResolvable(_ address: BDAddress, type: AddressType) -> Bool {
        type == .random && address.rawValue >> 46 == 0b01
    }

    public static func prand(_ address: BDAddress) -> UInt32 { UInt32(truncatingIfNeeded: address.rawValue >> 24) }
    public static func hash(_ address: BDAddress) -> UInt32 { UInt32(truncatingIfNeeded: address.rawValue) & 0xFF_FFFF }

    /// `r'` of `ah`: 104 bits of zero padding, then `prand`, as the AES block (most significant byte first).
    static func block(prand: UInt32) -> (UInt64, UInt64) {
        var block: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &block) { bytes in
            bytes[13] = UInt8(truncatingIfNeeded: prand >> 16)
            bytes[14] = UInt8(truncatingIfNeeded: prand >> 8)
            bytes[15] = UInt8(truncatingIfNeeded: prand)
        }
        return block
    }

    /// `ah`'s result from e(IRK, r'): its least significant 24 bits, the block's last three bytes.
    static func hash(fromCiphertext cipher: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(cipher[13]) << 16 | UInt32(cipher[14]) << 8 | UInt32(cipher[15])
    }

    /// ah(k, r) with key `index` of `ring` (Vol 3 Part H 2.2.2), nil when libcrypto failed.
    public static func ah(_ ring: AESKeyRing, key index: Int, prand: UInt32) -> UInt32? {
        let block = block(prand: prand)
        let bytes = withUnsafeBytes(of: block) { Array($0) }
        guard let cipher = ring.encrypt(bytes, with: index) else { return nil }
        return cipher.withUnsafeBytes { hash(fromCiphertext: $0) }
    }

    /// The first key of `ring` that resolves `address`; `tried` counts the AES encryptions.
    static func resolve(_ address: BDAddress, with ring: AESKeyRing, tried: inout Int) -> Int? {
        let expected = hash(address)
        return ring.firstIndex(encrypting: block(prand: prand(address)), tried: &tried) { hash(fromCiphertext: $0) == expected }
    }
}
