import SystemCall

/// The bytes a hex string spells, two digits a byte ("0e0c01…"): test vectors stay as they are
/// printed in the Bluetooth Core spec, in btmon and in docs/protocol.md. Traps on anything else,
/// since a malformed vector is a bug in the test.
public func hex(_ text: String) -> [UInt8] {
    guard let bytes = Hex.bytes(text) else { preconditionFailure("not a hex test vector: \(text)") }
    return bytes
}
