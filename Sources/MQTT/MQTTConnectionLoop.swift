#if canImport(Glibc)
import Glibc
#endif
import NearbyProtocol
import Logging
import SystemCall

/// The bridge's thread: one poll(2) over the broker's socket and the wake pipe, driving libmosquitto
/// (read, write, keep-alive) itself, so nothing of it runs on Swift's cooperative pool. Connects,
/// waits `1, 2, 4 … reconnect_max_s` seconds between failed attempts (a refused password is never
/// retried in a tight loop), and after each connect says `online`, sends the discovery config, the
/// queued events and the retained state.
final class MQTTConnectionLoop {
    private let bridge: MQTTBridge
    private let client: MosquittoClient
    private let settings: MQTTSettings
    private var logger: Logger { bridge.log }
    private enum Link { case down, connecting, up }
    private var link = Link.down
    private var backoffSeconds = 1
    private var nextAttempt: UInt64 = 0
    /// When the current attempt began: a broker that never answers (a firewall dropping packets) is
    /// given up after `connectTimeout` instead of holding the link in `connecting` for ever.
    private var attemptStarted: UInt64 = 0
    private static let connectTimeout: UInt64 = 10_000_000_000
    /// The last failure reported, so that the same one is not reported on every attempt.
    private var reported: MQTTError?
    /// Counts connections, so commands and their publications are tied to the one they came over.
    private var connection: UInt64 = 0
    private var refusedSinceLog = 0
    private var nextRefusalLog: UInt64 = 0
    /// Messages handed to libmosquitto since the heap was last trimmed.
    private var sentSinceTrim = 0
    /// A burst this large (a flood's found and lost events) leaves the memory of its messages and of
    /// libmosquitto's packets free but still resident once written; it is handed back to the kernel
    /// when the burst has gone out (docs/footprint-found.md, "The bridge's bursts").
    static let burstToTrim = 1_024

    init(bridge: MQTTBridge, client: MosquittoClient) {
        self.bridge = bridge
        self.client = client
        self.settings = bridge.settings
    }

    func run() {
        logger.info("mqtt bridge started", metadata: ["broker": "\(settings.url)", "prefix": "\(settings.prefix)"])
        while !bridge.isShuttingDown {
            if link == .down, SystemCall.monotonicNanoseconds() >= nextAttempt { attempt() }
            waitForWork()
            bridge.drainWake()
            if link != .down { service() }
            if link == .up { flushQueue() }
            if link == .up { send(bridge.fleetTick()) }
            if sentSinceTrim >= Self.burstToTrim, link != .up || !client.wantsWrite {
                SystemCall.releaseFreeHeap()
                sentSinceTrim = 0
            }
        }
        if link == .up {
            // The others stop counting our evidence at once, rather than after it expires.
            send(bridge.fleetStopping())
            // A clean DISCONNECT does not send the last will: say `offline` ourselves.
            try? client.publish(topic: settings.availabilityTopic, payload: "offline", qos: 0, retain: true)
            client.disconnect()
            try? client.loopWrite()
        } else {
            client.disconnect()
        }
        logger.info("mqtt bridge stopped", metadata: ["broker": "\(settings.url)"])
    }

    private func attempt() {
        bridge.update { $0.connectAttempts += 1 }
        let (host, port) = switch settings.transport {
        case .tcp(let host, let port), .tls(let host, let port): (host, port)
        case .unix(let path): (path, 0)
        }
        do throws(MQTTError) {
            try client.connect(host: host, port: port, keepalive: settings.keepaliveS)
            link = .connecting
            attemptStarted = SystemCall.monotonicNanoseconds()
        } catch {
            failed(error)
        }
    }

    private func waitForWork() {
        var fds = [pollfd(fd: bridge.wakeFD, events: Int16(POLLIN), revents: 0)]
        if link != .down, let socket = client.socket {
            fds.append(pollfd(fd: socket, events: Int16(POLLIN) | (client.wantsWrite ? Int16(POLLOUT) : 0), revents: 0))
        }
        // Down: until the next attempt. Up: at least once a second for keep-alive (`loopMisc`).
        let timeout = link == .down ? Int32(clamping: (nextAttempt &- min(nextAttempt, SystemCall.monotonicNanoseconds())) / 1_000_000) : 1000
        do throws(Errno) {
            try SystemCall.retrying { poll(&fds, nfds_t(fds.count), max(timeout, 0)) }
        } catch {
            // ENOMEM (two descriptors cannot be EINVAL): said, and the loop waits out the timeout the
            // poll would have waited, so a failing poll never spins this thread.
            logger.error("mqtt: poll failed: \(error)", metadata: ["broker": "\(settings.url)"])
            usleep(UInt32(clamping: Int(max(timeout, 0)) * 1000))
        }
    }

