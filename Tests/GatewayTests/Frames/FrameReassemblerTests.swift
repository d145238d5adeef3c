import Foundation
import Testing
@testable import Gateway

@Suite struct FrameReassemblerTests {
    let codec = FrameFixture.codec
    let epoch = FrameFixture.epoch
    let t0 = FrameFixture.t0
    let peer = FrameFixture.peer

    func chunks(_ message: Message = FrameFixture.greeting, epoch: UInt32? = nil, codec: FrameCodec? = nil) throws -> [[UInt8]] {
        try (codec ?? self.codec).bleAdverts(for: message, epoch: epoch ?? self.epoch).map(FrameFixture.manufacturerData)
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
            _ = r.ingest(c[0], source: peer, now: t0)
            let outcome = r.ingest(c[1], source: peer, now: t0)
            #expect(outcome == (expected ? .message(FrameFixture.greeting) : .dropped(.authenticationFailed)), "sent in \(sent)")
            #expect(r.counters.dropped[.authenticationFailed, default: 0] == (expected ? 0 : 1))
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
        // A replayed chunk of a message two epochs old: no longer a sighting, and reassembling it fails.
        #expect(r.ingest(c[1], source: peer, now: t0) == .incomplete)
        #expect(r.ingest(c[0], source: peer, now: t0) == .dropped(.authenticationFailed))
    }

    @Test func wrongKeyIsDroppedAndCounted() throws {
        var r = FrameFixture.reassembler()
        let other = FrameCodec(apiKey: "another-deployment", rotateSeconds: 600)
        let c = try chunks(codec: other)
        #expect(r.ingest(c[0], source: peer, now: t0) == .incomplete)
        #expect(r.ingest(c[1], source: peer, now: t0) == .dropped(.authenticationFailed))
        #expect(r.counters.messages == 0)
        #expect(r.counters.dropped[.authenticationFailed] == 1)
    }

    @Test func wrongTagIsDropped() throws {
        var r = FrameFixture.reassembler()
        var single = try chunks(Message(namespace: "tv", type: "on", content: []))[0]
        single[5] ^= 0x01   // a tag byte
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

    @Test func conflictingChunksAbandonTheMessage() throws {
        var r = FrameFixture.reassembler()
        let c = try chunks(Message(namespace: "a", type: "b", content: Array(repeating: 1, count: 60)))
        #expect(r.ingest(c[1], source: peer, now: t0) == .incomplete)
        var forged = c[1]
        forged[forged.count - 1] ^= 0xFF
        #expect(r.ingest(forged, source: peer, now: t0) == .dropped(.conflictingChunk))
        #expect(r.partialCount == 0)
        var otherCount = c[0]
        otherCount[3] = 0x07   // same id, index 0 of 8 instead of 4
        #expect(r.ingest(c[1], source: peer, now: t0) == .incomplete)
        #expect(r.ingest(otherCount, source: peer, now: t0) == .dropped(.conflictingChunk))
    }

    @Test func hugeDeclaredLengthsAreRefused() throws {
        var r = FrameFixture.reassembler()
        let header: [UInt8] = [0xFF, 0xFF, 0x4E, 0x01, 1, 2, 3, 4, 5, 6]
        #expect(r.ingest(header + [200, 1] + Array(repeating: 0, count: 17), source: peer, now: t0) == .dropped(.declaredLengthTooLarge))
        // Lengths within 32 each but more than the one chunk it declares can hold.
        let one: [UInt8] = [0xFF, 0xFF, 0x4E, 0x00, 1, 2, 3, 4, 5, 6]
        #expect(r.ingest(one + [30, 30, 0], source: peer, now: t0) == .dropped(.declaredLengthTooLarge))
        // 16 chunks on audio, where 4 is the maximum; more data than a chunk holds.
        #expect(r.ingest([0x4E, 0x0F, 1, 2, 3, 4, 5, 6, 0], source: .audio, now: t0) == .dropped(.tooManyChunks))
        #expect(r.ingest(one + Array(repeating: 0, count: 20), source: peer, now: t0) == .dropped(.chunkTooLong))
        #expect(r.ingest([0xFF, 0xFF, 0x4E, 0x21, 1, 2, 3, 4, 5, 6, 0], source: peer, now: t0) == .dropped(.malformedChunk))
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
