import ArgumentParser
import Config
import FoundationEssentials
import Gateway
import Glibc
import NearbyProtocol
import Radio
import SplitMix

/// `bench identity`: what a flood of distinct resolvable private addresses costs the gateway's own
/// `AirIngest` with `identities` configured (docs/identities.md): CPU per new address (one AES per
/// identity, none resolving: the worst case), per repeated address (a cache hit), and a paced flood
/// at `rate` addresses/s for `seconds`, with the process's CPU share and peak RSS before and after.
struct BenchIdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity", abstract: "Time RPA resolution with many identities under a flood of new addresses.")

    @Option(help: "Identities configured.") var identities = 32
    @Option(help: "Distinct addresses per timed pass.") var addresses = 100_000
    @Option(help: "Timed passes; the best counts.") var repetitions = 3
    @Option(help: "New addresses per second in the paced flood.") var rate = 10_000
    @Option(help: "Seconds of paced flood.") var seconds = 10

    struct Sink: AirIngestSink {
        var found = 0
        mutating func found(_ found: AirIngest.Found) { self.found += 1 }
        mutating func subscriberBeacon(_ id: SubscriberBeaconID) {}
    }

    func run() throws {
        var random = SeededGenerator(seed: 40)
        let configs = (0..<identities).map { IdentityConfig(name: "person-\($0)", key: IdentityKey(mostSignificantFirst: random.bytes(16))!) }
        let subscription = SubscriptionConfig(namespace: "people", type: "*", mediums: [.ble], include: [.identity])
        let codec = FrameCodec(apiKey: "bench-identity-key", rotateSeconds: 600)
        func fresh() throws -> AirIngest {
            AirIngest(codec: codec, epoch: 1, subscriptions: [subscription], identities: try Identities(configs))
        }
        // A phone's advert: flags and Apple's manufacturer data (nothing of ours, no beacon).
        let ad: [UInt8] = [0x02, 0x01, 0x1A, 0x05, 0xFF, 0x4C, 0x00, 0x10, 0x01]
        func rpa() -> BDAddress { BDAddress(rawValue: random.next() & 0x3FFF_FFFF_FFFF | 0x4000_0000_0000) }
        let pool = (0..<addresses).map { _ in rpa() }
        let date = Date(timeIntervalSince1970: 1_790_000_000)
        let rssBefore = Self.peakRSSKiB()

        var bestNew = Double.infinity, bestHit = Double.infinity
        var last = try fresh()
        for _ in 0..<repetitions {
            var ingest = try fresh(), sink = Sink()
            let now = ContinuousClock.now
            let start = Self.cpuSeconds()
            for address in pool {
                ingest.ingest(Sighting(address: address, addressType: .random, rssi: -70, data: ad[...], time: now), now: now, date: date, into: &sink)
            }
            bestNew = min(bestNew, (Self.cpuSeconds() - start) / Double(pool.count))
            // The cache keeps the newest addresses: each of these is a hit.
            let recent = pool.suffix(min(pool.count, IdentityResolver.defaultCapacity))
            let hitStart = Self.cpuSeconds()
            for _ in 0..<10 {
                for address in recent {
                    ingest.ingest(Sighting(address: address, addressType: .random, rssi: -70, data: ad[...], time: now), now: now, date: date, into: &sink)
                }
            }
            bestHit = min(bestHit, (Self.cpuSeconds() - hitStart) / Double(recent.count * 10))
            last = ingest
        }
        let counters = last.identityCounters ?? IdentityResolver.Counters()
        let rssAfterPasses = Self.peakRSSKiB()

        // The paced flood: a batch every 10 ms on CLOCK_MONOTONIC, each address new.
        var ingest = try fresh(), sink = Sink()
        let perTick = max(1, rate / 100)
        var tick = timespec()
        clock_gettime(CLOCK_MONOTONIC, &tick)
        let wallStart = ContinuousClock.now, cpuStart = Self.cpuSeconds()
        var sent = 0
        for _ in 0..<(seconds * 100) {
            let now = ContinuousClock.now
            for _ in 0..<perTick {
                ingest.ingest(Sighting(address: rpa(), addressType: .random, rssi: -70, data: ad[...], time: now), now: now, date: date, into: &sink)
            }
            sent += perTick
            tick.tv_nsec += 10_000_000
            if tick.tv_nsec >= 1_000_000_000 { tick.tv_nsec -= 1_000_000_000; tick.tv_sec += 1 }
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, nil) == EINTR {}
        }
        let wall = (ContinuousClock.now - wallStart).seconds, cpu = Self.cpuSeconds() - cpuStart
        BenchJSON.print([
            "identities": identities, "addresses": addresses, "repetitions": repetitions,
            "ns_per_new_address": bestNew * 1e9, "ns_per_cached_address": bestHit * 1e9,
            "aes_per_new_address": Double(counters.resolutions) / Double(max(1, counters.cacheMisses)),
            "cache_entries": last.identityCacheEntries, "cache_capacity": IdentityResolver.defaultCapacity,
            "flood": ["rate_target": rate, "sent": sent, "seconds": wall, "rate": Double(sent) / wall, "cpu_share": cpu / wall,
                      "cache_entries": ingest.identityCacheEntries, "found": sink.found] as [String: Any],
            "peak_rss_kib": ["before": rssBefore, "after_passes": rssAfterPasses, "after_flood": Self.peakRSSKiB()],
        ])
    }

    static func cpuSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }
}
