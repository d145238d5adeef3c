/// systemd's watchdog (`WATCHDOG=1` every half `WatchdogSec`), fed only while the parts that serve
/// answer: each round awaits every probe — the manager actor, the broker's loop thread — before it
/// pings, so a stuck part stops the pings and systemd restarts the gateway instead of trusting a
/// timer that would tick on regardless.
struct Watchdog: Sendable {
    let interval: Duration
    let probes: [@Sendable () async -> Void]
    let ping: @Sendable () -> Void

    func run() async {
        while !Task.isCancelled {
            for probe in probes { await probe() }
            guard !Task.isCancelled else { return }
            ping()
            try? await Task.sleep(for: interval)   // cancelled at shutdown: the loop ends
        }
    }
}
