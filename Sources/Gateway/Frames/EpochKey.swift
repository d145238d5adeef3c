import Crypto
import Foundation

/// The key of one rotation epoch: K_e = HKDF-SHA256(IKM = api_key, salt = "nearby-gateway/v1",
/// info = "epoch-key" || u32be(e), L = 32). Deriving it costs a few HMAC blocks, so holders cache it.
struct EpochKey: Sendable {
    let epoch: UInt32
    /// HMAC keyed once; copies continue from the keyed state instead of re-hashing the pads.
    private let keyed: KeyedMAC

    /// swift-crypto 3 does not mark HMAC Sendable, but it is a value type whose hash state is copy-on-write
    /// (copied before any mutation unless uniquely referenced), and this one is never mutated in place.
    private struct KeyedMAC: @unchecked Sendable {
        let mac: HMAC<SHA256>
    }

    init(apiKey: [UInt8], epoch: UInt32) {
        self.epoch = epoch
        var info = FrameFormat.hkdfInfoPrefix
        info.append(contentsOf: [UInt8(truncatingIfNeeded: epoch >> 24), UInt8(truncatingIfNeeded: epoch >> 16),
                                 UInt8(truncatingIfNeeded: epoch >> 8), UInt8(truncatingIfNeeded: epoch)])
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: apiKey), salt: FrameFormat.hkdfSalt,
                                         info: info, outputByteCount: 32)
        keyed = KeyedMAC(mac: HMAC<SHA256>(key: key))
    }

    /// HMAC-SHA256(K_e, kind || body) truncated to 48 bits, big-endian in a UInt64.
    func messageTag(body: UnsafeRawBufferPointer) -> UInt64 {
        var mac = keyed.mac
        withUnsafeBytes(of: FrameFormat.messageKind) { mac.update(data: $0) }
        mac.update(data: body)
        return Self.prefix(mac.finalize(), bytes: FrameFormat.tagBytes)
    }

    /// HMAC-SHA256(K_e, 0x53 || nsLen || ns || typeLen || type) truncated to 64 bits.
    func subscriberBeacon(namespace: String, type: String) -> SubscriberBeaconID {
        var input: [UInt8] = [FrameFormat.subscriberBeaconKind, UInt8(truncatingIfNeeded: namespace.utf8.count)]
        input.append(contentsOf: namespace.utf8)
        input.append(UInt8(truncatingIfNeeded: type.utf8.count))
        input.append(contentsOf: type.utf8)
        var mac = keyed.mac
        mac.update(data: input)
        return SubscriberBeaconID(rawValue: Self.prefix(mac.finalize(), bytes: FrameFormat.subscriberBeaconIDBytes))
    }

    private static func prefix(_ mac: HashedAuthenticationCode<SHA256>, bytes: Int) -> UInt64 {
        mac.withUnsafeBytes { raw in
            var value: UInt64 = 0
            for i in 0..<bytes { value = value << 8 | UInt64(raw[i]) }
            return value
        }
    }
}

/// The keys of the epochs a receiver accepts: current first (the common case), then previous and next
/// (a sender whose clock is a little off, or a frame sent just before/after the rotation).
struct EpochKeyRing: Sendable {
    private(set) var current: EpochKey
    private(set) var previous: EpochKey?
    private(set) var next: EpochKey

    init(apiKey: [UInt8], epoch: UInt32) {
        current = EpochKey(apiKey: apiKey, epoch: epoch)
        previous = epoch > 0 ? EpochKey(apiKey: apiKey, epoch: epoch - 1) : nil
        next = EpochKey(apiKey: apiKey, epoch: epoch &+ 1)
    }

    /// Moves to `epoch`, reusing keys already derived when it is a neighbour of the current one.
    mutating func advance(to epoch: UInt32, apiKey: [UInt8]) {
        guard epoch != current.epoch else { return }
        let known = [previous, current, next].compactMap { $0 }
        func key(_ e: UInt32) -> EpochKey { known.first { $0.epoch == e } ?? EpochKey(apiKey: apiKey, epoch: e) }
        let newPrevious = epoch > 0 ? key(epoch - 1) : nil
        let newCurrent = key(epoch)
        let newNext = key(epoch &+ 1)
        previous = newPrevious
        current = newCurrent
        next = newNext
    }

    /// The epoch whose key produced `tag` for `body`, or nil.
    func verify(tag: UInt64, body: UnsafeRawBufferPointer) -> UInt32? {
        if current.messageTag(body: body) == tag { return current.epoch }
        if let previous, previous.messageTag(body: body) == tag { return previous.epoch }
        if next.messageTag(body: body) == tag { return next.epoch }
        return nil
    }

    func accepts(epoch: UInt32) -> Bool {
        epoch == current.epoch || epoch == next.epoch || epoch == previous?.epoch
    }
}
