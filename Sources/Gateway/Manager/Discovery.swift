import Config
import FoundationEssentials
import NearbyProtocol
import Radio
import SystemCall

/// What the found set holds: one of our messages, or a beacon a subscription opted into.
/// Keys are content, never addresses or message ids, so rotation never causes a lost/found.
///
/// 24 bytes (docs/footprint-found.md): a found entry holds its key several times (the entry, the index's
/// slot, two heap items), so the rare message case is boxed and an Eddystone UID's 10 + 6 bytes
/// share one `ShortBytes`.
enum DiscoveryKey: Hashable, Sendable {
    indirect case message(Message)
    /// The namespace (10 bytes) and then the instance (6 bytes).
    case eddystoneUID(ShortBytes)
    case eddystoneURL(String)
    case iBeacon(uuid: ShortBytes, major: UInt16, minor: UInt16)

    /// The topic under `found/` or `lost/` (docs/product.md §6, §12).
    var topicSuffix: String {
        switch self {
        case .message(let message): "\(TopicLevel.escape(message.namespace))/\(TopicLevel.escape(message.type))"
        case .eddystoneUID(let id): "eddystone/\(Hex.lower(id.bytes.prefix(10)))/\(Hex.lower(id.bytes.dropFirst(10)))"
        case .eddystoneURL(let url): "eddystone-url/\(TopicLevel.escape(URLComponents(string: url)?.host ?? url))"
        case .iBeacon(let uuid, let major, let minor): "ibeacon/\(Hex.uuid(uuid.bytes))/\(major)/\(minor)"
        }
    }

    /// Hashed on every sighting: the message's content goes in as a block (see `Message.hash(into:)`).
    func hash(into hasher: inout Hasher) {
        switch self {
        case .message(let message):
            hasher.combine(0 as UInt8)
            message.hash(into: &hasher)
        case .eddystoneUID(let id):
            hasher.combine(1 as UInt8)
            hasher.combine(id)
        case .eddystoneURL(let url):
            hasher.combine(2 as UInt8)
            hasher.combine(url)
        case .iBeacon(let uuid, let major, let minor):
            hasher.combine(3 as UInt8)
            hasher.combine(uuid)
            hasher.combine(major)
            hasher.combine(minor)
        }
    }

    /// `DiscoveryKey.message(message).hashValue` without making the key (it is boxed: an allocation).
    static func hashValue(of message: Message) -> Int {
        var hasher = Hasher()
        hasher.combine(0 as UInt8)
        message.hash(into: &hasher)
        return hasher.finalize()
    }

    /// Whether this is `message`'s key (`== .message(message)` without making that key).
    func isMessage(_ message: Message) -> Bool {
        if case .message(let own) = self { own == message } else { false }
    }

    /// Heap bytes the key holds outside itself (`HeapBytes`): a message's box and its parts, a URL.
    var heapBytes: Int {
        switch self {
        case .message(let message):
            HeapBytes.chunk(16 + MemoryLayout<Message>.stride) + HeapBytes.string(message.namespace) + HeapBytes.string(message.type)
                + HeapBytes.array(capacity: message.content.capacity, of: UInt8.self)
        case .eddystoneURL(let url): HeapBytes.string(url)
        case .eddystoneUID, .iBeacon: 0
        }
    }

    /// The subscription `include` family this beacon belongs to; nil for messages.
    var beaconFilter: BeaconFilter? {
        switch self {
        case .message: nil
        case .eddystoneUID: .eddystoneUID
        case .eddystoneURL: .eddystoneURL
        case .iBeacon: .iBeacon
        }
    }
}

/// Up to 31 bytes held inline (32 bytes, the size of the `ArraySlice` it replaces): a found entry's
/// beacon content.
struct InlineBytes: Sendable {
    /// The bytes, then their count in the last byte.
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    static let capacity = 31

    init() {}

    /// Nil when `bytes` are more than `capacity`.
    init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count <= Self.capacity else { return nil }
        withUnsafeMutableBytes(of: &words) { raw in
            var k = 0
            for byte in bytes {
                raw[k] = byte
                k += 1
            }
            raw[Self.capacity] = UInt8(k)
        }
    }

    var bytes: [UInt8] {
        withUnsafeBytes(of: words) { raw in Array(raw[0..<Int(raw[Self.capacity])]) }
    }
}

