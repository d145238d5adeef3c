import Digest
import Testing
import TestSupport

@Suite struct HMACSHA256Tests {
    // RFC 4231, section 4, test cases 1-7 (HMAC-SHA-256 rows). Case 5 is truncated to 128 bits; 6 and 7
    // have a 131-byte key, longer than a block, so it is hashed first.
    @Test(arguments: [
        (hex(String(repeating: "0b", count: 20)), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (hex(String(repeating: "aa", count: 20)), hex(String(repeating: "dd", count: 50)),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (hex("0102030405060708090a0b0c0d0e0f10111213141516171819"), hex(String(repeating: "cd", count: 50)),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (hex(String(repeating: "0c", count: 20)), Array("Test With Truncation".utf8),
         "a3b6167473100ee06e0c796c2955552b"),
        (hex(String(repeating: "aa", count: 131)), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (hex(String(repeating: "aa", count: 131)),
         Array(("This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
             + "be hashed before being used by the HMAC algorithm.").utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func rfc4231(key: [UInt8], data: [UInt8], tag: String) {
        let mac = HMACSHA256.authenticationCode(for: data, key: key)
        #expect(mac.description.prefix(tag.count) == tag)
    }

    @Test func aKeyedCopyContinuesFromTheKeyedState() {
        let key = Array("Jefe".utf8), message = Array("what do ya want for nothing?".utf8)
        let keyed = HMACSHA256(key: key)
        var first = keyed, second = keyed
        first.update(Array(message[..<7]))
        first.update(Array(message[7...]))
        second.update(Array("something else".utf8))
        #expect(first.finalize() == HMACSHA256.authenticationCode(for: message, key: key))
        #expect(second.finalize() == HMACSHA256.authenticationCode(for: Array("something else".utf8), key: key))
        var third = keyed
        third.update(message)
        #expect(third.finalize() == HMACSHA256.authenticationCode(for: message, key: key))
    }
}
