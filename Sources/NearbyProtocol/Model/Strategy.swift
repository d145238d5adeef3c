/// The two ways a message travels (`GNSStrategy.discoveryMediums`).
public enum Medium: String, Sendable, Hashable, CaseIterable, Codable {
    case ble
    case audio
}

/// `GNSStrategy.discoveryMode`, with the serverless meaning of docs/product.md §4:
/// a broadcast publication transmits, a scan publication transmits only after hearing a matching
/// subscriber beacon; a broadcast subscription transmits a subscriber beacon, a scan subscription listens.
public enum DiscoveryMode: String, Sendable, Hashable, CaseIterable, Codable {
    case broadcast
    case scan
    case both

    public var broadcasts: Bool { self != .scan }
    public var scans: Bool { self != .broadcast }
}
