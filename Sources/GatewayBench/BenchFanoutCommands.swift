import ArgumentParser
import Broker
import Glibc
import Logging
import SystemCall
import NearbyProtocol

/// Our broker's side of the fan-out benchmark: the real `SocketBroker` on a UNIX socket, fed from this
/// process the way the message manager feeds it (`publish` from another thread). Prints READY when
/// listening, starts publishing at the line GO on stdin, prints its JSON when done.
struct BenchFanoutServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fanout-server", abstract: "SocketBroker under fan-out load.")

    @Option var socket: String
    @Option var rate = 10_000.0
    @Option var seconds = 10.0
    @Option(help: "Size of the event JSON as clients receive it.") var payloadBytes = 256
    @Option var maxClients = 128
    @Option(help: "The broker's write coalescing window in microseconds (default: the broker's own).")
    var writeCoalescingUs: UInt64?

    func run() throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        var configuration = SocketBrokerConfiguration(path: socket, mode: 0o600, maxClients: maxClients)
        if let writeCoalescingUs { configuration.writeCoalescingNanoseconds = writeCoalescingUs * 1000 }
        let broker = try SocketBroker(configuration: configuration, logger: logger)
        try broker.start(handler: NoRequests())
        benchSay("READY")
        guard readLine() == "GO" else { broker.shutdown(); return }
        let total = Int(rate * seconds)
        let payloadBytes = self.payloadBytes
        // The broker's thread can't be told apart in /proc (threads inherit their creator's name), so
        // its CPU is the process's minus this publishing thread's (the other threads sleep).
        let started = SystemCall.monotonicNanoseconds()
        let process0 = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID), publisher0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID)
        Pacer(rate: rate, total: total).run { count in
            for _ in 0..<count {
                let json = FanoutPayload.json(stamp: SystemCall.monotonicNanoseconds(), totalBytes: payloadBytes, forBroker: true)
                broker.publish(BrokerEvent(topic: FanoutPayload.topic, json: json))
            }
        }
        let publishSeconds = Double(SystemCall.monotonicNanoseconds() - started) / 1e9
        let publisherCPU = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - publisher0
        benchSay("PUBLISHED")
        _ = readLine()   // the orchestrator says when the clients are done
        let brokerCPU = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process0 - publisherCPU
        let wall = Double(SystemCall.monotonicNanoseconds() - started) / 1e9
        let stats = broker.statistics
        broker.shutdown()
        BenchJSON.print(["published": total, "publish_seconds": publishSeconds, "delivered": stats.eventsDelivered,
                         "dropped": stats.eventsDropped, "clients": stats.clientsAccepted,
                         "broker_cpu_seconds": brokerCPU, "publisher_cpu_seconds": publisherCPU, "wall_seconds": wall])
    }
}

private struct NoRequests: BrokerHandler {
    func handle(_ request: SocketRequest, client: ClientInfo) async -> SocketReply { .error(.badArgument, "benchmark broker: no requests") }
    func clientDisconnected(_ id: ClientID) async {}
}

/// The subscribers, for either broker: connect and subscribe every client, print READY, receive,
/// print the JSON.
struct BenchFanoutClientsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fanout-clients", abstract: "Fan-out subscribers (line or MQTT).")

    @Option var socket: String
    @Option var wire: String = "line"
    @Option var clients = 100
    @Option(help: "Events expected per client.") var events: Int
    @Option var deadline = 60.0
    @Option(help: "The topic filter each client subscribes to.") var filter = FanoutPayload.filter

    func run() throws {
        guard let wire = FanoutReceiver.Wire(rawValue: wire) else { throw ValidationError("--wire line|mqtt") }
        let receiver = try FanoutReceiver(wire: wire, path: socket, count: clients, filter: filter)
        benchSay("READY")
        let started = SystemCall.monotonicNanoseconds()
        receiver.run(expected: events * clients, idleSeconds: 2, deadlineSeconds: deadline)
        let perClient = receiver.clients.map(\.received)
        let h = receiver.histogram
        BenchJSON.print([
            "received": receiver.total, "expected": events * clients, "min_per_client": perClient.min() ?? 0,
            "max_per_client": perClient.max() ?? 0, "unparsable": receiver.unparsable,
            "p50_us": h.percentileMicroseconds(0.5), "p99_us": h.percentileMicroseconds(0.99),
            "p999_us": h.percentileMicroseconds(0.999), "max_us": Double(h.maxNanoseconds) / 1000,
            "seconds": Double(SystemCall.monotonicNanoseconds() - started) / 1e9,
        ])
    }
}

/// Mosquitto's publisher: one MQTT connection publishing QoS 0 at the same pace and with the same
/// JSON as our in-process publisher; events due together go out in one write.
struct BenchMQTTPublisherCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mqtt-publish", abstract: "Paced MQTT QoS 0 publisher.")

    @Option var socket: String
    @Option var rate = 10_000.0
    @Option var seconds = 10.0
    @Option var payloadBytes = 256

    func run() throws {
        let fd = try BenchSocket.connect(path: socket)
        try BenchSocket.writeAll(fd, MQTTWire.connect(clientID: "bench-pub"))
        _ = try BenchSocket.readUntil(fd, seconds: 10) { $0.count >= 4 }
        benchSay("READY")
        guard readLine() == "GO" else { return }
        let total = Int(rate * seconds)
        let started = SystemCall.monotonicNanoseconds()
        try Pacer(rate: rate, total: total).run { count in
            var batch: [UInt8] = []
            for _ in 0..<count {
                let json = FanoutPayload.json(stamp: SystemCall.monotonicNanoseconds(), totalBytes: payloadBytes, forBroker: false)
                batch += MQTTWire.publish(topic: FanoutPayload.topic, payload: Array(json.utf8))
            }
            try BenchSocket.writeAll(fd, batch)
        }
        let publishSeconds = Double(SystemCall.monotonicNanoseconds() - started) / 1e9
        try BenchSocket.writeAll(fd, MQTTWire.disconnect)
        benchSay("PUBLISHED")
        _ = readLine()
        close(fd)
        BenchJSON.print(["published": total, "publish_seconds": publishSeconds])
    }
}

func cpuSeconds(_ clock: clockid_t) -> Double {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
