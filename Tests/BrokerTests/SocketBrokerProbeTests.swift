import Synchronization
import Testing
@testable import Broker

/// The broker's side of the watchdog (issue 13; the watchdog itself is tested in GatewayTests'
/// WatchdogTests): its loop answers probes while it turns.
@Suite(.timeLimit(.minutes(5))) struct SocketBrokerProbeTests {

    @Test func theBrokerLoopAnswersProbesAndAStoppedOneWaitsUntilCancelled() async throws {
        let running = try SocketTestBroker.start()
        for _ in 0..<3 { await running.broker.probe() }   // the loop turns for each
        running.stop()
        // No loop: a probe is never answered, only ended by the watchdog's cancellation at shutdown.
        // `ended` is nil until the probe returns, then whether its task had been cancelled.
        let ended = Mutex<Bool?>(nil)
        let waiting = Task {
            await running.broker.probe()
            ended.withLock { $0 = Task.isCancelled }
        }
        // Parked or answered, whichever comes first (both are events; the suite's limit is the deadline).
        while running.broker.waitingProbes == 0 && ended.withLock({ $0 }) == nil { await Task.yield() }
        #expect(ended.withLock { $0 } == nil, "a stopped broker answered a probe")
        #expect(running.broker.waitingProbes == 1)
        waiting.cancel()
        await waiting.value
        #expect(ended.withLock { $0 } == true, "the probe returned without being cancelled")
        #expect(running.broker.waitingProbes == 0, "the cancelled probe stayed parked")
    }
}
