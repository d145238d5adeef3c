import Glibc
import Radio

/// Times each stage of the advert pipeline over the whole corpus on one thread: best of
/// `repetitions` passes (the machine is shared and noisy; the best pass is the least disturbed one),
/// and, when the allocation counter is preloaded, allocator calls per report from one extra pass.
struct PipelineBench {
    struct Stage {
        var name: String
        var reports: Int
        var bestSeconds: Double
        var allocationsPerReport: Double?
        var checksum: Int

        var json: [String: Any] {
            var j: [String: Any] = ["name": name, "reports": reports, "seconds": bestSeconds,
                                    "reports_per_s": bestSeconds > 0 ? Double(reports) / bestSeconds : 0, "checksum": checksum]
            if let allocationsPerReport { j["allocs_per_report"] = allocationsPerReport }
            return j
        }
    }

    let corpus: AdvertCorpus
    /// Timed passes; 0 = only count allocations (a run under the counting allocator is slower).
    let repetitions: Int
    /// The AD bytes of every report of an event that parses: exactly what the Python peer gets.
    let payloads: [[UInt8]]

    /// Stage names to run (nil = all): a profile of one stage (`valgrind --tool=callgrind`) needs only that one.
    let only: Set<String>?

    init(corpus: AdvertCorpus, repetitions: Int, only: Set<String>? = nil) {
        self.corpus = corpus
        self.only = only
        self.repetitions = max(0, repetitions)
        var payloads: [[UInt8]] = []
        payloads.reserveCapacity(corpus.reportCount)
        for packet in corpus.events {
            guard case .advertisingReports(let reports)? = HCIEvent.parse(packet) else { continue }
            for report in reports { payloads.append(Array(report.data)) }
        }
        self.payloads = payloads
    }

    func run() -> (stages: [Stage], outcomes: AdvertPipeline.Outcomes) {
        let events = corpus.events, payloads = payloads
        var stages: [Stage] = []
        stages.appendIfPresent(measure("hci_parse", reports: payloads.count) {
            var sum = 0
            for packet in events {
                guard case .advertisingReports(let reports)? = HCIEvent.parse(packet) else { continue }
                for report in reports { sum &+= report.data.count &+ Int(report.rssi ?? 0) &+ Int(report.address.rawValue & 0xFF) }
            }
            return sum
        })
        stages.appendIfPresent(measure("ad_walk", reports: payloads.count) {
            var sum = 0
            for payload in payloads {
                for element in ADStructures(payload[...]) { sum &+= Int(element.type) &+ element.data.count }
            }
            return sum
        })
        stages.appendIfPresent(measure("ad_values", reports: payloads.count) {
            var sum = 0
            for payload in payloads {
                let (structures, malformed) = ADStructure.parse(payload)
                sum &+= structures.count &+ (malformed ? 1 : 0)
            }
            return sum
        })
        var outcomes = AdvertPipeline.Outcomes()
        stages.appendIfPresent(measure("pipeline", reports: corpus.reportCount) {
            var pipeline = AdvertPipeline(start: ContinuousClock.now)
            pipeline.run(events)
            outcomes = pipeline.outcomes
            return pipeline.outcomes.found
        })
        return (stages, outcomes)
    }

    private func measure(_ name: String, reports: Int, _ body: () -> Int) -> Stage? {
        if let only, !only.contains(name) { return nil }
        let clock = ContinuousClock()
        var best = repetitions == 0 ? 0 : Double.infinity, checksum = 0
        for _ in 0..<repetitions {
            let start = clock.now
            checksum = body()
            best = min(best, (clock.now - start).seconds)
            benchConsume(checksum)
        }
        var allocations: Double?
        if let counter = MallocCounter() {
            let calls = counter.calls { benchConsume(body()) }
            allocations = Double(calls) / Double(reports)
        }
        return Stage(name: name, reports: reports, bestSeconds: best, allocationsPerReport: allocations, checksum: checksum)
    }
}

extension Array {
    fileprivate mutating func appendIfPresent(_ element: Element?) {
        if let element { append(element) }
    }
}
