#if DEBUG || FUZZING
import Foundation
@testable import NearbyProtocol

/// Frames off the air (BLE manufacturer data, whole adverts) and out of the speaker (audio payloads).
enum FrameTargets {
    static let apiKey = "fuzz-api-key"
    static let epoch: UInt32 = 2_900_000
    static let codec = FrameCodec(apiKey: apiKey, rotateSeconds: 600)

    /// What the seeds carry. Only `authentic` may ever come out: the others are the same kind of
    /// message under another key or from epochs the receiver no longer accepts (replays), and the
    /// fuzzer's own variations carry tags it cannot compute.
    static let authentic: [(Message, UInt32)] = [
        (Message(namespace: "livingroom", type: "greeting", content: Array("hello".utf8)), epoch),
        (Message(namespace: "kitchen", type: "timer", content: (0..<90).map { UInt8($0) }), epoch),
        (Message(namespace: "hall", type: "light", content: []), epoch - 1),
        (Message(namespace: "porch", type: "bell", content: Array("ding dong".utf8)), epoch + 1),
    ]
    static let replayed: [(Message, UInt32)] = [
        (Message(namespace: "replay", type: "old", content: Array("from an earlier epoch".utf8)), epoch - 3),
        (Message(namespace: "replay", type: "older", content: Array("long gone".utf8)), epoch - 50),
    ]
    static let otherKey = FrameCodec(apiKey: "someone-else", rotateSeconds: 600)
    static let intruder = Message(namespace: "livingroom", type: "greeting", content: Array("forged".utf8))

    static let limits = Reassembler.Limits(maxPartials: 8, timeout: .seconds(30), maxVerified: 8)
    /// A value type: each input starts from a copy, without deriving the epoch keys again.
    static let fresh = Reassembler(codec: codec, epoch: epoch, limits: limits)

    /// Records of `control, length, bytes`. control: bits 0-1 the BLE source address, bit 2 audio,
    /// bit 3 a whole advert (AD walk) instead of the manufacturer data, bits 4-6 time step (× 4 s),
    /// bit 7 moves the receiver's epoch between `epoch` and `epoch + 1` (a rotation). The wall clock
    /// the receiver follows (which narrows the accepted epochs) walks with the time steps, starting
    /// 20 s before the epoch, so the window opens and closes as inputs go on.
    static func frames(_ input: FuzzInput) {
        var input = input
        var reassembler = fresh
        var now = ContinuousClock.now
        var elapsed = 0
        let allowed = authentic.map(\.0)
        while !input.isEmpty {
            let control = input.byte()
            let frame = Array(input.take(Int(input.byte())))
            let step = 4 * Int((control >> 4) & 0x7)
            now = now.advanced(by: .seconds(step))
            elapsed += step
            if control & 0x80 != 0 { reassembler.setEpoch(reassembler.epoch == epoch ? epoch + 1 : epoch) }
            reassembler.follow(clock: codec.start(of: epoch).addingTimeInterval(Double(elapsed % 1300 - 20)))
            let outcome: FrameOutcome
            if control & 0x04 != 0 {
                outcome = reassembler.ingest(frame, source: .audio, now: now)
            } else if control & 0x08 != 0 {
                outcome = frame.withUnsafeBufferPointer {
                    reassembler.ingest(advertisingData: $0, source: .ble(address: UInt64(control & 0x3)), now: now)
                }
            } else {
                outcome = reassembler.ingest(frame, source: .ble(address: UInt64(control & 0x3)), now: now)
            }
            if case .message(let message) = outcome {
                require(allowed.contains(message), "reported a message that is not authentic: \(message)")
            }
            require(reassembler.partialCount <= limits.maxPartials, "\(reassembler.partialCount) partial messages")
            require(reassembler.verifiedCount <= limits.maxVerified, "\(reassembler.verifiedCount) verified entries")
        }
        _ = reassembler.expire(now: now.advanced(by: .seconds(60)))
        require(reassembler.partialCount == 0, "partial messages outlived the timeout")
    }
}
#endif
