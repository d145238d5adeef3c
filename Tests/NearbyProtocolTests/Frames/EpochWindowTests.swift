import Foundation
import Testing
import TestSupport
@testable import NearbyProtocol

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
        // What stays is the same message as the current epoch's frame (what its sender sends once it rotates).
        #expect(r.verifiedCount == 1)
    }

    // MARK: Senders whose clock is off (the presence frames around a rotation)

    /// A message big enough for several BLE chunks: one chunk can't complete it.
    static let big = Message(namespace: "den", type: "r4", content: Array(repeating: 0x65, count: 120))

    func chunks(_ message: Message = big, epoch: UInt32) throws -> [[UInt8]] {
        try codec.bleAdverts(for: message, epoch: epoch).map(FrameFixture.manufacturerData)
    }

    func authenticate(_ message: Message = big, epoch: UInt32, in r: inout Reassembler,
                      now: ContinuousClock.Instant = FrameFixture.t0) throws {
        let c = try chunks(message, epoch: epoch)
        #expect(c.count > 2)
        for chunk in c.dropLast() { _ = r.ingest(chunk, source: FrameFixture.peer, now: now) }
        #expect(r.ingest(c[c.count - 1], source: FrameFixture.peer, now: now) == .message(message))
    }

    /// A sender whose clock is ahead of ours (by less than the skew) sends the next epoch's frames before
    /// our rotation: its first presence frame under the new key must refresh the message we authenticated,
    /// not wait up to a round for the whole block (a short lost_after_s reported it lost).
    @Test func aSenderAheadIsSightedByOneChunkOfTheNextEpochBeforeOurRotation() throws {
        var r = FrameFixture.reassembler()
        let start = codec.start(of: epoch), t0 = FrameFixture.t0, peer = FrameFixture.peer
        r.follow(clock: start.addingTimeInterval(300))
        try authenticate(epoch: epoch, in: &r)
        r.follow(clock: start.addingTimeInterval(600 - 10))
        let ahead = try chunks(epoch: epoch + 1), now = try chunks(epoch: epoch)
        #expect(r.ingest(ahead[ahead.count - 1], source: peer, now: t0) == .message(Self.big))
        #expect(r.ingest(ahead[0], source: peer, now: t0) == .message(Self.big))
        // Senders in step with us still send this epoch's frames.
        #expect(r.ingest(now[now.count - 1], source: peer, now: t0) == .message(Self.big))
        // Our rotation: the sender ahead still sighted, and one in step with us until it rotates too.
        r.setEpoch(epoch + 1)
        r.follow(clock: start.addingTimeInterval(600 + 5))
        #expect(r.ingest(ahead[1], source: peer, now: t0) == .message(Self.big))
        #expect(r.ingest(now[1], source: peer, now: t0) == .message(Self.big))
        #expect(r.partialCount == 0)
        #expect(r.counters.incomplete == now.count - 1)   // only the first authentication's chunks
    }

    /// The mirror case: a sender whose clock is behind ours, first heard after our rotation under its
    /// (our previous) epoch, is sighted by its first chunk once it rotates too.
    @Test func aSenderBehindFirstHeardAfterOurRotationIsSightedByOneChunkOnceItRotates() throws {
        var r = FrameFixture.reassembler(epoch: epoch + 1)
        r.follow(clock: codec.start(of: epoch + 1).addingTimeInterval(5))
        try authenticate(epoch: epoch, in: &r)
        let rotated = try chunks(epoch: epoch + 1)
        #expect(r.ingest(rotated[rotated.count - 1], source: FrameFixture.peer, now: FrameFixture.t0) == .message(Self.big))
        #expect(r.partialCount == 0)
    }

    /// Copies ahead of our rotation are speculative: they only take free room, most recently seen
    /// message first, and never push out the frames senders in step with us send now.
    @Test func copiesAheadOfOurRotationOnlyTakeFreeRoom() throws {
        var r = FrameFixture.reassembler(limits: .init(maxVerified: 3))
        let start = codec.start(of: epoch), t0 = FrameFixture.t0, peer = FrameFixture.peer
        let older = Message(namespace: "den", type: "r5", content: Array(repeating: 0x66, count: 120))
        r.follow(clock: start.addingTimeInterval(300))
        try authenticate(older, epoch: epoch, in: &r, now: t0)
        try authenticate(epoch: epoch, in: &r, now: t0 + .seconds(1))
        r.follow(clock: start.addingTimeInterval(600 - 10))
        #expect(r.verifiedCount == 3)
        let ahead = try chunks(epoch: epoch + 1), olderAhead = try chunks(older, epoch: epoch + 1)
        #expect(r.ingest(ahead[ahead.count - 1], source: peer, now: t0) == .message(Self.big))
        #expect(r.ingest(olderAhead[olderAhead.count - 1], source: peer, now: t0) == .incomplete)
        for message in [older, Self.big] {
            let now = try chunks(message, epoch: epoch)
            #expect(r.ingest(now[now.count - 1], source: peer, now: t0) == .message(message))
        }
    }
}
