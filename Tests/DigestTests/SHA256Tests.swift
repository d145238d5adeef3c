import Digest
import Testing
import TestSupport

@Suite struct SHA256Tests {
    // FIPS 180-4's examples (NIST CSRC "Examples with Intermediate Values", SHA-256).
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func nistVectors(message: String, digest: String) {
        #expect(SHA256.hash(Array(message.utf8)).description == digest)
    }

    @Test func oneMillionA() {
        var sha = SHA256()
        let thousand = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { sha.update(thousand) }
        #expect(sha.finalize().description == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func everyLengthAcrossTheBlockBoundaries() {
        for (count, digest) in SHA256LengthVectors.digests.enumerated() {
            #expect(SHA256.hash(SHA256LengthVectors.message(count: count)).description == digest, "\(count) bytes")
        }
    }

    @Test func splitAtEveryOffsetEqualsOneShot() {
        let message = SHA256LengthVectors.message(count: 130)
        let whole = SHA256.hash(message)
        for first in 0...message.count {
            for second in [first, (first + message.count) / 2, message.count] {
                var sha = SHA256()
                sha.update(Array(message[..<first]))
                sha.update(Array(message[first..<second]))
                sha.update(Array(message[second...]))
                #expect(sha.finalize() == whole, "split at \(first) and \(second)")
            }
        }
    }

    @Test func aCopyContinuesOnItsOwn() {
        var base = SHA256()
        base.update(Array("abc".utf8))
        var copy = base
        copy.update(Array("def".utf8))
        #expect(base.finalize() == SHA256.hash(Array("abc".utf8)))
        #expect(copy.finalize() == SHA256.hash(Array("abcdef".utf8)))
    }

    @Test func digestBytesAndPrefixAreBigEndian() {
        let digest = SHA256.hash(Array("abc".utf8))
        #expect(digest.bytes == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(digest.prefix(2) == 0xba78)
        #expect(digest.prefix(4) == 0xba78_16bf)
        #expect(digest.prefix(8) == 0xba78_16bf_8f01_cfea)
        #expect(digest != SHA256.hash(Array("abd".utf8)))
    }
}
