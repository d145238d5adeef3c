import Testing
@testable import Gateway

/// Issue 13: 100k socket toggles wrote 100,006 log lines in 3.3 s.
@Suite struct LogRateLimiterTests {
    let toggle = LogRateLimiter.Site(file: "Gateway/Manager/MessageManager.swift", line: 170)
    let refused = LogRateLimiter.Site(file: "Gateway/Socket/BrokerLoop.swift", line: 177)
    let second: UInt64 = 1_000_000_000

    @Test func aFloodFromOnePlaceIsCutToTheBurstAndCounted() {
        var limiter = LogRateLimiter()
        var written = 0
        var reported = 0
        // 100,000 lines in 3.3 s (the measured flood), every 33 µs.
        for i in 0..<100_000 {
            let decision = limiter.admit(toggle, message: "power \(i % 2 == 0 ? "standby" : "active")", now: UInt64(i) * 33_000)
            if decision.admitted { written += 1 }
            reported += decision.summaries.map(\.suppressed).reduce(0, +)
        }
        reported += limiter.flush().map(\.suppressed).reduce(0, +)
        #expect(written == 4 * LogRateLimiter.standardBurst, "four 1 s windows, 20 lines each")
        #expect(written + reported == 100_000, "every line is written or counted")
    }

    @Test func summariesComeOnceTheWindowIsOverWithTheFirstSuppressedLine() {
        var limiter = LogRateLimiter(burst: 2, windowNanoseconds: second)
        #expect(limiter.admit(refused, message: "a", now: 0) == .init(summaries: [], admitted: true))
        #expect(limiter.admit(refused, message: "b", now: 1).admitted)
        #expect(!limiter.admit(refused, message: "c", now: 2).admitted)
        #expect(!limiter.admit(refused, message: "d", now: 3).admitted)
        // Another place is not held back by this one, and the window is not over yet: no summary.
        #expect(limiter.admit(toggle, message: "x", now: 4) == .init(summaries: [], admitted: true))
        let later = limiter.admit(toggle, message: "y", now: second + 5)
        #expect(later.admitted)
        #expect(later.summaries == [.init(site: refused, suppressed: 2, example: "c")])
        #expect(later.summaries.first?.text == "2 similar lines suppressed (at most 20 a second from one place) like: c")
        // A new window for the flooded place starts fresh.
        #expect(limiter.admit(refused, message: "e", now: second + 6).admitted)
        #expect(limiter.flush().isEmpty)
    }
}
