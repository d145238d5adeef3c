/// A device's Identity Resolving Key (Core Vol 3 Part H 2.4.2.1): 16 bytes, most significant first,
/// as the AES key of `ah`. A secret: its description never shows the bytes.
public struct IdentityResolvingKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Most significant byte first: the AES-128 key.
    public let bytes: [UInt8]

    public init?(mostSignificantFirst bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var description: String { "<IRK, 16 bytes>" }
    public var debugDescription: String { description }
}
