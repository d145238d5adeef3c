import Foundation
import SplitMix
import Testing
import TestSupport
@testable import NearbyProtocol

/// Issue 13, "Keyless radio denial of service": one controller sending random chunk-0 frames at
/// thousands of adverts a second evicted genuine partial messages, which were then found only after
/// tens of seconds. Unauthenticated bytes must not push authenticated work out of the partial table.
@Suite struct FrameFloodTests {
    @Test func randomChunkZeroFloodLeavesGenuineMessagesTheirSlots() throws {
        var r = FrameFixture.reassembler(limits: .init(maxPartials: 8))
        var random = SeededGenerator(seed: 13)
        let messages = (0..<6).map { Message(namespace: "m\($0)", type: "t", content: Array(repeating: UInt8($0), count: 50)) }
        let genuine = try messages.map {
            try FrameFixture.codec.bleAdverts(for: $0, epoch: FrameFixture.epoch).map(FrameFixture.manufacturerData)
        }
        var found = Set<Message>()
        // Each genuine message sends one chunk per round, as an advert rotation does; between two of its
        // chunks come 500 random chunk-0 frames (of 4 chunks, plausible lengths) from fresh addresses.
        for round in 0..<4 {
            for (m, frames) in genuine.enumerated() {
                if case .message(let message) = r.ingest(frames[round % frames.count], source: .ble(address: UInt64(m)),
                                                         now: FrameFixture.t0) {
                    found.insert(message)
                }
                for k in 0..<500 {
                    let garbage = [0xFF, 0xFF, FrameFormat.messageKind, 0x03] + random.bytes(6) + [3, 1] + random.bytes(17)
                    _ = r.ingest(garbage, source: .ble(address: 0x1000 + UInt64(k)), now: FrameFixture.t0)
                }
            }
        }
        #expect(found == Set(messages))
        #expect(r.counters.evicted == 0)
    }
}
