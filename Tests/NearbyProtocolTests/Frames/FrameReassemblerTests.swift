import Foundation
import Testing
import TestSupport
@testable import NearbyProtocol

@Suite struct FrameReassemblerTests {
    let codec = FrameFixture.codec
    let epoch = FrameFixture.epoch
    let t0 = FrameFixture.t0
    let peer = FrameFixture.peer

    func chunks(_ message: Message = FrameFixture.greeting, epoch: UInt32? = nil, codec: FrameCodec? = nil) throws -> [[UInt8]] {
        try (codec ?? self.codec).bleAdverts(for: message, epoch: epoch ?? self.epoch).map(FrameFixture.manufacturerData)
    }

    /// A BLE chunk (manufacturer data) with a valid tag under the fixture's key around any plaintext:
    /// what only a holder of the api_key can make, to reach the checks after authentication.
    func keyed(_ plaintext: [UInt8], sequence: UInt8, id: UInt32 = 0x0102_0304, offset: Int = 0) -> [UInt8] {
        let key = EpochKey(apiKey: codec.apiKeyMaterial, epoch: epoch)
        var data = plaintext
        data.withUnsafeMutableBufferPointer { key.applyKeystream($0, id: id, offset: offset) }
        let tag = data.withUnsafeBytes { key.chunkTag(sequence: sequence, id: id, ciphertext: $0) }
        return [0xFF, 0xFF, FrameFormat.messageKind, sequence, UInt8(id >> 24), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF),
                UInt8(id & 0xFF), UInt8(tag >> 8), UInt8(tag & 0xFF)] + data
    }

    @Test func reassemblesInOrder() throws {
        var r = FrameFixture.reassembler()
        let c = try chunks()
        #expect(r.ingest(c[0], source: peer, now: t0) == .incomplete)
        #expect(r.ingest(c[1], source: peer, now: t0) == .message(FrameFixture.greeting))
        #expect(r.counters.messages == 1)
        #expect(r.partialCount == 0)
    }

    @Test func reassemblesOutOfOrderWithDuplicates() throws {
        let message = Message(namespace: "kitchen", type: "recipe", content: Array(0..<200))
        var c = try chunks(message)
        #expect(c.count == 12)
        c.reverse()
        var r = FrameFixture.reassembler()
        var outcomes: [FrameOutcome] = []
        for (i, frame) in c.enumerated() {
            outcomes.append(r.ingest(frame, source: peer, now: t0))
            if i < c.count - 1 { outcomes.append(r.ingest(frame, source: peer, now: t0)) }   // duplicate
        }
        #expect(outcomes.last == .message(message))
        #expect(outcomes.dropLast().allSatisfy { $0 == .incomplete })
        #expect(r.counters.totalDropped == 0)
    }

    @Test func laterChunksOfAVerifiedMessageAreSightings() throws {
        var r = FrameFixture.reassembler()
        let c = try chunks()
        _ = r.ingest(c[0], source: peer, now: t0)
        _ = r.ingest(c[1], source: peer, now: t0)
        // Another gateway's address, any single chunk: the cached, verified body answers.
        #expect(r.ingest(c[0], source: .ble(address: 7), now: t0) == .message(FrameFixture.greeting))
        #expect(r.ingest(c[1], source: peer, now: t0) == .message(FrameFixture.greeting))
        #expect(r.partialCount == 0)
    }

    @Test func aMessageOnBothMediumsStaysASightingOnEach() throws {
        // Chunks (so tags) differ per medium: an audio payload must not push the BLE entry out, or the
        // BLE presence frames would stop refreshing the message until a whole block came round again.
        var r = FrameFixture.reassembler()
        let c = try chunks()
        let audio = try codec.audioPayloads(for: FrameFixture.greeting, epoch: epoch)[0]
        _ = r.ingest(c[0], source: peer, now: t0)
        #expect(r.ingest(c[1], source: peer, now: t0) == .message(FrameFixture.greeting))
        #expect(r.ingest(audio, source: .audio, now: t0) == .message(FrameFixture.greeting))
        #expect(r.ingest(c[1], source: peer, now: t0) == .message(FrameFixture.greeting))
        #expect(r.ingest(audio, source: .audio, now: t0) == .message(FrameFixture.greeting))
        #expect(r.verifiedCount == 2)
    }

    @Test func audioPayloadsReassembleToo() throws {
        var r = FrameFixture.reassembler()
        let big = Message(namespace: "tv", type: "epg", content: Array(repeating: 9, count: 400))
        let payloads = try codec.audioPayloads(for: big, epoch: epoch)
        #expect(payloads.count == 4)
        var last: FrameOutcome = .notOurs
        for p in payloads { last = r.ingest(p, source: .audio, now: t0) }
        #expect(last == .message(big))
        // An audio payload given as BLE manufacturer data lacks the company id: not ours.
        #expect(r.ingest(payloads[0], source: peer, now: t0) == .notOurs)
    }

    @Test func adjacentEpochsAreAcceptedOlderOnesAreReplays() throws {
        for (sent, expected) in [(epoch - 1, true), (epoch + 1, true), (epoch - 2, false), (epoch - 100, false), (epoch + 2, false)] {
            var r = FrameFixture.reassembler()
            let c = try chunks(epoch: sent)
            let first = r.ingest(c[0], source: peer, now: t0)
            let outcome = r.ingest(c[1], source: peer, now: t0)
            #expect(first == (expected ? .incomplete : .dropped(.authenticationFailed)), "sent in \(sent)")
            #expect(outcome == (expected ? .message(FrameFixture.greeting) : .dropped(.authenticationFailed)), "sent in \(sent)")
            #expect(r.counters.dropped[.authenticationFailed, default: 0] == (expected ? 0 : 2))
        }
    }

    @Test func verifiedMessagesAreForgottenWhenTheirEpochIsNoLongerAccepted() throws {
        var r = FrameFixture.reassembler()
        let c = try chunks()
        _ = r.ingest(c[0], source: peer, now: t0)
        #expect(r.ingest(c[1], source: peer, now: t0) == .message(FrameFixture.greeting))
        r.setEpoch(epoch + 1)
        #expect(r.ingest(c[1], source: peer, now: t0) == .message(FrameFixture.greeting))
        r.setEpoch(epoch + 2)
        // A replayed chunk of a message two epochs old: no longer a sighting, and its tag no longer checks.
        #expect(r.ingest(c[1], source: peer, now: t0) == .dropped(.authenticationFailed))
        #expect(r.ingest(c[0], source: peer, now: t0) == .dropped(.authenticationFailed))
        #expect(r.partialCount == 0)
    }

    /// A presence frame is one chunk: after a rotation, the first one its sender sends under the new key
    /// must refresh a message we had authenticated, not wait for the whole block to come round again
    /// (Presence E2E: lost while the publisher was on the air, at xx:x0:00 with rotate_s 600).
    @Test func aMessageAuthenticatedBeforeARotationIsSightedByOneChunkOfTheNewEpoch() throws {
        var r = FrameFixture.reassembler()
        let message = Message(namespace: "den", type: "r4", content: Array(repeating: 0x65, count: 120))
        let before = try chunks(message)
        #expect(before.count > 2)
        for chunk in before.dropLast() { _ = r.ingest(chunk, source: peer, now: t0) }
        #expect(r.ingest(before[before.count - 1], source: peer, now: t0) == .message(message))
        r.setEpoch(epoch + 1)
        let after = try chunks(message, epoch: epoch + 1)
        #expect(after.last != before.last)
        #expect(r.ingest(after[after.count - 1], source: peer, now: t0) == .message(message))
        #expect(r.ingest(after[0], source: peer, now: t0) == .message(message))
        #expect(r.partialCount == 0)
    }

    @Test func wrongKeyIsDroppedAndCounted() throws {
        var r = FrameFixture.reassembler()
        let other = FrameCodec(apiKey: "another-deployment", rotateSeconds: 600)
        let c = try chunks(codec: other)
        // Each chunk is checked on its own: none of them is stored.
        #expect(r.ingest(c[0], source: peer, now: t0) == .dropped(.authenticationFailed))
        #expect(r.ingest(c[1], source: peer, now: t0) == .dropped(.authenticationFailed))
        #expect(r.partialCount == 0)
        #expect(r.counters.messages == 0)
        #expect(r.counters.dropped[.authenticationFailed] == 2)
    }

    @Test func wrongTagIsDropped() throws {
        var r = FrameFixture.reassembler()
        var single = try chunks(Message(namespace: "tv", type: "on", content: []))[0]
        single[8] ^= 0x01   // a chunk tag byte
        #expect(r.ingest(single, source: peer, now: t0) == .dropped(.authenticationFailed))
        var body = try chunks(Message(namespace: "tv", type: "on", content: []))[0]
        body[body.count - 1] ^= 0x20   // a content byte
        #expect(r.ingest(body, source: peer, now: t0) == .dropped(.authenticationFailed))
    }

    @Test func truncatedChunksAreDropped() throws {
        var r = FrameFixture.reassembler()
        let c = try chunks()
        #expect(r.ingest(c[0].dropLast(), source: peer, now: t0) == .dropped(.truncated))   // not last, not full
        #expect(r.ingest(c[0].prefix(10), source: peer, now: t0) == .dropped(.truncated))   // header only
        #expect(r.ingest(c[0].prefix(4), source: peer, now: t0) == .dropped(.truncated))
        #expect(r.counters.dropped[.truncated] == 3)
        #expect(r.partialCount == 0)
    }

    @Test func forgedChunksNeverTouchAHeldMessage() throws {
        var r = FrameFixture.reassembler()
        let message = Message(namespace: "a", type: "b", content: Array(repeating: 1, count: 60))
        let c = try chunks(message)
        #expect(r.ingest(c[1], source: peer, now: t0) == .incomplete)
        // Different bytes under the held id, or another chunk count: without the key, tags don't check.
        var forged = c[1]
        forged[forged.count - 1] ^= 0xFF
        #expect(r.ingest(forged, source: peer, now: t0) == .dropped(.authenticationFailed))
        var otherCount = c[0]
        otherCount[3] = 0x07   // same id, index 0 of 8 instead of 4
        #expect(r.ingest(otherCount, source: peer, now: t0) == .dropped(.authenticationFailed))
        #expect(r.partialCount == 1)
        for chunk in [c[0], c[2]] { #expect(r.ingest(chunk, source: peer, now: t0) == .incomplete) }
        #expect(r.ingest(c[3], source: peer, now: t0) == .message(message))
    }

    @Test func conflictingAuthenticChunksAbandonTheMessage() throws {
        // Two keyed chunks under one id with different bytes: only a key holder (or a 32-bit id
        // collision) makes them; the partial message is thrown away.
        var r = FrameFixture.reassembler()
        #expect(r.ingest(keyed(Array(repeating: 1, count: 19), sequence: 0x13, offset: 19), source: peer, now: t0) == .incomplete)
        #expect(r.ingest(keyed(Array(repeating: 2, count: 19), sequence: 0x13, offset: 19), source: peer, now: t0) == .dropped(.conflictingChunk))
        #expect(r.partialCount == 0)
        #expect(r.ingest(keyed(Array(repeating: 1, count: 19), sequence: 0x13, offset: 19), source: peer, now: t0) == .incomplete)
        #expect(r.ingest(keyed([2, 2] + Array(repeating: 0, count: 17), sequence: 0x07), source: peer, now: t0) == .dropped(.conflictingChunk))
        // Authentic chunks that complete into a body not hashing to its id: the whole body is refused.
        #expect(r.ingest(keyed([1, 1, 0x61, 0x62], sequence: 0x00, id: 0x0A0B_0C0D), source: peer, now: t0) == .dropped(.authenticationFailed))
    }

    @Test func hugeDeclaredLengthsAreRefused() throws {
        var r = FrameFixture.reassembler()
        #expect(r.ingest(keyed([200, 1] + Array(repeating: 0, count: 17), sequence: 0x01), source: peer, now: t0) == .dropped(.declaredLengthTooLarge))
        // Lengths within 32 each but more than the one chunk it declares can hold.
        #expect(r.ingest(keyed([30, 30, 0], sequence: 0x00), source: peer, now: t0) == .dropped(.declaredLengthTooLarge))
        // Structural checks come first, without the key: 16 chunks on audio, where 4 is the maximum;
        // more data than a chunk holds; index past the last.
        let one: [UInt8] = [0xFF, 0xFF, 0x45, 0x00, 1, 2, 3, 4, 5, 6]
        #expect(r.ingest([0x45, 0x0F, 1, 2, 3, 4, 5, 6, 0], source: .audio, now: t0) == .dropped(.tooManyChunks))
        #expect(r.ingest(one + Array(repeating: 0, count: 20), source: peer, now: t0) == .dropped(.chunkTooLong))
        #expect(r.ingest([0xFF, 0xFF, 0x45, 0x21, 1, 2, 3, 4, 5, 6, 0], source: peer, now: t0) == .dropped(.malformedChunk))
        #expect(r.partialCount == 0)
    }

    @Test func othersAdvertsAreNotOurs() {
        var r = FrameFixture.reassembler()
        for frame: [UInt8] in [[], [0xFF], [0x4C, 0x00, 0x02, 0x15], [0xFF, 0xFF], [0xFF, 0xFF, 0x01, 0x02], [0xFF, 0xFE, 0x4E, 0x00]] {
            #expect(r.ingest(frame, source: peer, now: t0) == .notOurs)
        }
        #expect(r.counters == Reassembler.Counters())
    }

    @Test func wholeAdvertsAreWalked() throws {
        var r = FrameFixture.reassembler()
        let single = try codec.bleAdverts(for: Message(namespace: "tv", type: "on", content: []), epoch: epoch)[0]
        let flags: [UInt8] = [0x02, 0x01, 0x06]
        let outcome = (flags + single).withUnsafeBufferPointer { r.ingest(advertisingData: $0, source: peer, now: t0) }
        #expect(outcome == .message(Message(namespace: "tv", type: "on", content: [])))
        let broken: [UInt8] = [0x02, 0x01, 0x06, 0x1E, 0xFF, 0xFF]
        #expect(broken.withUnsafeBufferPointer { r.ingest(advertisingData: $0, source: peer, now: t0) } == .notOurs)
    }

    @Test func partialMessagesTimeOut() throws {
        var r = FrameFixture.reassembler(limits: .init(timeout: .seconds(30)))
        let c = try chunks()
        #expect(r.ingest(c[0], source: peer, now: t0) == .incomplete)
        // The second half arrives too late: the first half was thrown away, so this starts over.
        #expect(r.ingest(c[1], source: peer, now: t0 + .seconds(31)) == .incomplete)
        #expect(r.counters.timedOut == 1)
        #expect(r.ingest(c[0], source: peer, now: t0 + .seconds(32)) == .message(FrameFixture.greeting))
        _ = r.ingest(try chunks(Message(namespace: "x", type: "y", content: Array(repeating: 0, count: 40)))[0], source: peer, now: t0 + .seconds(40))
        #expect(r.expire(now: t0 + .seconds(69)) == 0)
        #expect(r.expire(now: t0 + .seconds(70)) == 1)
        #expect(r.partialCount == 0)
    }

    @Test func subscriberBeaconsAreReportedAndMatched() throws {
        var r = FrameFixture.reassembler()
        let beacon = codec.subscriberBeacon(namespace: "livingroom", type: "*", epoch: epoch)
        guard case .subscriberBeacon(let id) = r.ingest(FrameFixture.manufacturerData(beacon), source: peer, now: t0) else {
            Issue.record("not a beacon"); return
        }
        let publications = [
            SubscriberBeaconMatcher<Int>.Publication(key: 1, namespace: "livingroom", type: "greeting"),
            .init(key: 2, namespace: "livingroom", type: "weather"),
            .init(key: 3, namespace: "kitchen", type: "greeting"),
        ]
        let matcher = SubscriberBeaconMatcher(codec: codec, epoch: epoch, publications: publications)
        #expect(Set(matcher.matches(id)) == [1, 2])
        let exact = codec.subscriberBeaconID(namespace: "kitchen", type: "greeting", epoch: epoch + 1)
        #expect(matcher.matches(exact) == [3])
        #expect(matcher.matches(codec.subscriberBeaconID(namespace: "kitchen", type: "greeting", epoch: epoch - 2)).isEmpty)
        let stranger = FrameCodec(apiKey: "other", rotateSeconds: 600)
        #expect(matcher.matches(stranger.subscriberBeaconID(namespace: "livingroom", type: "*", epoch: epoch)).isEmpty)
        #expect(r.ingest(FrameFixture.manufacturerData(beacon).dropLast(), source: peer, now: t0) == .dropped(.malformedChunk))
        #expect(r.ingest(FrameCodec.subscriberBeaconFrame(id), source: .audio, now: t0) == .subscriberBeacon(id))
    }
}
