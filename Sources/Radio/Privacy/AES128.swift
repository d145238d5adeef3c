import CCrypto
import Synchronization

/// libcrypto could not be loaded, or refused a key (docs/identities.md).
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// AES-128 encryptors for a fixed list of keys, from OpenSSL's libcrypto (loaded with dlopen(3) the
/// first time: Sources/CCrypto). The one file that imports `CCrypto`.
///
/// Each key's cipher context keeps its key schedule, so a block costs one `EVP_EncryptUpdate`. The
/// contexts are mutable C state; the lock makes the ring safe to share (a copied `AirIngest` shares
/// it), and its owner takes it once per address, not once per block.
public final class AESKeyRing: Sendable {
    /// The contexts' addresses (integers, so the lock's value is `Sendable`).
    private let contexts: Mutex<[UInt]>
    public let count: Int

    /// Keys of 16 bytes each, most significant byte first (as FIPS-197 and the Core specification write them).
    public init(keys: [[UInt8]]) throws(CryptoError) {
        if nearby_crypto_load() != 0 {
            throw CryptoError(description: nearby_crypto_load_error().map { String(cString: $0) } ?? "cannot load \(NEARBY_CRYPTO_SONAME)")
        }
        var made: [UInt] = []
        for key in keys {
            guard key.count == 16, let aes = key.withUnsafeBufferPointer({ nearby_aes128_new($0.baseAddress!) }) else {
                made.forEach { nearby_aes128_free(Self.context($0)) }
                throw CryptoError(description: "libcrypto refused an AES-128 key")
            }
            made.append(UInt(bitPattern: aes))
        }
        count = made.count
        contexts = Mutex(made)
    }

    private static func context(_ address: UInt) -> OpaquePointer { OpaquePointer(bitPattern: address)! }

    deinit {
        contexts.withLock { $0.forEach { nearby_aes128_free(Self.context($0)) } }
    }

    /// The first key index whose encryption of `block` satisfies `accept` (given the 16-byte
    /// ciphertext), trying every key in order; nil when none does. `tried` counts the encryptions.
    public func firstIndex(encrypting block: (UInt64, UInt64), tried: inout Int,
                           where accept: (UnsafeRawBufferPointer) -> Bool) -> Int? {
        contexts.withLock { contexts in
            var input = block, output: (UInt64, UInt64) = (0, 0)
            return withUnsafeBytes(of: &input) { plain in
                withUnsafeMutableBytes(of: &output) { cipher in
                    let source = plain.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let target = cipher.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    for (index, aes) in contexts.enumerated() {
                        tried += 1
                        guard nearby_aes128_encrypt(Self.context(aes), source, target) == 0 else { continue }
                        if accept(UnsafeRawBufferPointer(cipher)) { return index }
                    }
                    return nil
                }
            }
        }
    }

    /// One block under key `index` (FIPS-197's and the Core specification's `e`), nil when libcrypto
    /// failed or there is no such key.
    public func encrypt(_ block: [UInt8], with index: Int) -> [UInt8]? {
        precondition(block.count == 16)
        var output = [UInt8](repeating: 0, count: 16)
        let status: Int32 = contexts.withLock { contexts in
            guard contexts.indices.contains(index) else { return -1 }
            return nearby_aes128_encrypt(Self.context(contexts[index]), block, &output)
        }
        return status == 0 ? output : nil
    }
}
