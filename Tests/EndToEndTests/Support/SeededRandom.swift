import Foundation
import SplitMix

/// Fault tests pick their random points from a seed they print, so a failure reproduces with
/// `NEARBY_FAULT_SEED=<seed>`.
struct SeededRandom: RandomNumberGenerator {
    let seed: UInt64
    private var generator: SeededGenerator

    init(label: String) {
        let fixed = ProcessInfo.processInfo.environment["NEARBY_FAULT_SEED"].flatMap { UInt64($0) }
        seed = fixed ?? UInt64.random(in: 1...UInt64.max)
        generator = SeededGenerator(seed: seed)
        print("\(label): seed \(seed) (rerun with NEARBY_FAULT_SEED=\(seed))")
    }

    mutating func next() -> UInt64 { generator.next() }
}
