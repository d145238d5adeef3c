import NearbyProtocol
import Radio

extension IdentityResolvingKey {
    /// The forms owners already have (docs/identities.md), in the byte orders Home Assistant's
    /// Private BLE Device reads them (its `_parse_irk`, then bluetooth-data-tools' `get_cipher_for_irk`,
    /// which takes the bytes as the AES key as they are):
    /// - 32 hex digits, most significant byte first, as Home Assistant and ESPresense (`irk:` prefix)
    ///   take them; colons, spaces and an `irk:` or `0x` prefix are allowed;
    /// - 24 characters of base64, as a Mac's Keychain shows an iPhone's or a Watch's "Remote IRK":
    ///   least significant byte first (Home Assistant reverses them).
    /// The failure says what is wrong without repeating the text (it is a secret).
    public static func parse(_ text: String) -> Result<IdentityResolvingKey, KeyProblem> {
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
            return .success(IdentityResolvingKey(mostSignificantFirst: bytes)!)
        }
        if body.count == 24, body.hasSuffix("=") {
            guard let data = Base64.decode(body) else { return .failure(KeyProblem("is not valid base64")) }
            guard data.count == 16 else { return .failure(KeyProblem("is base64 of \(data.count) bytes; an IRK is 16")) }
            return .success(IdentityResolvingKey(mostSignificantFirst: data.reversed())!)
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
