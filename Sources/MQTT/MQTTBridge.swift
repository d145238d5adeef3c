import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NearbyProtocol
import SystemCall
import Synchronization

/// Counters of the bridge, in `GET stats` under `mqtt`.
public struct MQTTBridgeStatistics: Sendable, Equatable {
    public var connected = false
    public var queued = 0
    /// Events dropped because the queue was full while the broker was unreachable.
    public var dropped = 0
    public var published = 0
    public var connectAttempts = 0
    /// With `room`: messages the fleet's rooms track, and pieces of the others' evidence refused.
    public var roomMessages: Int?
    public var roomEvidenceRefused: Int?
}

/// The bridge to the house's MQTT broker (docs/mqtt.md). `publish` (the `EventSink`) may be called from
/// any thread and never blocks; one dedicated thread owns the libmosquitto client, connects, reconnects
/// with back-off and publishes. Connection changes come out of `changes`, for the manager's error state.
public final class MQTTBridge: EventSink, Sendable {
    /// Connection changes and commands, in the order they happened: a command of a connection
    /// always comes before that connection's `disconnected`.
    public enum Change: Sendable, Equatable {
        /// Connection `n` (counted from 1) is up.
        case connected(UInt64)
        case disconnected(MQTTError)
        /// A line received on `<prefix>/cmd` over connection `n` (only with `commands = true`).
        case command([UInt8], connection: UInt64)
    }

    /// Socket client ids start at 1; MQTT connections' ids start here, so their publications never
    /// mix with a socket client's.
    package static let commandClientBase: UInt64 = 1 << 40

    var commandTopic: String { "\(settings.prefix)/cmd" }
    var replyTopic: String { "\(settings.prefix)/cmd/reply" }

    package let settings: MQTTSettings
    private let password: String?
    private let logger: Logger
    private let discovery: [MQTTMessage]
    /// The socket broker, which keeps the manager's retained events; nil: the outbox copies them.
    private let retainedSource: (any RetainedEventSource)?
    private let wakePipe: WakePipe
    private struct Shared {
        var outbox: MQTTOutbox
        /// nil with `discovery = false`.
        var homeAssistant: HomeAssistant?
        /// nil without `room`.
        var fleet: FleetRooms?
        var statistics = MQTTBridgeStatistics()
        var shutdown = false
        /// A byte is in the wake pipe (or about to be): a burst of events costs one write and one wake-up.
        var wakePending = false
        var thread: OSThread.Joinable?
    }
    private let shared: Mutex<Shared>
    public let changes: AsyncStream<Change>
    private let changesContinuation: AsyncStream<Change>.Continuation

