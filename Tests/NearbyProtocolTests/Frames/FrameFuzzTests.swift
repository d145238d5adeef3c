import Foundation
import SplitMix
import Testing
import TestSupport
@testable import NearbyProtocol

@Suite struct FrameFuzzTests {
    /// Random bytes, valid chunks with mutated bytes, truncations and fresh ids: nothing but the original
    /// messages ever comes out, and memory (slots, cache) never passes its bounds.
    @Test func randomAndMutatedFramesKeepMemoryBounded() throws {
        var rng = SeededGenerator(seed: 42)  // deterministic, so a failure reproduces
        let limits = Reassembler.Limits(maxPartials: 32, timeout: .seconds(30), maxVerified: 16)
        var r = FrameFixture.reassembler(limits: limits)
        let originals = (0..<8).map { i in
            Message(namespace: "ns\(i)", type: "t", content: (0..<(i * 37)).map { UInt8(truncatingIfNeeded: $0) })
        }
        var valid: [[UInt8]] = []
        for message in originals {
            valid += try FrameFixture.codec.bleAdverts(for: message, epoch: FrameFixture.epoch).map(FrameFixture.manufacturerData)
        }
        var now = FrameFixture.t0
        var seen: [String: Int] = [:]
        for round in 0..<120_000 {
            var frame: [UInt8]
            switch round % 4 {
            case 0:   // garbage behind our prefix: exercises every length check and the slot table
                frame = [0xFF, 0xFF, UInt8.random(in: 0x43...0x54, using: &rng)]
                frame += (0..<Int.random(in: 0...28, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:   // a valid chunk with one to three bytes flipped
                frame = valid.randomElement(using: &rng)!
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    frame[Int.random(in: 0..<frame.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                }
            case 2:   // a valid chunk cut short, or untouched
                frame = valid.randomElement(using: &rng)!
                frame = Array(frame.prefix(Int.random(in: 0...frame.count, using: &rng)))
            default:  // anything at all
                frame = (0..<Int.random(in: 0...31, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            let outcome = r.ingest(frame, source: .ble(address: UInt64.random(in: 0...3, using: &rng)), now: now)
            if case .message(let message) = outcome {
                #expect(originals.contains(message))
            }
            switch outcome {
            case .message: seen["message", default: 0] += 1
            case .incomplete: seen["incomplete", default: 0] += 1
            default: break
            }
            #expect(r.partialCount <= limits.maxPartials)
            #expect(r.verifiedCount <= limits.maxVerified)
            now += .milliseconds(1)
        }
        // The run went through every path. Garbage and mutations never authenticate, so they never take
        // a slot: the genuine partial messages (7 multi-chunk × 4 sources) fit without evictions.
        #expect(r.counters.evicted == 0)
        #expect(seen["incomplete", default: 0] > 500)
        #expect(seen["message", default: 0] > 0)
        for reason in [DropReason.truncated, .malformedChunk, .chunkTooLong, .authenticationFailed] {
            #expect(r.counters.dropped[reason, default: 0] > 0, "\(reason)")
        }
    }
}
