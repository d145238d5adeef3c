import Config
import FoundationEssentials
import NearbyProtocol
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
    /// An `[[identity]]` by its name: its addresses rotate, its name does not.
    case identity(String)

    /// The topic under `found/` or `lost/` (docs/product.md §6, §12).
    var topicSuffix: String {
        switch self {
        case .message(let message): "\(TopicLevel.escape(message.namespace))/\(TopicLevel.escape(message.type))"
        case .eddystoneUID(let id): "eddystone/\(Hex.lower(id.bytes.prefix(10)))/\(Hex.lower(id.bytes.dropFirst(10)))"
        case .eddystoneURL(let url): "eddystone-url/\(TopicLevel.escape(URLComponents(string: url)?.host ?? url))"
        case .iBeacon(let uuid, let major, let minor): "ibeacon/\(Hex.uuid(uuid.bytes))/\(major)/\(minor)"
        case .identity(let name): "identity/\(TopicLevel.escape(name))"
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
        case .identity(let name):
            hasher.combine(4 as UInt8)
            hasher.combine(name)
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
        case .eddystoneURL(let url), .identity(let url): HeapBytes.string(url)
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
        case .identity: .identity
        }
    }
}
