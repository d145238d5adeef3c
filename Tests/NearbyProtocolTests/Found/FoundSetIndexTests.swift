import Foundation
import Testing
@testable import NearbyProtocol

/// The found set's position index (open addressing over positions, deletion by backward shift):
/// after every step of a seeded run of sightings, removals, evictions and expiries, every key finds
/// its own entry and only the keys in the set are found. Keys that hash to four values only make the
/// probes collide and wrap around.
@Suite struct FoundSetIndexTests {
    struct Crowded: Hashable, Sendable {
        let id: Int
        /// False: the key hashes to one of four values.
        let spread: Bool
        func hash(into hasher: inout Hasher) { hasher.combine(spread ? id : id % 4) }
    }

    @Test(arguments: [false, true])
    func everyKeyFindsItsEntryThroughoutARandomRun(crowded: Bool) {
        let t0 = ContinuousClock.now, d0 = Date(timeIntervalSince1970: 1_740_000_000)
        var set = FoundSet<Crowded, Int>(limit: 40)
        var live: [Int: Int] = [:]   // key → detail, the reference
        var seed: UInt64 = crowded ? 7 : 11
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        let keySpace = crowded ? 60 : 500
        for step in 0..<20_000 {
            let now = t0 + .milliseconds(step * 10)
            let id = next(keySpace)
            switch next(10) {
            case 0:
                if set.remove(Crowded(id: id, spread: !crowded)) != nil { live[id] = nil }
            case 1:
                for entry in set.expire(now: now) { live[entry.key.id] = nil }
            default:
                let lostAfter = Duration.milliseconds(100 * (1 + next(50)))
                switch set.record(Crowded(id: id, spread: !crowded), detail: step, rssi: nil, lostAfter: lostAfter, now: now, date: d0,
                                  protected: next(2) == 0) {
                case .added(_, let evicted):
                    if let evicted { live[evicted.key.id] = nil }
                    live[id] = step
                case .refreshed, .signalMoved:
                    live[id] = step
                case .refused:
                    break
                }
            }
            #expect(set.count == live.count, "step \(step)")
            if step % 97 == 0 || set.count < 5 {
                for k in 0..<keySpace {
                    #expect(set[Crowded(id: k, spread: !crowded)]?.detail == live[k], "step \(step), key \(k)")
                }
            }
        }
    }
}
