import Foundation
import Testing
@testable import NearbyProtocol

/// Issue 29 item 1: the RSSI filter's lag as the step response to a 10 dB change, for the filter we
/// use and the ones peers use, at a gateway's advert rate (10/s) and a beacon's (1/s). These are the
/// numbers of docs/behaviour.md ("Signal strength and distance").
@Suite struct RSSIFilterTests {
    /// Seconds from a 10 dB step until the filtered value is within `within` dB of the new level.
    static func settle(rate: Double, within: Double, filter: (inout [Double], Double, Double) -> Double) -> Double {
        var history: [Double] = [], value = -60.0
        for _ in 0..<100 { value = filter(&history, -60, 1 / rate) }   // settled before the step
        var t = 0.0
        while t < 60 {
            t += 1 / rate
            value = filter(&history, -70, 1 / rate)
            if abs(value - -70) <= within { return t }
        }
        return .infinity
    }

    /// Ours: the found set itself, fed with sightings `dt` apart.
    static func ours(rate: Double, within: Double) -> Double {
        var set = FoundTracker<Int>()
        let start = ContinuousClock.now, date = Date(timeIntervalSince1970: 0)
        var n = 0
        return settle(rate: rate, within: within) { _, rssi, dt in
            n += 1
            set.saw(1, rssi: Int(rssi), lostAfter: .seconds(3600), now: start + .milliseconds(Int((Double(n) * dt * 1000).rounded())), date: date)
            return set[1]!.smoothedRSSI!
        }
    }

    static func perSampleEWMA(_ alpha: Double) -> (inout [Double], Double, Double) -> Double {
        { history, rssi, _ in
            let last = history.last ?? rssi
            history = [last + alpha * (rssi - last)]
            return history[0]
        }
    }

    static func median(of n: Int) -> (inout [Double], Double, Double) -> Double {
        { history, rssi, _ in
            history.append(rssi)
            if history.count > n { history.removeFirst() }
            let sorted = history.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
    }

    @Test func oursSettlesInTheSameTimeWhateverTheRate() {
        // τ = 2 s: within 3 dB after τ·ln(10/3) = 2.41 s, within 1 dB after τ·ln 10 = 4.61 s,
        // plus up to one sighting interval.
        for rate in [10.0, 1.0] {
            let three = Self.ours(rate: rate, within: 3), one = Self.ours(rate: rate, within: 1)
            #expect(three >= 2.4 && three <= 2.41 + 1 / rate + 1e-9, "\(rate)/s: \(three) s to 3 dB")
            #expect(one >= 4.6 && one <= 4.61 + 1 / rate + 1e-9, "\(rate)/s: \(one) s to 1 dB")
        }
    }

    @Test func peersFiltersLagInSightingsNotSeconds() {
        // The EWMA FoundSet had (α = 0.25 per sighting): 9 sightings to 1 dB, i.e. 0.9 s or 9 s.
        #expect(abs(Self.settle(rate: 10, within: 1, filter: Self.perSampleEWMA(0.25)) - 0.9) < 1e-9)
        #expect(abs(Self.settle(rate: 1, within: 1, filter: Self.perSampleEWMA(0.25)) - 9) < 1e-9)
        // ESPresense's median of 10: the step shows once 6 of 10 samples are new (half-way at 5).
        #expect(abs(Self.settle(rate: 1, within: 1, filter: Self.median(of: 10)) - 6) < 1e-9)
        #expect(abs(Self.settle(rate: 10, within: 1, filter: Self.median(of: 10)) - 0.6) < 1e-9)
    }

    @Test func aTwentyDecibelStepIsReportedWithinASecondAndAHalf() {
        var set = FoundTracker<Int>()
        let start = ContinuousClock.now, date = Date(timeIntervalSince1970: 0)
        set.saw(1, rssi: -50, lostAfter: .seconds(60), now: start, date: date)
        var reports: [(Double, Double)] = []
        for i in 1...100 {   // 10 s of sightings at 10/s, the step at 2 s
            let now = start + .milliseconds(100 * i)
            let rssi = i <= 20 ? -50 : -70
            if case .signalMoved(let entry) = set.record(1, detail: NoDetail(), rssi: rssi, lostAfter: .seconds(60), now: now, date: date) {
                reports.append((Double(i) / 10, entry.reportedRSSI!))
            }
        }
        #expect(reports.first.map { $0.0 > 2 && $0.0 <= 3.5 } == true, "\(reports)")
        // Rate-limited: never two within a second, and it stops once the value settles.
        for (a, b) in zip(reports, reports.dropFirst()) { #expect(b.0 - a.0 >= 1 - 1e-9, "\(reports)") }
        #expect(reports.count >= 3 && reports.count <= 6, "\(reports)")
        #expect(reports.last!.1 < -65, "the reports stopped short of the new level: \(reports)")
    }

    @Test func noSignalWithoutRSSIOrBelowTheThreshold() {
        var set = FoundTracker<Int>()
        let start = ContinuousClock.now, date = Date(timeIntervalSince1970: 0)
        for i in 0..<50 {
            let now = start + .milliseconds(200 * i)
            let nilAdmission = set.record(1, detail: NoDetail(), rssi: nil, lostAfter: .seconds(60), now: now, date: date)
            let steady = set.record(2, detail: NoDetail(), rssi: -60 + (i % 2 == 0 ? 2 : -2), lostAfter: .seconds(60), now: now, date: date)
            if case .signalMoved = nilAdmission { Issue.record("signal without RSSI") }
            if case .signalMoved = steady { Issue.record("signal for ±2 dB noise") }
        }
    }

    @Test func distanceFollowsTheLogDistanceModel() {
        let model = DistanceModel(ownPowerAt1m: -59, exponent: 2.5)
        #expect(abs(model.metres(rssi: -59, powerAt1m: -59) - 1) < 1e-9)
        #expect(abs(model.metres(rssi: -84, powerAt1m: -59) - 10) < 1e-9)   // 25 dB = 10^(25/25)
        #expect(abs(DistanceModel(exponent: 2).metres(rssi: -79, powerAt1m: -59) - 10) < 1e-9)
    }
}
