import FoundationEssentials
import NearbyProtocol
import SplitMix

/// A fixed, seeded corpus of LE Advertising Report HCI events (event packets without the H4
/// indicator), as a busy room would produce them: our own frames for one api_key (multi-chunk
/// messages rotating, subscriber beacons), another deployment's frames (fail authentication),
/// Eddystone UID/URL/TLM, iBeacon, phones' changing manufacturer data, ordinary named devices,
/// garbage adverts, corrupted copies of ours and a few events whose lengths lie.
///
/// Devices come and go: each kind's devices are picked from a window that slides over its pool
/// during the corpus, so the found/lost stage sees both found and lost events.
struct AdvertCorpus {
    static let apiKey = "bench-api-key-0001"
    static let foreignAPIKey = "someone-elses-key"
    static let namespace = "bench"
    /// Simulated air time between two reports (100,000 reports per second of air).
    static let reportSpacing = Duration.microseconds(10)

    var events: [[UInt8]]
    var reportCount: Int

    /// The epoch every frame is made for (and the reassembler checks against).
    static let epoch: UInt32 = FrameCodec(apiKey: apiKey, rotateSeconds: 600).epoch(at: Date(timeIntervalSince1970: 1_790_000_000))

    static func generate(reports wanted: Int, seed: UInt64) throws -> AdvertCorpus {
        var rng = SeededGenerator(seed: seed)
        var sources = try AdvertSources(rng: &rng)
        var events: [[UInt8]] = []
        events.reserveCapacity(wanted * 10 / 12 + 16)
        var reports = 0
        while reports < wanted {
            if rng.chance(0.005) {
                events.append(Self.lyingEvent(&rng))
                continue
            }
            let n = min(wanted - reports, rng.chance(0.8) ? 1 : (rng.chance(0.75) ? 2 : 3))
            var packet: [UInt8] = [0x3E, 0, 0x02, UInt8(n)]
            for _ in 0..<n {
                let (address, random, ad) = sources.next(progress: Double(reports) / Double(wanted), rng: &rng)
                packet.append(rng.chance(0.5) ? 0x03 : 0x00)           // ADV_NONCONN_IND or ADV_IND
                packet.append(random ? 0x01 : 0x00)
                for k in 0..<6 { packet.append(UInt8(truncatingIfNeeded: address >> UInt64(8 * k))) }
                packet.append(UInt8(ad.count))
                packet.append(contentsOf: ad)
                packet.append(rng.chance(0.1) ? 127 : UInt8(bitPattern: Int8.random(in: -100 ... -30, using: &rng)))
                reports += 1
            }
            packet[1] = UInt8(packet.count - 2)
            events.append(packet)
        }
        return AdvertCorpus(events: events, reportCount: reports)
    }

    /// An LE Meta event whose report lengths don't add up: the HCI layer must refuse it.
    private static func lyingEvent(_ rng: inout SeededGenerator) -> [UInt8] {
        var body = rng.bytes(Int.random(in: 12...40, using: &rng))
        body[0] = 0x02
        body[1] = UInt8.random(in: 1...4, using: &rng)
        body[10] = UInt8.random(in: 32...255, using: &rng)   // data length beyond the packet
        return [0x3E, UInt8(body.count)] + body
    }

    // MARK: File format: "NGBC", u32 LE event count, u32 LE report count, then per event u16 LE length + bytes.

    func write(to path: String) throws {
        var out: [UInt8] = Array("NGBC".utf8)
        Self.appendLE(&out, UInt32(events.count), bytes: 4)
        Self.appendLE(&out, UInt32(reportCount), bytes: 4)
        for event in events {
            Self.appendLE(&out, UInt32(event.count), bytes: 2)
            out.append(contentsOf: event)
        }
        try Data(out).write(to: URL(fileURLWithPath: path))
    }

    static func read(from path: String) throws -> AdvertCorpus {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        guard data.count >= 12, data[0..<4].elementsEqual("NGBC".utf8) else { throw BenchError("\(path): not a corpus file") }
        let count = Int(readLE(data, 4, bytes: 4)), reports = Int(readLE(data, 8, bytes: 4))
        var events: [[UInt8]] = []
        events.reserveCapacity(count)
        var offset = 12
        for _ in 0..<count {
            guard offset + 2 <= data.count else { throw BenchError("\(path): truncated") }
            let length = Int(readLE(data, offset, bytes: 2))
            guard offset + 2 + length <= data.count else { throw BenchError("\(path): truncated") }
            events.append(Array(data[(offset + 2)..<(offset + 2 + length)]))
            offset += 2 + length
        }
        return AdvertCorpus(events: events, reportCount: reports)
    }

    private static func appendLE(_ out: inout [UInt8], _ value: UInt32, bytes: Int) {
        for k in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> UInt32(8 * k))) }
    }

    private static func readLE(_ data: [UInt8], _ offset: Int, bytes: Int) -> UInt32 {
        (0..<bytes).reduce(UInt32(0)) { $0 | UInt32(data[offset + $1]) << UInt32(8 * $1) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
