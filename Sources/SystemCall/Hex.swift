/// Bytes as lower-case hex, two digits a byte: how topics, logs, the CLI and the bench write
/// identifiers and payloads, and how test vectors are read back. The one hex codec of the package; here
/// because every module that prints bytes (Radio, Gateway, the CLI) already imports SystemCall.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)
    private static let uuidDashes = [4, 6, 8, 10]

    /// "0a1b…", no separators.
    public static func lower(_ bytes: some Sequence<UInt8>) -> String {
        write(bytes, dashesAfter: [])
    }

    /// A 16-byte UUID as 8-4-4-4-12, lower case ("e2c56db5-dffb-48d2-b060-d0f5a71096e0"); any other
    /// length as plain hex. Written in one pass into one buffer: a found iBeacon's topic, retain key
    /// and JSON each spell its UUID.
    public static func uuid(_ bytes: some Collection<UInt8>) -> String {
        write(bytes, dashesAfter: bytes.count == 16 ? uuidDashes : [])
    }

    /// Two digits a byte, with a dash after the bytes numbered in `dashesAfter` (ascending). Contiguous
    /// bytes (an array, a slice) are written straight into the string's storage: a generic loop over
    /// the sequence cost ~9,000 instructions a UUID, twice per found iBeacon.
    private static func write(_ bytes: some Sequence<UInt8>, dashesAfter: [Int]) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ write($0, dashesAfter: dashesAfter) }) { return text }
        return write(Array(bytes), dashesAfter: dashesAfter)
    }

    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, dashesAfter: [Int]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2 + dashesAfter.count) { text in
            var count = 0, nextDash = 0, at = 0
            for byte in bytes {
                if nextDash < dashesAfter.count, dashesAfter[nextDash] == count {
                    text[at] = UInt8(ascii: "-")
                    at += 1
                    nextDash += 1
                }
                text[at] = digits[Int(byte >> 4)]
                text[at + 1] = digits[Int(byte & 0xF)]
                at += 2
                count += 1
            }
            return at
        }
    }

    /// The bytes `text` spells, two hex digits a byte (either case); nil for an odd count or a
    /// character that is not a hex digit.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var k = 0
        while k < utf8.count {
            guard let high = value(utf8[k]), let low = value(utf8[k + 1]) else { return nil }
            bytes.append(high << 4 | low)
            k += 2
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
