/// The bytes a hex string spells, two digits a byte ("0e0c01…"): test vectors stay as they are
/// printed in the Bluetooth Core spec, in btmon and in docs/protocol.md. Traps on anything else,
/// since a malformed vector is a bug in the test.
public func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
