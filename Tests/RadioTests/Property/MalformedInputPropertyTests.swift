import SplitMix
import TestSupport
import Testing

@testable import Radio

/// Random and mutated input never crashes the parsers, never grows their memory, and every byte
/// they drop is counted.
@Suite struct MalformedInputPropertyTests {
    static let iterations = 100_000

    /// Valid samples the mutations start from: btvirt's report, a multi-report event, an extended
    /// report, command answers, beacon adverts.
    static let events: [[UInt8]] = {
        let eddystone = hex("0201060303aafe1716aafe00e7edd1ebeac04e5defa0170bdb87539b670000")
        let iBeacon = hex("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
        func legacy(_ data: [UInt8]) -> [UInt8] { HCIEventBytes.legacyReport(data, address: [1, 2, 3, 4, 5, 0xC6]) }
        return [
            hex("3e1502010301c101020304c50902010605ffffff01027f"),
            legacy(eddystone), legacy(iBeacon),
            HCIEventBytes.extendedReport(iBeacon),
            hex("0e0c0101100009000009f1050000"), hex("0f0401013a20"), [0x10, 0x01, 0x03],
        ]
    }()

    @Test func mutatedEventsAndStreamsNeverCrashOrGrow() {
        var random = SeededGenerator(seed: 0x5EED_0001)
        var deframer = H4Deframer()
        var fed = 0
        var framed = 0
        var parsed = 0
        var malformed = 0
        var violations = 0
        var maximumPending = 0
        for iteration in 0..<Self.iterations {
            let sample = Self.events[iteration % Self.events.count]
            let other = Self.events[Int.random(in: 0..<Self.events.count, using: &random)]
            let mutated = random.mutate(sample, splice: other)

            // As an event packet on its own: decoded, or refused.
            if let event = HCIEvent.parse(mutated) {
                parsed += 1
                if case .advertisingReports(let reports) = event {
                    for report in reports {
                        if report.data.endIndex > mutated.count { violations += 1 }
                        if let sighting = Sighting(report: report, time: .now) {
                            if sighting.raw.count != report.data.count { violations += 1 }
                            _ = Beacon.parse(sighting.adStructures)
                        }
                    }
                }
            } else {
                malformed += 1
            }

            // As stream bytes, cut at random points, sometimes with garbage between packets.
            var stream: [UInt8] = [0x04] + mutated
            if Int.random(in: 0..<4, using: &random) == 0 { stream = random.bytes(Int.random(in: 1...8, using: &random)) + stream }
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + Int.random(in: 1...64, using: &random))
                deframer.feed(stream[offset..<end]) { packet in
                    framed += 1 + packet.bytes.count
                    if packet.type == .command { violations += 1 }
                }
                fed += end - offset
                offset = end
                maximumPending = max(maximumPending, deframer.pendingCount)
            }
        }
        #expect(violations == 0)
        #expect(maximumPending <= H4Deframer.maximumPacketLength)
        // Every byte fed is in a packet, counted as dropped, or waiting for the rest of a packet.
        #expect(fed == framed + deframer.droppedBytes + deframer.droppedPackets + deframer.pendingCount)
        #expect(parsed + malformed == Self.iterations)
        #expect(malformed > Self.iterations / 10, "the mutations should break many events")
        #expect(deframer.droppedBytes > 0)
    }

    @Test func randomBytesNeverCrashTheDeframer() {
        var random = SeededGenerator(seed: 0x5EED_0002)
        var deframer = H4Deframer()
        var fed = 0
        var framed = 0
        var maximumPending = 0
        for _ in 0..<Self.iterations {
            let chunk = random.bytes(Int.random(in: 1...32, using: &random))
            deframer.feed(chunk) { packet in
                framed += 1 + packet.bytes.count
                _ = HCIEvent.parse(packet.bytes)
            }
            fed += chunk.count
            maximumPending = max(maximumPending, deframer.pendingCount)
        }
        #expect(maximumPending <= H4Deframer.maximumPacketLength)
        #expect(fed == framed + deframer.droppedBytes + deframer.droppedPackets + deframer.pendingCount)
        #expect(deframer.droppedBytes > fed / 3, "most random bytes are not packet starts")
    }

    @Test func mutatedAdvertsNeverCrashTheADAndBeaconParsers() {
        var random = SeededGenerator(seed: 0x5EED_0003)
        let adverts = [
            hex("0201060303aafe1716aafe00e7edd1ebeac04e5defa0170bdb87539b670000"),
            hex("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"),
            hex("0303aafe1116aafe10eb03676f6f2e676c2f53367a5436"),
            hex("0303aafe1116aafe20000bb8178000000100") + [0, 0, 0, 0x64],
        ]
        var malformed = 0
        var disagreements = 0
        for iteration in 0..<Self.iterations {
            let advert: [UInt8]
            if iteration % 5 == 0 {
                advert = random.bytes(Int.random(in: 0...31, using: &random))
            } else {
                let sample = adverts[iteration % adverts.count]
                advert = random.mutate(sample, splice: adverts[Int.random(in: 0..<adverts.count, using: &random)])
            }
            let (structures, isMalformed) = ADStructure.parse(advert)
            // The lazy walk and the eager parse agree, and never claim more bytes than there are.
            let lazy = Array(ADStructures(advert[...]))
            if lazy.count != structures.count
                || structures.reduce(0, { $0 + 2 + $1.data.count }) > advert.count
                || ADStructures(advert[...]).isWellFormed == isMalformed
            {
                disagreements += 1
            }
            if isMalformed { malformed += 1 }
            _ = Beacon.parse(structures)
            _ = Beacon.parse(raw: advert[...])
        }
        #expect(disagreements == 0)
        #expect(malformed > 0)
    }
}
