import Foundation

/// SplitMix64: fault tests pick their random points from a seed they print, so a failure reproduces
/// with `NEARBY_FAULT_SEED=<seed>`.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    let seed: UInt64

    init(label: String) {
        let fixed = ProcessInfo.processInfo.environment["NEARBY_FAULT_SEED"].flatMap { UInt64($0) }
        seed = fixed ?? UInt64.random(in: 1...UInt64.max)
        state = seed
        print("\(label): seed \(seed) (rerun with NEARBY_FAULT_SEED=\(seed))")
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
