/// A config printed anywhere (logs, errors, service descriptions) never shows the api_key in full:
/// whoever reads the journal must not be able to join the deployment.
extension GatewayConfig: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "GatewayConfig(\(path), api_key \(Self.redacted(apiKey)), board \(boardName), "
            + "\(publications.count) publications, \(subscriptions.count) subscriptions, \(identities.count) identities)"
    }

    public var debugDescription: String { description }

    /// The first 4 characters and the length: enough to tell two keys apart, useless to an intruder.
    public static func redacted(_ key: String) -> String {
        key.count <= 8 ? "<\(key.count) chars>" : "\(key.prefix(4))…<\(key.count) chars>"
    }
}
