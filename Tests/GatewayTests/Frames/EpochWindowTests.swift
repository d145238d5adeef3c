import Foundation
import Testing
@testable import Gateway

/// Issue 13, "Replays": neighbour epochs are accepted only near a rotation, as the clock allows.
@Suite struct EpochWindowTests {
    let codec = FrameFixture.codec
    let epoch = FrameFixture.epoch

    func outcome(sentIn sent: UInt32, secondsInto: Double) throws -> FrameOutcome {
        var r = FrameFixture.reassembler()
        r.follow(clock: codec.start(of: epoch).addingTimeInterval(secondsInto))
        let frame = try codec.audioPayloads(for: Message(namespace: "tv", type: "on", content: []), epoch: sent)[0]
        return r.ingest(frame, source: .audio, now: FrameFixture.t0)
    }

    @Test func neighboursOnlyNearARotation() throws {
        let message = FrameOutcome.message(Message(namespace: "tv", type: "on", content: []))
        let rejected = FrameOutcome.dropped(.authenticationFailed)
        // rotate_s 600: skew 30 s.
        #expect(try outcome(sentIn: epoch, secondsInto: 300) == message)
        #expect(try outcome(sentIn: epoch - 1, secondsInto: 300) == rejected)
        #expect(try outcome(sentIn: epoch + 1, secondsInto: 300) == rejected)
        #expect(try outcome(sentIn: epoch - 1, secondsInto: 29) == message)
        #expect(try outcome(sentIn: epoch + 1, secondsInto: 29) == rejected)
        #expect(try outcome(sentIn: epoch + 1, secondsInto: 571) == message)
        #expect(try outcome(sentIn: epoch - 1, secondsInto: 571) == rejected)
        // A clock outside the current epoch (the owner has not rotated yet): both neighbours, as before.
        #expect(try outcome(sentIn: epoch + 1, secondsInto: 601) == message)
        #expect(try outcome(sentIn: epoch - 1, secondsInto: -1) == message)
    }

    @Test func aVerifiedMessageOfThePreviousEpochStopsBeingASightingWhenTheWindowCloses() throws {
        var r = FrameFixture.reassembler()
        let start = codec.start(of: epoch)
        let frame = try codec.audioPayloads(for: Message(namespace: "tv", type: "on", content: []), epoch: epoch - 1)[0]
        r.follow(clock: start.addingTimeInterval(5))
        #expect(r.ingest(frame, source: .audio, now: FrameFixture.t0) == .message(Message(namespace: "tv", type: "on", content: [])))
        r.follow(clock: start.addingTimeInterval(31))
        #expect(r.ingest(frame, source: .audio, now: FrameFixture.t0) == .dropped(.authenticationFailed))
        #expect(r.verifiedCount == 0)
    }
}
