/// Where events go: the socket broker (and through it every subscribed client) and, with `[mqtt]`,
/// the MQTT bridge. Here, below both, so the manager emits and the bridge receives without either
/// importing the other.
public protocol EventSink: Sendable {
    func publish(_ event: BrokerEvent)
}
