import Glibc
import Logging
import NearbyProtocol
import Radio

/// What the manager answers about itself (GET found/publications/stats, the air ingest's
/// listening set): read-only views of its state, no I/O.
extension MessageManager {
    /// Answers when the actor takes a call: the watchdog's proof that the manager is not stuck.
    func probe() {}

    /// Entries running now (permission granted, power state) that accept `medium`.
    func runningSubscriptions(for medium: Medium) -> [Subscription] {
        Self.running(subscriptions, for: medium, in: state)
    }

    /// What the air ingest listens for in the current state (see `AirIngest.Listening`).
    var listening: AirIngest.Listening {
        Self.listening(state: state, subscriptions: subscriptions, publications: publications.values)
    }

    static func listening(state: GatewayState, subscriptions: [Subscription],
                                  publications: some Sequence<Publication>) -> AirIngest.Listening {
        AirIngest.Listening(ble: running(subscriptions, for: .ble, in: state), audio: running(subscriptions, for: .audio, in: state),
                            hasScanPublications: publications.contains { $0.mode == .scan })
    }

    /// Entries running in `state` (permission granted, power state) that accept `medium`.
    private static func running(_ subscriptions: [Subscription], for medium: Medium, in state: GatewayState) -> [Subscription] {
        guard state.permission == .granted else { return [] }
        return subscriptions.filter {
            AirPlanner.runs(background: $0.background, in: state) && AirPlanner.mediums($0.mediums, in: state).contains(medium)
        }
    }

    var frameCounters: Reassembler.Counters { inbound.frameCounters }

    /// `GET publications`, one object per `$SYS/publications` line, oldest handle first.
    func publicationJSONs() -> [String] {
        publications.values.sorted { $0.id < $1.id }.map { publication in
            var json = JSONObjectWriter()
            json.add("handle", publication.id.description)
            json.add("namespace", publication.message.namespace)
            json.add("type", publication.message.type)
            json.add("mediums", rawJSON: "[" + publication.mediums.map(\.rawValue).sorted().map(JSONObjectWriter.quote).joined(separator: ",") + "]")
            json.add("mode", publication.mode.rawValue)
            json.add("background", publication.background)
            json.add("origin", publication.owner == nil ? "config" : "socket")
            return json.string
        }
    }

    /// The found entries, first found first: one object per `$SYS/found` line of `GET found`.
    func foundJSONs() -> [String] {
        inbound.foundEntries.sorted { $0.firstSeen < $1.firstSeen }.map { entry in eventJSON(entry, entry.detail) }
    }

    var hasScanPublications: Bool { publications.values.contains { $0.mode == .scan } }
    var publicationCount: Int { publications.count }
    var runtimePublicationCount: Int { publications.values.reduce(0) { $0 + ($1.owner == nil ? 0 : 1) } }
    func publicationCount(owner: Int) -> Int { publications.values.reduce(0) { $0 + ($1.owner == owner ? 1 : 0) } }
}
