@testable import NearbyProtocol
import Testing
import TestSupport

/// Issue 15, item 1: the time to the first found of a maximum-size message with 16 others on the air,
/// counted in adverts (× interval_ms for seconds), for a receiver that starts listening at every
/// possible point of the rotation. Deterministic: the real codec, schedule and reassembler; the peer
/// is the old order (each message's block once per round, no presence frames). BENCHMARKS.md.
@Suite struct FirstFoundTests {
    static func firstFound(_ rotation: [[UInt8]], target: Message) -> (worst: Int, mean: Double) {
        var worst = 0, total = 0
        for start in rotation.indices {
            var r = FrameFixture.reassembler()
            var now = FrameFixture.t0
            var heard = 0
            while heard < 3 * rotation.count {
                let ad = rotation[(start + heard) % rotation.count]
                heard += 1
                now += .milliseconds(100)
                if r.ingest(FrameFixture.manufacturerData(ad), source: FrameFixture.peer, now: now) == .message(target) { break }
            }
            worst = max(worst, heard)
            total += heard
        }
        return (worst, Double(total) / Double(rotation.count))
    }

    @Test func maximumMessageWithSixteenOthersIsFoundWithinOneRotation() throws {
        let messages = (0..<17).map { k in
            Message(namespace: "den", type: "r\(k)", content: Array(repeating: UInt8(ascii: "a") + UInt8(k % 26), count: 296))
        }
        let units = try messages.map { try FrameFixture.codec.bleAdverts(for: $0, epoch: FrameFixture.epoch) }
        #expect(units.allSatisfy { $0.count == 16 })
        let target = messages[8]
        let scheduled = RotationSchedule.rotation(units)
        let blocks = units.flatMap { $0 }
        let ours = Self.firstFound(scheduled, target: target), peer = Self.firstFound(blocks, target: target)
        print("first found, adverts: rotation \(scheduled.count) worst \(ours.worst) mean \(ours.mean); "
              + "blocks only: rotation \(blocks.count) worst \(peer.worst) mean \(peer.mean)")
        // Found within one rotation plus one block wherever the receiver starts.
        #expect(ours.worst <= scheduled.count + 16 * 3 / 2 + 1)
        #expect(peer.worst <= blocks.count + 16)
    }
}
