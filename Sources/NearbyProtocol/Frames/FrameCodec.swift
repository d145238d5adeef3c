import FoundationEssentials

/// Encodes messages and subscriber beacons into frames (`docs/protocol.md`). Pure: no I/O, no clock
/// except `epoch(at:)`, which only does arithmetic on the date it is given.
public struct FrameCodec: Sendable {
    public let rotateSeconds: Int
    /// The api_key's UTF-8 bytes: HKDF's input key material.
    let apiKeyMaterial: [UInt8]

    /// `rotateSeconds` below 1 is treated as 1 (the config refuses it before this is built).
    public init(apiKey: String, rotateSeconds: Int) {
        self.apiKeyMaterial = Array(apiKey.utf8)
        self.rotateSeconds = max(1, rotateSeconds)
    }

    /// floor(unix time / rotate_s); dates before 1970 are epoch 0.
    public func epoch(at date: Date) -> UInt32 {
        let seconds = date.timeIntervalSince1970
        guard seconds > 0 else { return 0 }
        return UInt32(clamping: Int64(seconds) / Int64(rotateSeconds))
    }

    /// How far apart two gateways' clocks may be, in seconds: min(30, rotate_s / 4). A receiver accepts
    /// the neighbour epochs' frames this close to a rotation, and near its own rotation expects the
    /// messages it authenticated under either key (`docs/protocol.md`, "Epochs accepted").
    public var clockSkew: Double { min(Self.maxClockSkew, Double(rotateSeconds) / 4) }
    public static let maxClockSkew: Double = 30

    /// When `epoch` begins (the next rotation is `start(of: epoch + 1)`).
    public func start(of epoch: UInt32) -> Date {
        Date(timeIntervalSince1970: Double(epoch) * Double(rotateSeconds))
    }

    /// Complete legacy AD payloads (≤ 31 bytes each): one manufacturer-specific data structure per
    /// advert, company id 0xFFFF, then one chunk of the message frame.
    public func bleAdverts(for message: Message, epoch: UInt32) throws(FrameError) -> [[UInt8]] {
        try frames(for: message, epoch: epoch, medium: .ble).map { frame in
            var ad: [UInt8] = [UInt8(3 + frame.count), FrameFormat.manufacturerSpecificType,
                               FrameFormat.companyID.0, FrameFormat.companyID.1]
            ad.append(contentsOf: frame)
            return ad
        }
    }

    /// ggwave payloads (≤ 140 bytes each): the frame chunks themselves. A body of up to 132 bytes
    /// (namespace + type + content ≤ 130) is one payload.
    public func audioPayloads(for message: Message, epoch: UInt32) throws(FrameError) -> [[UInt8]] {
        try frames(for: message, epoch: epoch, medium: .audio)
    }

    /// The frame chunks of `message` on `medium`, without the BLE AD header: the body encrypted under
    /// its message id, cut into chunks, each with its own tag.
    public func frames(for message: Message, epoch: UInt32, medium: Medium) throws(FrameError) -> [[UInt8]] {
        var body = try Self.body(of: message, medium: medium)
        let key = EpochKey(apiKey: apiKeyMaterial, epoch: epoch)
        let id = body.withUnsafeBytes { key.messageID(body: $0) }
        body.withUnsafeMutableBufferPointer { key.applyKeystream($0, id: id, offset: 0) }
        let capacity = medium.chunkCapacity
        let count = (body.count + capacity - 1) / capacity
        return (0..<count).map { index in
            let sequence = UInt8(index << 4 | (count - 1))
            let ciphertext = body[(index * capacity)..<min(body.count, (index + 1) * capacity)]
            let tag = ciphertext.withUnsafeBytes { key.chunkTag(sequence: sequence, id: id, ciphertext: $0) }
            var frame: [UInt8] = [FrameFormat.messageKind, sequence]
            for shift in stride(from: 24, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: id >> UInt32(shift))) }
            frame.append(contentsOf: [UInt8(truncatingIfNeeded: tag >> 8), UInt8(truncatingIfNeeded: tag)])
            frame.append(contentsOf: ciphertext)
            return frame
        }
    }

    /// The 4-byte message id `message` has in `epoch` (a keyed hash of the body, so it changes with
    /// every epoch and is the same on both mediums).
    public func messageID(for message: Message, epoch: UInt32) throws(FrameError) -> UInt32 {
        let body = try Self.body(of: message, medium: .audio)
        return body.withUnsafeBytes { EpochKey(apiKey: apiKeyMaterial, epoch: epoch).messageID(body: $0) }
    }

    /// The AD payload of a broadcast subscription's beacon: company id 0xFFFF, "S", 8-byte keyed hash of
    /// namespace and type (`type` may be "*": the hash is then of "*" itself, which matching expects).
    public func subscriberBeacon(namespace: String, type: String, epoch: UInt32) -> [UInt8] {
        let id = subscriberBeaconID(namespace: namespace, type: type, epoch: epoch)
        var ad: [UInt8] = [UInt8(3 + FrameFormat.subscriberBeaconBytes), FrameFormat.manufacturerSpecificType,
                           FrameFormat.companyID.0, FrameFormat.companyID.1]
        ad.append(contentsOf: Self.subscriberBeaconFrame(id))
        return ad
    }

    /// The same beacon as a frame without the BLE AD header (for the audio medium).
    public static func subscriberBeaconFrame(_ id: SubscriberBeaconID) -> [UInt8] {
        var frame: [UInt8] = [FrameFormat.subscriberBeaconKind]
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: id.rawValue >> UInt64(shift))) }
        return frame
    }

    public func subscriberBeaconID(namespace: String, type: String, epoch: UInt32) -> SubscriberBeaconID {
        EpochKey(apiKey: apiKeyMaterial, epoch: epoch).subscriberBeacon(namespace: namespace, type: type)
    }

    /// nsLen, typeLen, namespace, type, content — after checking every limit.
    static func body(of message: Message, medium: Medium) throws(FrameError) -> [UInt8] {
        let ns = message.namespace.utf8.count, type = message.type.utf8.count
        guard ns <= Message.maxNamespaceBytes else { throw .namespaceTooLong(bytes: ns) }
        guard type <= Message.maxTypeBytes else { throw .typeTooLong(bytes: type) }
        let limit = medium.maxContentBytes(namespace: message.namespace, type: message.type)
        guard message.content.count <= limit else {
            throw .contentTooLong(bytes: message.content.count, limit: limit, medium: medium)
        }
        var body: [UInt8] = [UInt8(ns), UInt8(type)]
        body.reserveCapacity(2 + ns + type + message.content.count)
        body.append(contentsOf: message.namespace.utf8)
        body.append(contentsOf: message.type.utf8)
        body.append(contentsOf: message.content)
        return body
    }
}
