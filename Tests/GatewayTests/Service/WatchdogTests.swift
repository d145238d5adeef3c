import Synchronization
import Testing
@testable import Gateway

/// Issue 13: the watchdog pinged from a bare timer loop, so a stuck manager or broker still looked
/// alive to systemd. Now every ping waits for every probe.
@Suite(.timeLimit(.minutes(5))) struct WatchdogTests {
    /// A probe that does not answer until opened, and says when it has been asked.
    final class StuckProbe: Sendable {
        private let state = Mutex<(open: Bool, asked: Int, waiters: [CheckedContinuation<Void, Never>])>((false, 0, []))
        let (asked, asking) = AsyncStream<Void>.makeStream()

        func answer() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    state.asked += 1
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                asking.yield()
                if now { continuation.resume() }
            }
        }

        func open() {
            state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }.forEach { $0.resume() }
        }
    }

    @Test func noPingWhileAProbeIsStuckAndPingsOnceItAnswers() async {
        let stuck = StuckProbe()
        let pings = Mutex(0)
        let (pinged, pinging) = AsyncStream<Int>.makeStream()
        let healthy = Mutex(0)
        let watchdog = Watchdog(interval: .milliseconds(1),
                                probes: [{ healthy.withLock { $0 += 1 } }, { await stuck.answer() }],
                                ping: { pinging.yield(pings.withLock { $0 += 1; return $0 }) })
        let running = Task { await watchdog.run() }
        // The stuck probe has been asked: the healthy one answered first, and no ping can have gone out.
        var asked = stuck.asked.makeAsyncIterator()
        _ = await asked.next()
        #expect(healthy.withLock { $0 } == 1)
        #expect(pings.withLock { $0 } == 0, "pinged while a part was stuck")
        stuck.open()
        var next = pinged.makeAsyncIterator()
        #expect(await next.next() == 1)
        #expect(await next.next() == 2, "keeps pinging while every part answers")
        running.cancel()
        await running.value
    }
}
