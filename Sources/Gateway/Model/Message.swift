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
