/// Who keeps the retained events (the socket broker's `RetainedStore`), asked on another part's
/// behalf: the MQTT bridge replays the found set after a reconnect from this one copy instead of
/// keeping its own (docs/footprint-found.md). The owner answers on its own thread, so the state is
/// never shared across threads; the asker waits for the answer on its own.
public protocol RetainedEventSource: Sendable {
    /// Calls `answer` once with the retained events whose topic is in `topics` (every one when nil),
    /// in the order they were first set, as of after every event published before this call; with
    /// nil when the owner has stopped (or stops before it answers).
    func retainedEvents(topics: Set<String>?, answer: @escaping @Sendable ([BrokerEvent]?) -> Void)
}
