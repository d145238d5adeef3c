import Testing
import TestSupport
@testable import NearbyProtocol

/// Issue 28 item 3: a receiver whose clock is behind finds a peer's frames under the epochs ahead of
/// its own, never under the epochs behind it (docs/protocol.md, "Clocks that disagree").
@Suite struct EpochSearchTests {
    let codec = FrameFixture.codec
    let epoch = FrameFixture.epoch
    let t0 = FrameFixture.t0
    let tv = Message(namespace: "tv", type: "on", content: [])

    func searching() -> Reassembler {
        var r = FrameFixture.reassembler()
        r.searchesAhead = true
        return r
    }

    @Test func aPeerThreeDaysAheadIsFoundAndReported() throws {
        let ahead = epoch + 432   // 3 days at rotate_s 600
        let frame = try codec.audioPayloads(for: tv, epoch: ahead)[0]
        var off = FrameFixture.reassembler()
        #expect(off.ingest(frame, source: .audio, now: t0) == .dropped(.authenticationFailed), "without the search, as before")
        var r = searching()
        #expect(r.ingest(frame, source: .audio, now: t0) == .message(tv))
        #expect(r.takeEpochAhead() == ahead)
        #expect(r.takeEpochAhead() == nil, "reported once")
        #expect(r.epochSearches == 1)
    }

    @Test func theSearchNeverLooksBehindOrBeyondThreeDays() throws {
        var r = searching()
        for (i, sent) in [epoch - 2, epoch - 432, epoch + 433].enumerated() {
            let frame = try codec.audioPayloads(for: tv, epoch: sent)[0]
            guard case .dropped = r.ingest(frame, source: .audio, now: t0 + .seconds(60 * i)) else {
                Issue.record("epoch \(Int64(sent) - Int64(epoch)) from ours was accepted")
                continue
            }
        }
        #expect(r.epochSearches == 3, "each frame searched")
        #expect(r.takeEpochAhead() == nil)
    }

    @Test func aMessageOfSeveralChunksCompletesUnderTheEpochFound() throws {
        let ahead = epoch + 100
        let long = Message(namespace: "livingroom", type: "greeting", content: Array(repeating: 0x41, count: 30))
        let adverts = try codec.bleAdverts(for: long, epoch: ahead).map(FrameFixture.manufacturerData)
        #expect(adverts.count == 3)
        var r = searching()
        #expect(r.ingest(adverts[0], source: FrameFixture.peer, now: t0) == .incomplete)
        #expect(r.ingest(adverts[1], source: FrameFixture.peer, now: t0) == .incomplete, "the search's key, without searching again")
        #expect(r.ingest(adverts[2], source: FrameFixture.peer, now: t0) == .message(long))
        #expect(r.epochSearches == 1)
        #expect(r.takeEpochAhead() == ahead)
    }

    /// Found in the 2 h run: the follower never saw its peer rotate, because the next epoch's frames
    /// were sightings of copies made ahead of the rotation, and the peer lost it at every rotation.
    @Test func whileThePhaseIsUnknownThePeersRotationIsReported() throws {
        var r = searching()
        #expect(r.ingest(try codec.audioPayloads(for: tv, epoch: epoch + 12)[0], source: .audio, now: t0) == .message(tv))
        #expect(r.takeEpochAhead() == epoch + 12)
        // The owner follows: the peer's epoch, its phase unknown, our clock at the start of that epoch.
        r.setEpoch(epoch + 12)
        r.phaseUnknown = true
        r.follow(clock: codec.start(of: epoch + 12).addingTimeInterval(1))
        #expect(r.ingest(try codec.audioPayloads(for: tv, epoch: epoch + 13)[0], source: .audio, now: t0 + .seconds(1)) == .message(tv))
        #expect(r.takeEpochAhead() == epoch + 13, "the peer rotated: the owner learns its phase")
    }

    @Test func searchesAreRateLimitedAndBackOff() throws {
        let stranger = FrameCodec(apiKey: "another deployment", rotateSeconds: 600)
        let frame = try stranger.audioPayloads(for: tv, epoch: epoch)[0]
        var r = searching()
        var searched: [Int] = []
        for ms in [0, 500, 1000, 2000, 2999, 3000, 6000, 7000] {
            _ = r.ingest(frame, source: .audio, now: t0 + .milliseconds(ms))
            searched.append(r.epochSearches)
        }
        // 1 s, then 2 s, then 4 s between searches that find nothing.
        #expect(searched == [1, 1, 2, 2, 2, 3, 3, 4])
        r.resetSearch()
        _ = r.ingest(frame, source: .audio, now: t0 + .milliseconds(7001))
        #expect(r.epochSearches == 5, "a reset searches at once")
        #expect(r.takeEpochAhead() == nil)
    }

    @Test func aForgedChunkNeverMovesTheClock() throws {
        var r = searching()
        for i in 0..<64 {
            // Random-looking one-chunk frames: kind, sequence 0/0, id, tag, ciphertext.
            let frame: [UInt8] = [0x45, 0x00] + (0..<22).map { UInt8(truncatingIfNeeded: ($0 &* 37 &+ i &* 101) ^ 0x5A) }
            guard case .dropped = r.ingest(frame, source: .audio, now: t0 + .seconds(20 * i)) else {
                Issue.record("forged frame \(i) was not dropped")
                continue
            }
        }
        #expect(r.epochSearches == 64)
        #expect(r.takeEpochAhead() == nil)
    }
}
