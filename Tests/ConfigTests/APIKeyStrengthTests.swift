import Testing
@testable import Config

/// Issue 30 item 3: `nearby-gateway key` makes 160-bit keys; check-config warns about weaker ones.
@Suite struct APIKeyStrengthTests {
    @Test func generatedKeysUseTheWholeAlphabetAndPassTheirOwnCheck() {
        // Every byte value maps to a symbol; 32 distinct low-5-bit values give all 32 symbols.
        let key = APIKeyStrength.generate(randomBytes: (0..<32).map { UInt8($0) | 0xE0 })
        #expect(key.count == 32)
        #expect(Set(key) == Set(APIKeyStrength.alphabet))
        #expect(APIKeyStrength.weakness(key) == nil)
        #expect(APIKeyStrength.estimatedBits(key) >= 128)
        #expect(!key.contains(where: { "0o1l".contains($0) }))
    }

    @Test(arguments: [
        ("k", "short"),
        ("a-real-key-1234", "short"),
        ("password123", "common word"),
        ("Summer2024!", "common word"),
        ("nearby-gateway", "common word"),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "too few"),
        ("abababababababababababababababababababab", "too few"),
        ("1234567890123456789012345", "short"),
    ])
    func weakKeysAreNamed(key: String, reason: String) {
        let weakness = APIKeyStrength.weakness(key)
        #expect(weakness?.contains(reason) == true, "\(key): \(weakness ?? "no warning")")
    }

    @Test(arguments: [
        "7mvkq2xw9hsd4tgnzc3ra8pyejb5fu6k",           // a generated key
        "Jq3+vX9/pL2#mR8kT4wZ6yN1bH5cF7gD",            // a random key with every class
        "e2e-test-3F2504E0-4F89-11D3-9A0C-0305E82C3301", // the end-to-end tests' keys (a UUID)
    ])
    func strongKeysPass(key: String) {
        #expect(APIKeyStrength.weakness(key) == nil, "\(key): \(APIKeyStrength.weakness(key) ?? "")")
    }
}
