import ArgumentParser
import Config
import FoundationEssentials
import Glibc
import Logging
import SystemCall
import MQTT
import NearbyProtocol

/// Our side of the MQTT benchmark (tools/bench/mqtt.py): the gateway's real `MQTTBridge` (libmosquitto
/// on its own thread) connected to a broker, fed found events from this process as the message manager
/// feeds it. READY once connected; at GO publishes `events` found events as fast as `publish` takes
/// them (the queue holds them all: a throughput run, not a drop test), PUBLISHED, then at the next line
/// its JSON. Events go to `<prefix>/found/bench/t<n % topics>`, retained as the bridge retains found.
struct BenchMQTTBridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mqtt-bridge", abstract: "The MQTT bridge under load.")

    @Option(help: "The broker, as [mqtt].url takes it.") var url: String
    @Option var events = 20_000
    @Option var topics = 100
    @Option var prefix = "bench"
    @Option var qos = 0
    @Option var payloadBytes = 256

    func run() throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        guard case .success(let transport) = MQTTSettings.transport(parsing: url) else { throw ValidationError("--url: not a broker URL") }
        let settings = MQTTSettings(url: url, transport: transport, clientID: "bench-bridge", prefix: prefix, qos: qos,
                                    queue: events + 16, discovery: false)
        let bridge = try MQTTBridge(settings: settings, password: nil, subscriptions: [], model: "bench", logger: logger)
        try bridge.start()
        let deadline = SystemCall.monotonicNanoseconds() + 10_000_000_000
        while !bridge.statistics.connected {
            guard SystemCall.monotonicNanoseconds() < deadline else { bridge.shutdown(); Console.err("Error: no connection to \(url) within 10 s\n"); throw ExitCode.failure }
            usleep(10_000)   // a benchmark's start-up, not a test: polling the statistics is enough here
        }
        let published0 = bridge.statistics.published
        benchSay("READY")
        guard readLine() == "GO" else { bridge.shutdown(); return }
        let process0 = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID), publisher0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID)
        let started = SystemCall.monotonicNanoseconds()
        for n in 0..<events {
            let topic = "found/bench/t\(n % topics)"
            let json = FanoutPayload.json(stamp: SystemCall.monotonicNanoseconds(), totalBytes: payloadBytes, forBroker: true)
            bridge.publish(BrokerEvent(topic: topic, json: json, retain: .set(topic)))
        }
        let publishSeconds = Double(SystemCall.monotonicNanoseconds() - started) / 1e9
        let publisherCPU = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - publisher0
        benchSay("PUBLISHED")
        _ = readLine()   // the orchestrator says when the subscriber has them all
        let bridgeCPU = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process0 - publisherCPU
        let statistics = bridge.statistics
        bridge.shutdown()
        BenchJSON.print(["published": events, "handed_to_libmosquitto": statistics.published - published0,
                         "dropped": statistics.dropped, "connect_attempts": statistics.connectAttempts, "publish_seconds": publishSeconds,
                         "bridge_cpu_seconds": bridgeCPU, "publisher_cpu_seconds": publisherCPU])
    }
}
