/// HMAC-SHA256 (RFC 2104, FIPS 198-1), keyed once: the key's inner and outer pads are hashed when it is
/// made, so each tag costs the message's blocks and one outer block, and a copy of a keyed value
/// continues from the keyed state (the frame code keeps one per epoch key and copies it per frame).
public struct HMACSHA256: Sendable {
    private var inner = SHA256()
    private var outer = SHA256()

    public init(key: [UInt8]) {
        self = key.withUnsafeBytes { HMACSHA256(key: $0) }
    }

    public init(key: UnsafeRawBufferPointer) {
        // A key longer than a block is replaced by its hash; a shorter one is zero-padded to a block.
        var padded: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &padded) { padded in
            if key.count > SHA256.blockByteCount {
                var sha = SHA256()
                sha.update(key)
                sha.finalize().withUnsafeBytes { padded.copyMemory(from: $0) }
            } else if key.count > 0 {
                padded.copyMemory(from: key)
            }
        }
        // ipad and opad: every byte of the padded key XORed with 0x36 and 0x5c.
        var ipad = padded, opad = padded
        withUnsafeMutableBytes(of: &ipad) { for i in $0.indices { $0[i] ^= 0x36 } }
        withUnsafeMutableBytes(of: &opad) { for i in $0.indices { $0[i] ^= 0x5c } }
        withUnsafeBytes(of: ipad) { inner.update($0) }
        withUnsafeBytes(of: opad) { outer.update($0) }
    }

    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> SHA256Digest {
        var mac = HMACSHA256(key: key)
        mac.update(message)
        return mac.finalize()
    }

    public mutating func update(_ bytes: [UInt8]) { inner.update(bytes) }
    public mutating func update(_ bytes: UnsafeRawBufferPointer) { inner.update(bytes) }

    /// The tag: SHA256(opad || SHA256(ipad || message)). Truncate it with `SHA256Digest.prefix`; compare
    /// whole tags with `==`, which takes the same time wherever they differ.
    public consuming func finalize() -> SHA256Digest {
        let innerDigest = inner.finalize()
        var outer = outer
        innerDigest.withUnsafeBytes { outer.update($0) }
        return outer.finalize()
    }
}

/// HKDF with HMAC-SHA256 (RFC 5869): the frames' epoch keys are derived with it (docs/protocol.md).
public enum HKDFSHA256 {
    /// PRK = HMAC(salt, IKM); an empty salt stands for 32 zero bytes (RFC 5869 2.2), which HMAC's
    /// zero-padding of the key makes the same thing.
    public static func extract(inputKeyMaterial: [UInt8], salt: [UInt8]) -> SHA256Digest {
        HMACSHA256.authenticationCode(for: inputKeyMaterial, key: salt)
    }

    /// OKM = the first `outputByteCount` bytes of T(1) || T(2) || …, T(i) = HMAC(PRK, T(i-1) || info || i).
    public static func expand(pseudoRandomKey: SHA256Digest, info: [UInt8], outputByteCount: Int) -> [UInt8] {
        precondition((0...255 * SHA256.byteCount).contains(outputByteCount), "HKDF-SHA256 gives at most 8160 bytes")
        let keyed = pseudoRandomKey.withUnsafeBytes { HMACSHA256(key: $0) }
        var output: [UInt8] = []
        output.reserveCapacity(outputByteCount)
        var previous: SHA256Digest?
        var counter: UInt8 = 1
        while output.count < outputByteCount {
            var mac = keyed
            previous?.withUnsafeBytes { mac.update($0) }
            mac.update(info)
            withUnsafeBytes(of: counter) { mac.update($0) }
            let t = mac.finalize()
            t.withUnsafeBytes { output.append(contentsOf: $0.prefix(outputByteCount - output.count)) }
            previous = t
            counter &+= 1
        }
        return output
    }

    public static func deriveKey(inputKeyMaterial: [UInt8], salt: [UInt8], info: [UInt8], outputByteCount: Int) -> [UInt8] {
        expand(pseudoRandomKey: extract(inputKeyMaterial: inputKeyMaterial, salt: salt), info: info, outputByteCount: outputByteCount)
    }
}