/// Up to 16 bytes held inline (a beacon id: Eddystone namespace and instance, iBeacon UUID), so a
/// beacon's found-set key is made, hashed and compared without allocating.
struct ShortBytes: Hashable, Sendable {
    private var high: UInt64 = 0
    private var low: UInt64 = 0
    /// One byte, not an `Int`: the key holds two of these (Eddystone UID), and every found entry
    /// holds its key four times (the table's key, the entry's, two heap items): 8 bytes less each.
    private let length: UInt8
    var count: Int { Int(length) }

    /// The first 16 bytes of `bytes`.
    init<C: Collection<UInt8>>(_ bytes: C) {
        var count = 0
        for byte in bytes.prefix(16) {
            if count < 8 { high |= UInt64(byte) << (56 - 8 * count) } else { low |= UInt64(byte) << (56 - 8 * (count - 8)) }
            count += 1
        }
        self.length = UInt8(count)
    }

    var bytes: [UInt8] {
        (0..<count).map { k in UInt8(truncatingIfNeeded: k < 8 ? high >> (56 - 8 * k) : low >> (56 - 8 * (k - 8))) }
    }
}

/// What we know about one found entry beyond its key, for the event JSON.
struct DiscoveryDetails: Sendable {
    var medium: Medium
    /// For a beacon, the AD type its `content` came in (service or manufacturer data); nil for messages.
    var beaconADType: UInt8?
    /// A beacon's bytes (a legacy advert's AD data is at most 29) are copied in, so an entry never
    /// keeps the HCI event it came in alive, and a sighting still allocates nothing; longer content
    /// (a message's own array, an extended advert's long AD) is kept as an array.
    private var inline: InlineBytes
    private var long: [UInt8]
    /// The sender's latest Eddystone TLM, for an Eddystone-UID.
    var telemetry: EddystoneTLM?

    init(medium: Medium, content: some Collection<UInt8>, beaconADType: UInt8? = nil, telemetry: EddystoneTLM? = nil) {
        self.medium = medium
        if let inline = InlineBytes(content) {
            (self.inline, self.long) = (inline, [])
        } else {
            (self.inline, self.long) = (InlineBytes(), Array(content))
        }
        self.beaconADType = beaconADType
        self.telemetry = telemetry
    }

    /// The message content, or a beacon's raw service/manufacturer data.
    var content: ArraySlice<UInt8> { long.isEmpty ? inline.bytes[...] : long[...] }

    /// Heap bytes the details hold outside themselves (long content only; a message's is shared with its key).
    var heapBytes: Int { HeapBytes.array(capacity: long.capacity, of: UInt8.self) }

    /// The sender's own calibration, its RSSI at 1 m: iBeacon's measured power, or Eddystone-UID/URL's
    /// TX power at 0 m less 41 dB (the Eddystone specification's loss over the first metre). Nil for
    /// our messages (the config's `radio.tx_power_1m`) and for a beacon that says 0 (uncalibrated).
    var powerAt1m: Int? {
        guard let type = beaconADType else { return nil }
        let s = content.startIndex
        if type == ADStructure.serviceData16BitUUID {
            guard content.count >= 4, content[s + 2] == EddystoneUID.frameType || content[s + 2] == EddystoneURL.frameType
            else { return nil }
            let atZero = Int(Int8(bitPattern: content[s + 3]))
            return atZero == 0 ? nil : atZero - 41
        }
        guard content.count == 25 else { return nil }
        let measured = Int(Int8(bitPattern: content[s + 24]))
        return measured == 0 ? nil : measured
    }

    /// Decoded beacon fields, already JSON (e.g. `"url":"https://…"`), in order. Made when an event
    /// needs them, by decoding `content` again: a sighting only keeps the bytes it came with.
    var extraFields: [(String, String)] {
        guard let type = beaconADType, let beacon = Beacon.parse(type: type, data: content) else { return [] }
        return BeaconDiscovery.fields(beacon, telemetry: telemetry)
    }
}

/// Topic levels come from over-the-air content: characters that would change the topic's structure
/// (`/`, `+`, `#`, space, `%`) or its line (every control character: C0, DEL, C1 such as U+0085 NEL,
/// and the line and paragraph separators U+2028/U+2029) are percent-encoded, byte by byte of their
/// UTF-8, so a name can never forge another topic or another line.
enum TopicLevel {
    static func escape(_ level: String) -> String {
        var out = ""
        for scalar in level.unicodeScalars {
            if isEscaped(scalar) {
                for byte in String(scalar).utf8 { out += "%" + Hex.lower([byte]).uppercased() }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.value == 0x2028 || scalar.value == 0x2029
            || "/+# %".unicodeScalars.contains(scalar)
    }
}
