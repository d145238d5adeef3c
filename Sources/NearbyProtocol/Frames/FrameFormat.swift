/// The wire constants of the Nearby Gateway frame format, version 2 (`docs/protocol.md`).
///
/// One frame format serves both mediums: a BLE advert carries it as manufacturer-specific data behind the
/// company id 0xFFFF; an audio beacon carries the same frame bytes as one ggwave payload.
public enum FrameFormat {
    /// Manufacturer-specific data AD type (Bluetooth Core Supplement, part A, 1.4).
    public static let manufacturerSpecificType: UInt8 = 0xFF
    /// 0xFFFF is the Bluetooth SIG's "reserved for internal use/testing" company id; it is not assigned to
    /// anyone, and the kind byte that follows tells our frames apart from other users of it.
    public static let companyID: (UInt8, UInt8) = (0xFF, 0xFF)
    /// First byte of a message chunk ("E", encrypted; version 1's plaintext chunks were "N").
    public static let messageKind: UInt8 = 0x45
    /// First byte of a subscriber beacon ("S").
    public static let subscriberBeaconKind: UInt8 = 0x53

    /// kind (1) + sequence (1) + message id (4) + chunk tag (2): as many bytes as version 1's header.
    public static let chunkHeaderBytes = 8
    /// The message id: a keyed hash of the whole plaintext body, 32 bits (the nonce of its keystream).
    public static let idBytes = 4
    /// The tag of each chunk: 16 bits, checked before a chunk is stored.
    public static let chunkTagBytes = 2
    /// kind (1) + beacon id (8).
    public static let subscriberBeaconBytes = 9
    public static let subscriberBeaconIDBytes = 8

    /// A legacy advert carries 31 bytes of AD; ours is one AD structure: length, type, company id (4 bytes).
    public static let legacyAdvertBytes = 31
    public static let advertOverheadBytes = 4
    /// ggwave's variable-length mode carries at most 140 bytes per transmission.
    public static let audioPayloadBytes = 140

    /// nsLen (1) + typeLen (1) at the start of every message body.
    public static let bodyHeaderBytes = 2

    /// HKDF salt and info prefix of the per-epoch key: changing either is a new protocol version.
    static let hkdfSalt = Array("nearby-gateway/v2".utf8)
    static let hkdfInfoPrefix = Array("epoch-key".utf8)
    /// First bytes of the HMAC input of each use of the epoch key (the subscriber beacon's is its kind).
    static let idDomain: [UInt8] = [0x45, 0x01]
    static let keystreamDomain: [UInt8] = [0x45, 0x02]
    static let chunkTagDomain: [UInt8] = [0x45, 0x03]
}

extension Medium {
    /// Bytes of message body one chunk carries on this medium.
    public var chunkCapacity: Int {
        switch self {
        case .ble: FrameFormat.legacyAdvertBytes - FrameFormat.advertOverheadBytes - FrameFormat.chunkHeaderBytes   // 19
        case .audio: FrameFormat.audioPayloadBytes - FrameFormat.chunkHeaderBytes                                   // 132
        }
    }

    /// How many chunks one message may span on this medium. BLE rotates adverts every interval (100 ms),
    /// so 16 chunks still arrive within seconds; an audio beacon takes seconds per payload, so 4 is the cap.
    public var maxChunks: Int {
        switch self {
        case .ble: 16
        case .audio: 4
        }
    }

    /// The largest message body (lengths + namespace + type + content) this medium carries.
    public var maxBodyBytes: Int { chunkCapacity * maxChunks }   // BLE 304, audio 528

    /// The largest content for a message with this namespace and type on this medium.
    public func maxContentBytes(namespace: String, type: String) -> Int {
        maxBodyBytes - FrameFormat.bodyHeaderBytes - namespace.utf8.count - type.utf8.count
    }
}

/// Where a frame came from. Chunks are reassembled per source, so a stranger sending chunks under the id
/// of someone else's message can spoil only its own reassembly.
public struct SourceID: Hashable, Sendable, CustomStringConvertible {
    public var medium: Medium
    /// The 48-bit BD address for BLE (with its address type in bits 48…55 if the caller wants it); 0 for audio.
    public var address: UInt64

    public init(medium: Medium, address: UInt64) {
        self.medium = medium
        self.address = address
    }

    public static let audio = SourceID(medium: .audio, address: 0)

    public static func ble(address: UInt64) -> SourceID { SourceID(medium: .ble, address: address) }

    public var description: String { "\(medium.rawValue):\(String(address, radix: 16))" }
}

/// The 8-byte keyed hash a broadcast subscription transmits (see `SubscriberBeaconMatcher`).
public struct SubscriberBeaconID: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Why a frame that looked like ours was thrown away. Raw values are what stats and debug logs show.
public enum DropReason: String, Sendable, Hashable, CaseIterable {
    /// Shorter than its header, or a chunk before the last one that is not full.
    case truncated
    /// Sequence byte says index > last index, or a subscriber beacon of the wrong size.
    case malformedChunk = "malformed-chunk"
    /// More chunk data than the medium's chunk capacity.
    case chunkTooLong = "chunk-too-long"
    /// More chunks than the medium allows.
    case tooManyChunks = "too-many-chunks"
    /// Namespace or type length over 32, or lengths larger than the declared chunks can hold.
    case declaredLengthTooLarge = "declared-length-too-large"
    /// Lengths don't add up, or namespace/type are not UTF-8.
    case malformedBody = "malformed-body"
    /// The same chunk index arrived with different bytes, or a different chunk count, under one id.
    case conflictingChunk = "conflicting-chunk"
    /// A chunk tag, or the message id of a whole body, matches none of the accepted epochs' keys: wrong
    /// api_key, a forgery, corruption, or a replay from an epoch no longer accepted.
    case authenticationFailed = "authentication-failed"
}

/// What the reassembler made of one frame.
public enum FrameOutcome: Sendable, Equatable {
    /// Not a Nearby Gateway frame (someone else's advert): costs nothing, is not counted as a drop.
    case notOurs
    /// A valid chunk of a message still missing chunks (or a duplicate of one already held).
    case incomplete
    /// An authenticated message: on completion, and again for every later chunk of the same, already
    /// verified frame (each one is a sighting).
    case message(Message)
    /// A subscriber beacon; match it with `SubscriberBeaconMatcher`.
    case subscriberBeacon(SubscriberBeaconID)
    case dropped(DropReason)
}

/// Why a message can't be encoded.
public enum FrameError: Error, Sendable, Equatable, CustomStringConvertible {
    case namespaceTooLong(bytes: Int)
    case typeTooLong(bytes: Int)
    case contentTooLong(bytes: Int, limit: Int, medium: Medium)

    public var description: String {
        switch self {
        case .namespaceTooLong(let n): "namespace is \(n) bytes, at most \(Message.maxNamespaceBytes) allowed"
        case .typeTooLong(let n): "type is \(n) bytes, at most \(Message.maxTypeBytes) allowed"
        case .contentTooLong(let n, let limit, let medium):
            "content is \(n) bytes, at most \(limit) fit one \(medium.rawValue) message with this namespace and type"
        }
    }
}
