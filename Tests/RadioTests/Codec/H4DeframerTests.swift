import TestSupport
import Testing

@testable import Radio

@Suite struct H4DeframerTests {
    static let reset: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    static let report: [UInt8] = [0x04] + hex("3e1502010301c101020304c50902010605ffffff01027f")

    func packets(_ chunks: [[UInt8]], into deframer: inout H4Deframer) -> [H4Packet] {
        var out: [H4Packet] = []
        for chunk in chunks { deframer.feed(chunk) { out.append($0) } }
        return out
    }

    @Test func wholePackets() {
        var deframer = H4Deframer()
        let out = packets([Self.reset + Self.report], into: &deframer)
        #expect(out == [H4Packet(type: .event, bytes: Array(Self.reset.dropFirst())), H4Packet(type: .event, bytes: Array(Self.report.dropFirst()))])
        #expect(deframer.pendingCount == 0)
    }

    @Test func packetsArrivingOneByteAtATime() {
        var deframer = H4Deframer()
        let stream = Self.reset + Self.report + Self.reset
        let out = packets(stream.map { [$0] }, into: &deframer)
        #expect(out.count == 3)
        #expect(out[1].bytes == Array(Self.report.dropFirst()))
        #expect(deframer.droppedBytes == 0)
    }

    @Test func garbageIsSkippedAndCounted() {
        var deframer = H4Deframer()
        let out = packets([[0x00, 0xFF, 0x17] + Self.reset + [0x99] + Self.reset], into: &deframer)
        #expect(out.count == 2)
        #expect(deframer.droppedBytes == 4)
    }

    @Test func impossibleLengthsAreTreatedAsGarbage() {
        var deframer = H4Deframer()
        // ACL header announcing 0xFFFF bytes: dropped at once, not waited for.
        let out = packets([[0x02, 0x01, 0x00, 0xFF, 0xFF] + Self.reset], into: &deframer)
        #expect(out.count == 1)
        #expect(deframer.droppedPackets == 1)
        #expect(deframer.droppedBytes == 4)
    }

    @Test func aPartialPacketWaitsForItsRest() {
        var deframer = H4Deframer()
        #expect(packets([Array(Self.report.prefix(10))], into: &deframer).isEmpty)
        #expect(deframer.pendingCount == 10)
        #expect(packets([Array(Self.report.dropFirst(10))], into: &deframer).count == 1)
        #expect(deframer.pendingCount == 0)
    }

    @Test func aclAndIsoPacketsAreCut() {
        var deframer = H4Deframer()
        let acl: [UInt8] = [0x02, 0x01, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC]
        let iso: [UInt8] = [0x05, 0x01, 0x00, 0x02, 0x40, 0x01, 0x02]  // top bits of the length are flags
        let out = packets([acl + iso], into: &deframer)
        #expect(out.map(\.type) == [.acl, .iso])
        #expect(out[1].bytes.count == 6)
    }
}