    private func service() {
        do throws(MQTTError) {
            try client.loopRead()
            if client.wantsWrite { try client.loopWrite() }
            try client.loopMisc()
        } catch {
            failed(client.refusal ?? error)
            return
        }
        for message in client.takeMessages() {
            if settings.commands && message.topic == bridge.commandTopic {
                bridge.report(.command(message.payload, connection: connection))
            } else if let refusal = bridge.fleetReceived(topic: message.topic, payload: message.payload) {
                refused(refusal)
            }
        }
        switch client.session {
        case .accepted where link == .connecting: connected()
        case .refused: failed(client.refusal!)
        case .closed: failed(MQTTError(broker: settings.url, call: "connection", kind: .library(code: 7, text: "the connection was closed")))
        case .connecting where SystemCall.monotonicNanoseconds() - attemptStarted > Self.connectTimeout:
            failed(MQTTError(broker: settings.url, call: "CONNECT", kind: .setup("no answer within \(Self.connectTimeout / 1_000_000_000) s")))
        default: break
        }
    }

    private func connected() {
        link = .up
        backoffSeconds = 1
        reported = nil
        bridge.update { $0.connected = true }
        logger.notice("mqtt connected", metadata: ["broker": "\(settings.url)", "client_id": "\(settings.clientID)"])
        connection += 1
        bridge.report(.connected(connection))
        do throws(MQTTError) {
            if settings.commands { try client.subscribe(bridge.commandTopic, qos: settings.qos) }
            for filter in bridge.fleetSubscriptions { try client.subscribe(filter, qos: settings.qos) }
        } catch {
            failed(error)
            return
        }
        var first = [MQTTMessage(topic: settings.availabilityTopic, payload: "online", retain: true)]
        first += bridge.discoveryMessages
        send(first)
        let queued = bridge.takeQueued()
        if link == .up { send(queued) }
        // After the queue: evidence queued while down is older than this (a stale retained copy would
        // stay on the broker until the next refresh).
        if link == .up { send(bridge.fleetConnected()) }
        // The broker may have restarted without persistence: the found set and `$SYS` state again,
        // but not a topic the queue has just sent as it is now (every state went twice at each connect).
        if link == .up { send(MQTTOutbox.replay(bridge.retainedState(), after: queued)) }
    }

    private func flushQueue() {
        send(bridge.takeQueued())
    }

    private func send(_ messages: [MQTTMessage]) {
        guard !messages.isEmpty, link == .up else { return }
        do throws(MQTTError) {
            for message in messages {
                try client.publish(topic: message.topic, payload: message.payload, qos: settings.qos, retain: message.retain)
            }
            try client.loopWrite()
            sentSinceTrim += messages.count
            bridge.update { $0.published += messages.count }
        } catch {
            failed(error)
        }
    }

    /// Another gateway's evidence refused (outside input): said at once, then at most once a minute
    /// with the count in between, so a flood of bad evidence cannot flood the log.
    private func refused(_ reason: String) {
        refusedSinceLog += 1
        let now = SystemCall.monotonicNanoseconds()
        guard now >= nextRefusalLog else { return }
        logger.warning("mqtt: fleet evidence refused: \(reason)\(refusedSinceLog > 1 ? " (and \(refusedSinceLog - 1) more)" : "")",
                       metadata: ["broker": "\(settings.url)"])
        refusedSinceLog = 0
        nextRefusalLog = now + 60_000_000_000
    }

    private func failed(_ error: MQTTError) {
        let wasUp = link == .up
        client.disconnect()
        link = .down
        bridge.update { $0.connected = false }
        let wait = backoffSeconds
        nextAttempt = SystemCall.monotonicNanoseconds() + UInt64(wait) * 1_000_000_000
        backoffSeconds = min(backoffSeconds * 2, settings.reconnectMaxS)
        if wasUp || reported != error {
            logger.error("mqtt: \(error); retrying in \(wait) s", metadata: ["broker": "\(settings.url)"])
            bridge.report(.disconnected(error))
            reported = error
        } else {
            logger.debug("mqtt: \(error); retrying in \(wait) s", metadata: ["broker": "\(settings.url)"])
        }
    }
}
