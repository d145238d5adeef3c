import Testing
@testable import Broker

/// The broker's side of the watchdog (issue 13; the watchdog itself is tested in GatewayTests'
/// WatchdogTests): its loop answers probes while it turns.
@Suite(.timeLimit(.minutes(5))) struct SocketBrokerProbeTests {

    @Test func theBrokerLoopAnswersProbesAndAStoppedOneWaitsUntilCancelled() async throws {
        let running = try SocketTestBroker.start()
        for _ in 0..<3 { await running.broker.probe() }   // the loop turns for each
        running.stop()
        let waiting = Task { await running.broker.probe() }   // no loop: never answered...
        waiting.cancel()                                        // ...until the watchdog is cancelled at shutdown
        await waiting.value
    }
}