    /// `password` is the configured one or the password file's content (read by the caller).
    /// `subscriptions` and `model` (the board) describe the gateway to Home Assistant. Public for
    /// `nearby-gateway-bench mqtt-bridge`, which drives this same bridge (tools/bench/mqtt.py).
    /// `retainedSource` (the socket broker) also receives every event published here, first: the
    /// bridge replays the found set from it after a reconnect instead of keeping a copy.
    public init(settings: MQTTSettings, password: String?, subscriptions: [BridgedSubscription], model: String, logger: Logger,
                retainedSource: (any RetainedEventSource)? = nil) throws(MQTTError) {
        // Loaded here, at start-up: a system without libmosquitto refuses `run` at once, naming it.
        _ = try MosquittoLibrary.load(broker: settings.url)
        self.settings = settings
        self.password = password
        self.logger = logger
        self.retainedSource = retainedSource
        var homeAssistant = settings.discovery ? HomeAssistant(settings: settings, subscriptions: subscriptions, model: model) : nil
        var outbox = MQTTOutbox(prefix: settings.prefix, limit: settings.queue, retainedElsewhere: retainedSource != nil)
        for state in homeAssistant?.initialStates() ?? [] { outbox.addOwn(state) }
        self.discovery = homeAssistant?.configs ?? []
        do throws(Errno) {
            wakePipe = try WakePipe()
        } catch {
            throw MQTTError(broker: settings.url, call: "pipe", kind: .errno(error))
        }
        let fleet = settings.room.map { FleetRooms(settings: settings, room: $0, gateway: HomeAssistant.topicSafe(settings.clientID)) }
        shared = Mutex(Shared(outbox: outbox, homeAssistant: homeAssistant, fleet: fleet))
        (changes, changesContinuation) = AsyncStream<Change>.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    public func publish(_ event: BrokerEvent) {
        let wakeNow = shared.withLock { shared -> Bool in
            shared.outbox.add(event)
            for state in shared.homeAssistant?.apply(event) ?? [] { shared.outbox.addOwn(state) }
            if shared.fleet != nil {
                for message in shared.fleet!.apply(event, now: .now, date: Date()) { shared.outbox.enqueue(message) }
            }
            defer { shared.wakePending = true }
            return !shared.wakePending
        }
        if wakeNow { wake() }
    }

    /// The answer to a command, to `<prefix>/cmd/reply` (queued like an event).
    package func reply(_ line: String) {
        let wakeNow = shared.withLock { shared -> Bool in
            shared.outbox.enqueue(MQTTMessage(topic: replyTopic, payload: line, retain: false))
            defer { shared.wakePending = true }
            return !shared.wakePending
        }
        if wakeNow { wake() }
    }

    public var statistics: MQTTBridgeStatistics {
        shared.withLock { shared in
            var statistics = shared.statistics
            statistics.queued = shared.outbox.queued
            statistics.dropped = shared.outbox.dropped
            statistics.roomMessages = shared.fleet?.decider.count
            statistics.roomEvidenceRefused = shared.fleet?.refused
            return statistics
        }
    }

    /// Starts the bridge's thread; it connects at once and keeps trying until `stop`.
    public func start() throws(MQTTError) {
        let client = try MosquittoClient(broker: settings.url, clientID: settings.clientID, username: settings.username,
                                         password: password, caFile: settings.caFile,
                                         will: (settings.availabilityTopic, "offline"))
        nonisolated(unsafe) let owned = client   // handed to the thread, which alone uses it from here on
        do throws(Errno) {
            // Spawned under the lock: a `shutdown` racing with the start finds the thread to join.
            try shared.withLock { (shared) throws(Errno) in
                shared.thread = try OSThread.spawn(name: "mqtt") { [self] in
                    MQTTConnectionLoop(bridge: self, client: owned).run()
                }
            }
        } catch {
            throw MQTTError(broker: settings.url, call: "pthread_create", kind: .errno(error))
        }
    }

    /// Says `offline`, disconnects and waits for the thread to end, on a thread of its own.
    package func stop() async {
        await OwnThread.run("mqtt-stop") { self.shutdown() }
    }

    public func shutdown() {
        let thread = shared.withLock { shared -> OSThread.Joinable? in
            shared.shutdown = true
            defer { shared.thread = nil }
            return shared.thread
        }
        wake()
        thread?.join()
        changesContinuation.finish()
    }

    // MARK: for the connection loop (on the bridge's thread)

    var wakeFD: Int32 { wakePipe.fd }
    var discoveryMessages: [MQTTMessage] { discovery }
    var log: Logger { logger }
    var isShuttingDown: Bool { shared.withLock { $0.shutdown } }

    func takeQueued() -> [MQTTMessage] {
        var (queued, shrunk) = shared.withLock { ($0.outbox.takeAll(), $0.outbox.takeShrunk()) }
        // On the bridge's thread (never the pool): the retained copies of an expired flood were freed.
        if shrunk { SystemCall.releaseFreeHeap() }
        // A found topic that another message still holds after a lost: that one's event, from the
        // broker now (at least as new as the lost; anything newer follows in the next flush).
        let topics = Set(queued.compactMap(\.latestOf))
        if !topics.isEmpty {
            var latest: [String: String] = [:]
            for event in askSource(topics: topics) ?? [] { latest[event.topic] = event.json }
            for index in queued.indices where queued[index].latestOf != nil {
                queued[index].payload = latest[queued[index].latestOf!] ?? ""
                queued[index].latestOf = nil
            }
        }
        return queued
    }

    // The fleet's rooms (nil/empty without `room`): on the bridge's thread, under the lock.
    var fleetSubscriptions: [String] { shared.withLock { $0.fleet?.subscriptions ?? [] } }
    func fleetConnected() -> [MQTTMessage] { shared.withLock { $0.fleet?.connected(now: .now, date: Date()) ?? [] } }
    func fleetTick() -> [MQTTMessage] { shared.withLock { $0.fleet?.tick(now: .now, date: Date()) ?? [] } }
    func fleetStopping() -> [MQTTMessage] { shared.withLock { $0.fleet?.stopping() ?? [] } }
    /// A reason when the message was refused.
    func fleetReceived(topic: String, payload: [UInt8]) -> String? {
        shared.withLock { $0.fleet?.received(topic: topic, payload: payload, now: .now, date: Date()) }
    }
    /// The whole retained state: the source's (asked first, so it is at least as new as anything
    /// taken from the queue before this call) and the bridge's own.
    func retainedState() -> [MQTTMessage] {
        let kept = retainedSource == nil ? [] : askSource(topics: nil)
        return shared.withLock { $0.outbox.retainedState(with: kept) }
    }

    /// Asks the source on the bridge's thread and waits for its answer on the wake pipe (a wait of
    /// one turn of the broker's loop); nil at shutdown or when the source has stopped. Events that
    /// came meanwhile stay queued: the pipe is woken again, so the loop flushes them at once.
    private func askSource(topics: Set<String>?) -> [BrokerEvent]? {
        guard let retainedSource else { return nil }
        let answer = Answer()
        retainedSource.retainedEvents(topics: topics) { [self] events in
            answer.events.withLock { $0 = .some(events) }
            wake()
        }
        defer { wake() }
        while true {
            if let answered = answer.events.withLock({ $0 }) { return answered }
            if isShuttingDown { return nil }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            // The timeout only bounds a wait whose wake-up was lost (EINTR is retried; ENOMEM loops).
            _ = try? SystemCall.retrying { poll(&fds, 1, 1000) }
            wakePipe.drain()
        }
    }

    private final class Answer: Sendable {
        /// .none until answered; then the source's answer (nil: it has stopped).
        let events = Mutex<[BrokerEvent]??>(nil)
    }
    func update(_ body: (inout MQTTBridgeStatistics) -> Void) { shared.withLock { body(&$0.statistics) } }
    func report(_ change: Change) { changesContinuation.yield(change) }

    /// Empties the wake pipe, then lets the next event write to it again. In this order: an event
    /// published while the pipe is being emptied either finds the flag still set (and is taken by
    /// the flush that follows) or writes a byte that stays in the pipe. The other order lost a
    /// wake-up whenever an event came in between: the flag stayed set with the pipe empty, and every
    /// later event waited for the poll's 1 s timeout (issue 31: found events reached the broker
    /// 1,005 ms late). `afterReading` lets a test publish at exactly that point.
    func drainWake(afterReading: () -> Void = {}) {
        wakePipe.drain()
        afterReading()
        shared.withLock { $0.wakePending = false }
    }

    private func wake() { wakePipe.wake() }
}
