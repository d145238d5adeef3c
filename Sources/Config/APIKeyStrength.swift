import Glibc

/// How strong an `api_key` is, and a strong one made on demand (`nearby-gateway key`). The key is
/// the deployment's only secret, and anyone who guesses it can read and forge every frame, so a key
/// under 128 bits of guessing work is worth a warning (not a refusal: a running deployment keeps
/// working while its owner rolls a new key out to every gateway).
public enum APIKeyStrength {
    /// The alphabet of generated keys: lower-case letters and digits without 0/o and 1/l, so a key read
    /// aloud or off a screen is copied right; one word, so a double-click selects all of it.
    public static let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
    /// 32 symbols of 5 bits: 160 bits.
    public static let generatedLength = 32
    /// The bits below which `weakness` warns.
    public static let minimumBits = 128.0

    /// A new key from `randomBytes` (getrandom(2) in the product): each byte's low 5 bits pick a
    /// symbol, so all 32 symbols are equally likely.
    public static func generate(randomBytes: [UInt8]) -> String {
        precondition(randomBytes.count >= generatedLength)
        return String(randomBytes.prefix(generatedLength).map { alphabet[Int($0 & 0x1F)] })
    }

    /// An upper bound on the bits a guesser needs: length × log2 of the character classes used
    /// (lower, upper, digits, others). Generous for real passwords, exact for random keys.
    public static func estimatedBits(_ key: String) -> Double {
        var pool = 0
        if key.contains(where: { $0.isASCII && $0.isLowercase }) { pool += 26 }
        if key.contains(where: { $0.isASCII && $0.isUppercase }) { pool += 26 }
        if key.contains(where: { $0.isASCII && $0.isNumber }) { pool += 10 }
        if key.contains(where: { !($0.isASCII && ($0.isLetter || $0.isNumber)) }) { pool += 33 }
        guard pool > 1 else { return 0 }
        return Double(key.count) * log2(Double(pool))
    }

    /// Why `key` is weaker than a generated one, or nil. The placeholders are refused elsewhere
    /// (`APIKeyRule`); this only warns.
    public static func weakness(_ key: String) -> String? {
        let letters = String(key.lowercased().filter { $0.isLetter })
        if CommonWords.all.contains(letters) || CommonWords.all.contains(key.lowercased()) {
            return "is a common word with at most digits or symbols around it, the first thing a guesser tries"
        }
        let distinct = Set(key).count
        if key.count >= 8, distinct * 3 < key.count || distinct < 6 {
            return "repeats too few characters (\(distinct) different ones in \(key.count))"
        }
        let bits = estimatedBits(key)
        if bits < minimumBits {
            return "is short: at most \(Int(bits)) bits, under the \(Int(minimumBits)) a key needs"
        }
        return nil
    }
}

/// The words (and word-like keys) guessers try first: the most common passwords and their roots,
/// plus words of this product. Keys are compared after dropping digits and symbols.
enum CommonWords {
    static let all: Set<String> = [
        "password", "passwort", "passw", "pass", "secret", "letmein", "welcome", "admin", "administrator",
        "root", "login", "master", "qwerty", "qwertz", "azerty", "asdf", "asdfgh", "zxcvbn", "abc", "abcdef",
        "iloveyou", "monkey", "dragon", "football", "baseball", "sunshine", "princess", "shadow", "superman",
        "batman", "trustno", "hello", "freedom", "whatever", "summer", "winter", "spring", "autumn",
        "changeme", "default", "guest", "test", "testing", "demo", "example", "key", "apikey", "api",
        "mykey", "secretkey", "nearby", "nearbygateway", "gateway", "raspberry", "raspberrypi", "pi",
        "home", "homeassistant", "house", "kitchen", "office", "garden", "beacon", "bluetooth", "mqtt",
    ]
}
