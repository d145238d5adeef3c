import Testing
@testable import Radio

/// `ah` and resolution against the Core specification's sample data (Vol 3, Part H, Appendix D.7),
/// which no one here wrote: IRK ec0234a357c8ad05341010a60a397d9b, prand 708194, hash 0dfbaa, all
/// written most significant byte first.
@Suite struct PrivateAddressTests {
    static let specKey = IdentityResolvingKey(mostSignificantFirst: hex("ec0234a357c8ad05341010a60a397d9b"))!
    /// prand then hash: the address the sample data makes (its top bits 01: resolvable).
    static let specAddress = BDAddress(rawValue: 0x7081_940D_FBAA)

    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test func ahOfTheSpecificationsSampleData() throws {
        let ring = try AESKeyRing(keys: [Self.specKey.bytes])
        #expect(PrivateAddress.ah(ring, key: 0, prand: 0x708194) == 0x0DFBAA)
    }

    /// FIPS-197 Appendix C.1's AES-128 vector: the ring is AES-128 with the key most significant first.
    @Test func aesOfFIPS197() throws {
        let ring = try AESKeyRing(keys: [Self.hex("000102030405060708090a0b0c0d0e0f")])
        #expect(ring.encrypt(Self.hex("00112233445566778899aabbccddeeff"), with: 0) == Self.hex("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    @Test func addressPartsAndKind() {
        #expect(PrivateAddress.prand(Self.specAddress) == 0x708194)
        #expect(PrivateAddress.hash(Self.specAddress) == 0x0DFBAA)
        #expect(PrivateAddress.isResolvable(Self.specAddress, type: .random))
        #expect(!PrivateAddress.isResolvable(Self.specAddress, type: .public))
        #expect(!PrivateAddress.isResolvable(BDAddress(rawValue: 0xC081_940D_FBAA), type: .random))   // random static
        #expect(!PrivateAddress.isResolvable(BDAddress(rawValue: 0x3081_940D_FBAA), type: .random))   // non-resolvable
    }

    @Test func resolvesToItsKeyAmongOthersAndCachesTheAnswer() throws {
        let other = IdentityResolvingKey(mostSignificantFirst: Array(repeating: 0x11, count: 16))!
        var resolver = try IdentityResolver(keys: [other, Self.specKey], capacity: 8)
        #expect(resolver.identity(of: Self.specAddress) == 1)
        #expect(resolver.counters.resolutions == 2)
        #expect(resolver.identity(of: Self.specAddress) == 1)
        #expect(resolver.counters.cacheHits == 1)
        #expect(resolver.counters.cacheMisses == 1)
        #expect(resolver.counters.resolved == 1)
        // One bit of the hash off: no key resolves it, and the answer "none" is cached too.
        let wrong = BDAddress(rawValue: Self.specAddress.rawValue ^ 1)
        #expect(resolver.identity(of: wrong) == nil)
        #expect(resolver.identity(of: wrong) == nil)
        #expect(resolver.counters.resolutions == 4)
        #expect(resolver.counters.cacheHits == 2)
    }

    @Test func aWrongKeyResolvesNothing() throws {
        var resolver = try IdentityResolver(keys: [IdentityResolvingKey(mostSignificantFirst: Array(Self.specKey.bytes.reversed()))!])
        #expect(resolver.identity(of: Self.specAddress) == nil)
    }

    @Test func theCacheIsBoundedAndForgetsTheOldest() throws {
        var resolver = try IdentityResolver(keys: [Self.specKey], capacity: 3)
        for low in 0..<10 as Range<UInt64> { _ = resolver.identity(of: BDAddress(rawValue: 0x4000_0000_0000 | low)) }
        #expect(resolver.cachedAddresses == 3)
        #expect(resolver.counters.resolutions == 10)
        _ = resolver.identity(of: BDAddress(rawValue: 0x4000_0000_0009))   // among the newest three: a hit
        _ = resolver.identity(of: BDAddress(rawValue: 0x4000_0000_0000))   // forgotten: resolved again
        #expect(resolver.counters.cacheHits == 1)
        #expect(resolver.counters.resolutions == 11)
    }

    @Test func theKeyNeverShowsInItsDescription() {
        #expect("\(Self.specKey)" == "<IRK, 16 bytes>")
        #expect(!String(reflecting: Self.specKey).lowercased().contains("ec02"))
    }
}
