import Foundation
import Testing
import TestSupport
@testable import NearbyProtocol

/// Issue 15, item 2: content, namespace and type are encrypted on the air, and every bit is authenticated.
@Suite struct FramePrivacyTests {
    let codec = FrameFixture.codec
    let epoch = FrameFixture.epoch
    let t0 = FrameFixture.t0
    let peer = FrameFixture.peer
    static let secret = Message(namespace: "den", type: "tv", content: Array("x-scan private programme guide".utf8))

    func frames(_ medium: Medium, _ message: Message = secret, epoch: UInt32? = nil, codec: FrameCodec? = nil) throws -> [[UInt8]] {
        try (codec ?? self.codec).frames(for: message, epoch: epoch ?? self.epoch, medium: medium)
    }

    /// Whether `needle` (3 bytes or more) occurs in `haystack`.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    @Test(arguments: Medium.allCases)
    func noPlaintextInTheFrameBytes(medium: Medium) throws {
        let all = try frames(medium).flatMap { $0 }
        let adverts = medium == .ble ? try codec.bleAdverts(for: Self.secret, epoch: epoch).flatMap { $0 } : all
        // Any 3 consecutive bytes of namespace, type or content (in any chunk) would be a leak.
        for field in [Array("den".utf8), Self.secret.content] {
            for start in 0...(field.count - 3) {
                let piece = Array(field[start..<(start + 3)])
                #expect(!Self.contains(all, piece), "\(String(decoding: piece, as: UTF8.self)) in \(medium) frames")
                #expect(!Self.contains(adverts, piece))
            }
        }
        // Nor the body's length bytes followed by the namespace ("den" is 3, "tv" 2): the header is encrypted too.
        for frame in try frames(medium) { #expect(!Self.contains(frame, [3, 2, 0x64])) }
        // The two-letter type is not findable next to its namespace either.
        #expect(!Self.contains(all, Array("dentv".utf8)))
    }

    @Test(arguments: Medium.allCases)
    func everyFlippedBitIsRejected(medium: Medium) throws {
        let message = Message(namespace: "den", type: "tv", content: Array(repeating: 0x61, count: medium == .ble ? 30 : 200))
        let good = try frames(medium, message)
        #expect(good.count == 2)
        let source: SourceID = medium == .ble ? peer : .audio
        let wrap: ([UInt8]) -> [UInt8] = { medium == .ble ? [0xFF, 0xFF] + $0 : $0 }
        var reported = 0
        for chunk in good.indices {
            for bit in 0..<(good[chunk].count * 8) {
                var r = FrameFixture.reassembler()
                var frames = good
                frames[chunk][bit / 8] ^= 1 << UInt8(bit % 8)
                for frame in frames {
                    if case .message = r.ingest(wrap(frame), source: source, now: t0) { reported += 1 }
                }
                // A flipped kind byte is someone else's frame; anything else is dropped, never a message.
                if bit >= 8 { #expect(r.counters.totalDropped >= 1, "chunk \(chunk) bit \(bit)") }
            }
        }
        #expect(reported == 0)
        // And the untouched frames do make the message.
        var r = FrameFixture.reassembler()
        let outcomes = good.map { r.ingest(wrap($0), source: source, now: t0) }
        #expect(outcomes.last == .message(message))
    }

    @Test func anotherKeyOrAStaleEpochIsRejected() throws {
        let stranger = FrameCodec(apiKey: "another-deployment", rotateSeconds: 600)
        for (frames, what) in [(try frames(.audio, codec: stranger), "another api_key"), (try frames(.audio, epoch: epoch - 2), "epoch e-2"),
                               (try frames(.audio, epoch: epoch + 2), "epoch e+2")] {
            var r = FrameFixture.reassembler()
            #expect(frames.map { r.ingest($0, source: .audio, now: t0) } == [.dropped(.authenticationFailed)], "\(what)")
            #expect(r.partialCount == 0)
        }
    }

    @Test func subscriberBeaconsAreUnlinkableAcrossEpochs() {
        // The same subscription's beacon shares nothing visible across epochs (beyond the kind byte).
        let beacons = (0..<4).map { codec.subscriberBeacon(namespace: "den", type: "*", epoch: epoch + UInt32($0)) }
        #expect(Set(beacons).count == 4)
        for (a, b) in zip(beacons, beacons.dropFirst()) {
            let equalBytes = zip(a[5...], b[5...]).filter { $0 == $1 }.count
            #expect(equalBytes <= 3, "\(a.hex) vs \(b.hex)")
            #expect(!Self.contains(a, Array("den".utf8)))
        }
    }
}
