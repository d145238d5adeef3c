import NearbyProtocol

/// An identity's key as the config gives it: 16 bytes, most significant first (the AES key of the
/// Core specification's `ah`). The config's own type: `ConfigMapping`'s side (AirIngest) hands the
/// bytes to the radio's `IdentityResolvingKey`, so Config imports no part (docs/architecture.md).
/// A secret: its description never shows the bytes.
public struct IdentityKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Most significant byte first.
    public let bytes: [UInt8]

    public init?(mostSignificantFirst bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var description: String { "<IRK, 16 bytes>" }
    public var debugDescription: String { description }
}

extension IdentityKey {
    /// The forms owners already have (docs/identities.md), in the byte orders Home Assistant's
    /// Private BLE Device reads them (its `_parse_irk`, then bluetooth-data-tools' `get_cipher_for_irk`,
    /// which takes the bytes as the AES key as they are):
    /// - 32 hex digits, most significant byte first, as Home Assistant and ESPresense (`irk:` prefix)
    ///   take them; colons, spaces and an `irk:` or `0x` prefix are allowed;
    /// - 24 characters of base64, as a Mac's Keychain shows an iPhone's or a Watch's "Remote IRK":
    ///   least significant byte first (Home Assistant reverses them).
    /// The failure says what is wrong without repeating the text (it is a secret).
    public static func parse(_ text: String) -> Result<IdentityKey, KeyProblem> {
        var body = Substring(text).drop(while: \.isWhitespace)
        while body.last?.isWhitespace == true { body = body.dropLast() }
        for prefix in ["irk:", "0x"] where body.lowercased().hasPrefix(prefix) { body = body.dropFirst(prefix.count) }
        if body.isEmpty { return .failure(KeyProblem("is empty")) }
        let digits = body.filter { $0 != ":" && $0 != " " && $0 != "-" }
        if digits.count == 32, digits.allSatisfy(\.isHexDigit) {
            var bytes = [UInt8]()
            var index = digits.startIndex
            while index < digits.endIndex {
                let next = digits.index(index, offsetBy: 2)
                bytes.append(UInt8(digits[index..<next], radix: 16)!)
                index = next
            }
            return .success(IdentityKey(mostSignificantFirst: bytes)!)
        }
        if body.count == 24, body.hasSuffix("=") {
            guard let data = Base64.decode(body) else { return .failure(KeyProblem("is not valid base64")) }
            guard data.count == 16 else { return .failure(KeyProblem("is base64 of \(data.count) bytes; an IRK is 16")) }
            return .success(IdentityKey(mostSignificantFirst: data.reversed())!)
        }
        if digits.allSatisfy(\.isHexDigit) {
            return .failure(KeyProblem("has \(digits.count) hex digits; an IRK is 32 (16 bytes)"))
        }
        if body.hasSuffix("=") {
            return .failure(KeyProblem("is \(body.count) characters of base64; an IRK is 24 (16 bytes, ending in ==)"))
        }
        return .failure(KeyProblem("is neither 32 hex digits nor 24 characters of base64"))
    }

    /// Why a text is not an IRK.
    public struct KeyProblem: Error, Equatable, Sendable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }
}
