import NearbyProtocol

/// What the bridge needs of a `[[subscription]]`: which messages and beacons it matches, for its Home
/// Assistant entity. Gateway/Service/ConfigMapping.swift makes these from the config.
public struct BridgedSubscription: Sendable, Equatable {
    public var namespace: String
    /// "*" = every type of the namespace.
    public var type: String
    public var include: [BeaconFilter]
    /// `[[identity]]` names included one by one (`"identity/<name>"`).
    public var identities: [String]

    public init(namespace: String, type: String = "*", include: [BeaconFilter] = [], identities: [String] = []) {
        self.namespace = namespace
        self.type = type
        self.include = include
        self.identities = identities
    }
}
