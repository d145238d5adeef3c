/// Beacons a subscription can opt into (`include`), found under reserved namespaces.
public enum BeaconFilter: String, Sendable, Hashable, CaseIterable {
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneTLM = "eddystone-tlm"
    case iBeacon = "ibeacon"
    /// Every `[[identity]]` (one alone: `"identity/<name>"`, kept in `SubscriptionConfig.identities`).
    case identity = "identity"
}
