import Foundation
@testable import NearbyProtocol
import Testing
@testable import Gateway

@Suite struct RotationDeadlineTests {
    let codec = FrameCodec(apiKey: "rotation-deadline", rotateSeconds: 60)

    @Test func theNextRotationIsTheStartOfTheNextEpoch() {
        #expect(MessageManager.nextRotation(after: 0, codec: codec) == Date(timeIntervalSince1970: 60))
        #expect(MessageManager.nextRotation(after: 29_000_000, codec: codec) == Date(timeIntervalSince1970: 29_000_001 * 60))
        #expect(MessageManager.nextRotation(after: UInt32.max - 1, codec: codec) == codec.start(of: UInt32.max))
    }

    /// Issue 13: `epoch + 1` trapped at UInt32.max; epochs wrap like every other counter, and the
    /// last one has no later rotation to wait for (epoch(at:) clamps there).
    @Test func theLastEpochHasNoNextRotationAndDoesNotTrap() {
        #expect(MessageManager.nextRotation(after: UInt32.max, codec: codec) == nil)
    }
}
