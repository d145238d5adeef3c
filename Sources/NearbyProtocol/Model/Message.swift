import Glibc
import SystemCall

/// A Nearby message: what a publication sends and a subscription finds.
///
/// Namespace and type are UTF-8 strings of at most 32 bytes each (checked at config time and on `PUB`);
/// the content is opaque bytes bounded by the medium's limit.
public struct Message: Hashable, Sendable {
    public var namespace: String
    public var type: String
    public var content: [UInt8]

    public static let maxNamespaceBytes = 32
    public static let maxTypeBytes = 32
    /// Namespaces of beacon and identity sightings (Eddystone, iBeacon, `[[identity]]`), never a publication's or subscription's.
    public static let reservedNamespaces: Set<String> = ["eddystone", "eddystone-url", "ibeacon", "identity"]

    /// Why `value` cannot be a namespace (`isNamespace`) or a type, or nil when it can: 1…32 UTF-8
    /// bytes that fit a topic level (no '/', '+', '#', whitespace or control character, C1 included),
    /// not starting with '$' (`$SYS`), not the wildcard `*`, and for namespaces not one reserved for
    /// beacon sightings.
    /// The one rule for the config (check-config) and the socket's `PUB`.
    public static func nameProblem(_ value: String, isNamespace: Bool) -> String? {
        let limit = isNamespace ? maxNamespaceBytes : maxTypeBytes
        if value.isEmpty { return "must not be empty" }
        if value.utf8.count > limit { return "is \(value.utf8.count) bytes, at most \(limit) allowed" }
        if let bad = value.unicodeScalars.first(where: {
            "/+#".unicodeScalars.contains($0) || $0.properties.isWhitespace || $0.properties.generalCategory == .control
        }) {
            let shown = bad.properties.generalCategory == .control || bad.properties.isWhitespace
                ? String(cFormat: "U+%04X", bad.value) : "'\(bad)'"
            return "must not contain \(shown) (it is a topic level: no '/', '+', '#', spaces or control characters)"
        }
        if value.hasPrefix("$") { return "must not start with '$' (reserved for $SYS topics)" }
        // The subscriptions' wildcard (`type = "*"`): a message named "*" could not be subscribed to alone.
        if value == "*" { return isNamespace ? "\"*\" is not a namespace" : "\"*\" matches every type in a subscription; a message needs a real type" }
        if isNamespace, reservedNamespaces.contains(value) {
            return "\"\(value)\" is reserved for beacon sightings; subscribe to beacons with include = [...]"
        }
        return nil
    }

    public init(namespace: String, type: String, content: [UInt8]) {
        self.namespace = namespace
        self.type = type
        self.content = content
    }

    /// The synthesised hash feeds the content one byte at a time; a message is a found-set key that is
    /// hashed on every sighting, so its content goes in as one block (equality is still the synthesised one).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(namespace)
        hasher.combine(type)
        hasher.combine(content.count)
        content.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
