@testable import NearbyProtocol
import SplitMix
import Testing

@Suite("Rotation schedule: every message on the air often (docs/protocol.md, Rotation)")
struct RotationScheduleTests {
    /// Unit u's chunk c is the frame [u, c]: distinct, so positions are easy to attribute.
    static func units(_ chunks: [Int]) -> [[[UInt8]]] {
        chunks.enumerated().map { u, n in (0..<n).map { [UInt8(u), UInt8($0)] } }
    }

    /// The longest run of frames between two frames of the same unit, the rotation repeating.
    static func maxCyclicGap(_ rotation: [[UInt8]], units: Int) -> Int {
        var worst = 0
        for u in 0..<units {
            let positions = rotation.indices.filter { rotation[$0][0] == UInt8(u) }
            guard let first = positions.first, let last = positions.last else { return .max }
            var gap = first + rotation.count - last
            for (a, b) in zip(positions, positions.dropFirst()) { gap = max(gap, b - a) }
            worst = max(worst, gap)
        }
        return worst
    }

    @Test func issueScenarioNineMaximumMessagesStayWithinTheGap() {
        let units = Self.units(Array(repeating: 16, count: 9))
        let rotation = RotationSchedule.rotation(units)
        // Before: plain blocks, each message absent for 128 of 144 frames (12.8 s at 100 ms).
        #expect(Self.maxCyclicGap(rotation, units: 9) <= RotationSchedule.maxGap(units: 9))
        // Every chunk is still sent, in order within its message, and the round grew by at most half.
        for (u, frames) in units.enumerated() {
            let own = rotation.filter { $0[0] == UInt8(u) }
            #expect(frames.allSatisfy(own.contains))
        }
        #expect(rotation.count <= 144 * 3 / 2 + 9)
    }

    @Test func shortRotationsAreThePlainBlocks() {
        let units = Self.units([1, 2, 1])
        #expect(RotationSchedule.rotation(units) == units.flatMap { $0 })
        #expect(RotationSchedule.rotation(Self.units([16])) == Self.units([16])[0])
        #expect(RotationSchedule.rotation([]) == [])
    }

    @Test func presenceFramesAreTheLastChunk() {
        let units = Self.units([16, 16])
        // Unit 1 appears inside unit 0's block only through its last chunk.
        let rotation = RotationSchedule.rotation(units)
        let firstOfUnit1 = rotation.firstIndex { $0 == [1, 0] }!
        #expect(rotation[..<firstOfUnit1].filter { $0[0] == 1 }.allSatisfy { $0 == [1, 15] })
        #expect(rotation[..<firstOfUnit1].contains([1, 15]))
    }

    @Test func randomMixesStayWithinTheGap() {
        var random = SeededGenerator(seed: 15)
        for _ in 0..<300 {
            let count = Int.random(in: 2...40, using: &random)
            let chunks = (0..<count).map { _ in random.chance(0.5) ? 16 : Int.random(in: 1...16, using: &random) }
            let rotation = RotationSchedule.rotation(Self.units(chunks))
            let total = chunks.reduce(0, +)
            #expect(rotation.count >= total)
            #expect(rotation.count <= total * 3 / 2 + count)
            #expect(Self.maxCyclicGap(rotation, units: count) <= RotationSchedule.maxGap(units: count),
                    "chunks \(chunks)")
        }
    }
}
