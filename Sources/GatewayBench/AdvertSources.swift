import NearbyProtocol
import SplitMix

/// The devices of the corpus: for each kind, a pool of senders and how one of them advertises.
struct AdvertSources {
    enum Kind: Int, CaseIterable {
        case ourMessage, ourSubscriberBeacon, foreignMessage, eddystoneUID, eddystoneURL, eddystoneTLM,
             iBeacon, phone, namedDevice, garbage, corruptedOurs
    }

    /// Share of reports per kind (sums to 1), and pool size per kind.
    static let mix: [(Kind, Double, Int)] = [
        (.ourMessage, 0.25, 40), (.ourSubscriberBeacon, 0.03, 10), (.foreignMessage, 0.01, 6),
        (.eddystoneUID, 0.06, 200), (.eddystoneURL, 0.03, 100), (.eddystoneTLM, 0.03, 100),
        (.iBeacon, 0.12, 400), (.phone, 0.25, 800), (.namedDevice, 0.12, 400), (.garbage, 0.07, 300),
        (.corruptedOurs, 0.03, 50),
    ]

    private var fixed: [Kind: [[[UInt8]]]] = [:]   // per device: the adverts it rotates through
    private var nextChunk: [Kind: [Int]] = [:]

    init(rng: inout SeededGenerator) throws {
        let ours = FrameCodec(apiKey: AdvertCorpus.apiKey, rotateSeconds: 600)
        let foreign = FrameCodec(apiKey: AdvertCorpus.foreignAPIKey, rotateSeconds: 600)
        let epoch = AdvertCorpus.epoch
        for (kind, _, pool) in Self.mix {
            var devices: [[[UInt8]]] = []
            for index in 0..<pool {
                switch kind {
                case .ourMessage, .foreignMessage:
                    // 1 to 4 chunks: short greetings up to ~70-byte contents.
                    let content = rng.bytes(Int.random(in: 1...60, using: &rng))
                    let message = Message(namespace: AdvertCorpus.namespace, type: "t\(index % 7)", content: content)
                    devices.append(try (kind == .ourMessage ? ours : foreign).bleAdverts(for: message, epoch: epoch))
                case .ourSubscriberBeacon:
                    devices.append([ours.subscriberBeacon(namespace: AdvertCorpus.namespace, type: "t\(index)", epoch: epoch)])
                case .eddystoneUID:
                    devices.append([Self.flags + Self.eddystone([0xAA, 0xFE, 0x00, 0xEE] + rng.bytes(16) + [0, 0])])
                case .eddystoneURL:
                    let host = Array("example\(index).com".utf8)
                    devices.append([Self.flags + Self.eddystone([0xAA, 0xFE, 0x10, 0xEB, 0x03] + host)])
                case .iBeacon:
                    let data: [UInt8] = [0x4C, 0x00, 0x02, 0x15] + rng.bytes(20) + [0xC5]
                    devices.append([Self.flags + Self.structure(0xFF, data)])
                case .namedDevice:
                    let name = Array("Device-\(index)".utf8)
                    devices.append([Self.flags + Self.structure(0x09, name) + Self.structure(0x03, [0x0F, 0x18, 0x0A, 0x18])
                        + Self.structure(0x0A, [0xF4])])
                case .eddystoneTLM, .phone, .garbage, .corruptedOurs:
                    devices.append([])   // made fresh at every sighting
                }
            }
            fixed[kind] = devices
            nextChunk[kind] = Array(repeating: 0, count: pool)
        }
    }

    /// The next report: sender address, whether it is random, and its AD bytes (≤ 31).
    mutating func next(progress: Double, rng: inout SeededGenerator) -> (UInt64, Bool, [UInt8]) {
        var pick = Double.random(in: 0..<1, using: &rng)
        var chosen = Self.mix[0]
        for entry in Self.mix {
            chosen = entry
            pick -= entry.1
            if pick < 0 { break }
        }
        let (kind, _, pool) = chosen
        // Half the pool is active at once; the window slides over the other half during the corpus.
        let active = max(1, pool / 2)
        let index = Int(progress * Double(pool - active)) + Int.random(in: 0..<active, using: &rng)
        let address: UInt64 = 0xC000_0000_0000 | UInt64(kind.rawValue) << 40 | UInt64(index) << 8
        return (address, kind != .namedDevice, advert(kind, index, &rng))
    }

    private mutating func advert(_ kind: Kind, _ index: Int, _ rng: inout SeededGenerator) -> [UInt8] {
        switch kind {
        case .eddystoneTLM:
            var frame: [UInt8] = [0xAA, 0xFE, 0x20, 0x00, 0x0B, 0xB8, 0x17, 0x80]
            frame += rng.bytes(8)   // PDU count and uptime change all the time
            return Self.flags + Self.eddystone(frame)
        case .phone:
            // Apple "nearby info"-style manufacturer data whose bytes change at every advert.
            let data: [UInt8] = [0x4C, 0x00, 0x10, 0x05] + rng.bytes(Int.random(in: 5...20, using: &rng))
            return Self.flags + Self.structure(0xFF, data)
        case .garbage:
            return rng.bytes(Int.random(in: 0...31, using: &rng))
        case .corruptedOurs:
            var ad = Self.structure(0xFF, [0xFF, 0xFF, FrameFormat.messageKind] + rng.bytes(Int.random(in: 0...24, using: &rng)))
            if rng.chance(0.3) { ad[0] = UInt8.random(in: 0...40, using: &rng) }   // lying length
            return ad
        default:
            let adverts = fixed[kind]![index]
            let chunk = nextChunk[kind]![index]
            nextChunk[kind]![index] = (chunk + 1) % adverts.count
            return adverts[chunk]
        }
    }

    static let flags: [UInt8] = [0x02, 0x01, 0x06]

    static func structure(_ type: UInt8, _ data: [UInt8]) -> [UInt8] { [UInt8(data.count + 1), type] + data }

    /// Eddystone: the complete 16-bit service UUID list (0xFEAA) and the service data.
    static func eddystone(_ serviceData: [UInt8]) -> [UInt8] {
        structure(0x03, [0xAA, 0xFE]) + structure(0x16, serviceData)
    }
}
