import Foundation
import Testing
@testable import NearbyProtocol

@Suite struct FoundTrackerTests {
    let t0 = ContinuousClock.now
    let d0 = Date(timeIntervalSince1970: 1_740_000_000)

    func at(_ seconds: Double) -> (ContinuousClock.Instant, Date) {
        (t0 + .milliseconds(Int(seconds * 1000)), d0.addingTimeInterval(seconds))
    }

    @Test func foundOnFirstSightingThenUpdated() {
        var tracker = FoundTracker<String>()
        let (i0, w0) = at(0), (i1, w1) = at(1)
        guard case .found(let first) = tracker.saw("a", rssi: -60, lostAfter: .seconds(10), now: i0, date: w0) else {
            Issue.record("not found"); return
        }
        #expect(first.firstSeen == w0 && first.lastSeen == w0 && first.rssi == -60 && first.smoothedRSSI == -60)
        guard case .updated(let second) = tracker.saw("a", rssi: -80, lostAfter: .seconds(10), now: i1, date: w1) else {
            Issue.record("not updated"); return
        }
        #expect(second.firstSeen == w0)
        #expect(second.lastSeen == w1)
        #expect(second.rssi == -80)
        // 1 s after the first with τ = 2 s: -60 + (1 - e^-0.5) · (-80 - -60)
        #expect(abs(second.smoothedRSSI! - (-60 - 20 * (1 - exp(-0.5)))) < 1e-9)
        #expect(second.sightings == 2)
    }

    @Test func missingRSSIKeepsTheAverage() {
        var tracker = FoundTracker<String>()
        tracker.saw("a", rssi: nil, lostAfter: .seconds(5), now: t0, date: d0)
        #expect(tracker["a"]?.smoothedRSSI == nil)
        tracker.saw("a", rssi: -50, lostAfter: .seconds(5), now: t0, date: d0)
        tracker.saw("a", rssi: nil, lostAfter: .seconds(5), now: t0, date: d0)
        #expect(tracker["a"]?.rssi == nil)
        #expect(tracker["a"]?.smoothedRSSI == -50)
    }

    @Test func lostExactlyAfterLostAfterWithoutSightings() {
        var tracker = FoundTracker<String>()
        tracker.saw("a", rssi: nil, lostAfter: .seconds(10), now: at(0).0, date: at(0).1)
        tracker.saw("b", rssi: nil, lostAfter: .seconds(3), now: at(1).0, date: at(1).1)
        #expect(tracker.nextDeadline() == at(4).0)
        #expect(tracker.expire(now: at(3.999).0).isEmpty)
        #expect(tracker.expire(now: at(4).0).map(\.key) == ["b"])
        #expect(tracker.nextDeadline() == at(10).0)
        tracker.saw("a", rssi: nil, lostAfter: .seconds(10), now: at(8).0, date: at(8).1)
        #expect(tracker.nextDeadline() == at(18).0)   // the sighting pushed it later; no early wake-up
        #expect(tracker.expire(now: at(17).0).isEmpty)
        let lost = tracker.expire(now: at(18.5).0)
        #expect(lost.map(\.key) == ["a"])
        #expect(lost.first?.lastSeen == at(8).1)
        #expect(tracker.nextDeadline() == nil)
        #expect(tracker.count == 0)
    }

    @Test func severalLostAtOnceComeOutInDeadlineOrder() {
        var tracker = FoundTracker<Int>()
        for k in [5, 1, 4, 2, 3] { tracker.saw(k, rssi: nil, lostAfter: .seconds(k), now: t0, date: d0) }
        #expect(tracker.expire(now: t0 + .seconds(10)).map(\.key) == [1, 2, 3, 4, 5])
    }

    @Test func aShorterLostAfterMovesTheDeadlineEarlier() {
        var tracker = FoundTracker<String>()
        tracker.saw("a", rssi: nil, lostAfter: .seconds(60), now: t0, date: d0)
        tracker.saw("a", rssi: nil, lostAfter: .seconds(2), now: t0 + .seconds(1), date: d0)
        #expect(tracker.nextDeadline() == t0 + .seconds(3))
        #expect(tracker.expire(now: t0 + .seconds(3)).map(\.key) == ["a"])
        #expect(tracker.nextDeadline() == nil)
    }

    @Test func removedEntriesAreNeverLost() {
        var tracker = FoundTracker<String>()
        tracker.saw("a", rssi: nil, lostAfter: .seconds(1), now: t0, date: d0)
        #expect(tracker.remove("a") != nil)
        #expect(tracker.nextDeadline() == nil)
        #expect(tracker.expire(now: t0 + .seconds(5)).isEmpty)
        // Found again after removal: one lost, at the new deadline.
        tracker.saw("a", rssi: nil, lostAfter: .seconds(1), now: t0 + .seconds(10), date: d0)
        tracker.remove("a")
        tracker.saw("a", rssi: nil, lostAfter: .seconds(1), now: t0 + .seconds(20), date: d0)
        #expect(tracker.nextDeadline() == t0 + .seconds(21))
        #expect(tracker.expire(now: t0 + .seconds(30)).count == 1)
    }

    @Test func manyEntriesSeenOftenExpireCorrectly() {
        var tracker = FoundTracker<Int>()
        // 100 keys, key k seen every second until second k, lostAfter 5 s: k is lost at k + 5.
        for second in 0...100 {
            for k in second..<100 { tracker.saw(k, rssi: -k, lostAfter: .seconds(5), now: t0 + .seconds(second), date: d0) }
            let lost = tracker.expire(now: t0 + .seconds(second))
            #expect(lost.map(\.key) == (second >= 5 ? [second - 5] : []), "second \(second)")
        }
    }
}
