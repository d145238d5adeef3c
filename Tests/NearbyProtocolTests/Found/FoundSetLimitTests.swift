import Foundation
import Testing
@testable import NearbyProtocol

/// The found set's bound: unprotected entries (beacons, which anyone can forge) make room first, least
/// recently seen first; a protected entry (an authenticated message) is never evicted for one.
@Suite struct FoundSetLimitTests {
    let t0 = ContinuousClock.now
    let d0 = Date(timeIntervalSince1970: 1_740_000_000)

    private func saw(_ set: inout FoundTracker<String>, _ key: String, at second: Int, protected: Bool) -> FoundTracker<String>.Admission {
        set.record(key, detail: NoDetail(), rssi: nil, lostAfter: .seconds(600), now: t0 + .seconds(second), date: d0, protected: protected)
    }

    @Test func aFullSetEvictsTheLeastRecentlySeenBeacon() {
        var set = FoundTracker<String>(limit: 3)
        _ = saw(&set, "b1", at: 0, protected: false)
        _ = saw(&set, "b2", at: 1, protected: false)
        _ = saw(&set, "m1", at: 2, protected: true)
        _ = saw(&set, "b1", at: 3, protected: false)          // b1 refreshed: b2 is now the oldest beacon
        guard case .added(_, let evicted) = saw(&set, "b3", at: 4, protected: false) else {
            Issue.record("b3 not added"); return
        }
        #expect(evicted?.key == "b2")
        #expect(Set(set.keys) == ["b1", "m1", "b3"])
        #expect(set.evicted == 1 && set.refused == 0)
    }

    @Test func aMessageTakesABeaconsPlaceNeverTheOtherWayRound() {
        var set = FoundTracker<String>(limit: 2)
        _ = saw(&set, "m1", at: 0, protected: true)
        _ = saw(&set, "b1", at: 1, protected: false)
        guard case .added(_, let evicted) = saw(&set, "m2", at: 2, protected: true) else { Issue.record("m2 not added"); return }
        #expect(evicted?.key == "b1")
        // Only messages left: a beacon is refused, the messages stay.
        guard case .refused = saw(&set, "b2", at: 3, protected: false) else { Issue.record("b2 not refused"); return }
        #expect(Set(set.keys) == ["m1", "m2"])
        #expect(set.refused == 1)
        // A third message takes the least recently seen message's place.
        guard case .added(_, let evictedMessage) = saw(&set, "m3", at: 4, protected: true) else { Issue.record("m3 not added"); return }
        #expect(evictedMessage?.key == "m1")
    }

    @Test func aFloodOfDistinctBeaconsKeepsTheSetAndItsHeapsBounded() {
        var set = FoundTracker<String>(limit: 64)
        _ = saw(&set, "message", at: 0, protected: true)
        for k in 0..<100_000 {
            _ = saw(&set, "beacon-\(k)", at: 1, protected: false)
            if k % 1000 == 0 { _ = saw(&set, "message", at: 1, protected: true) }
        }
        #expect(set.count == 64)
        #expect(set["message"] != nil)
        #expect(set.evicted == 100_000 - 63)
        #expect(set.pendingDeadlines <= 2 * 64 + 64 + 1, "evicted entries' deadlines pile up: \(set.pendingDeadlines)")
        // Lost entries leave nothing behind either: everything expires, then a new flood fits again.
        #expect(set.expire(now: t0 + .seconds(1000)).count == 64)
        #expect(set.count == 0)
    }
}
