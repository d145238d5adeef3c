import Digest

/// The key of one rotation epoch: K_e = HKDF-SHA256(IKM = api_key, salt = "nearby-gateway/v2",
/// info = "epoch-key" || u32be(e), L = 32), and the four uses of it, each HMAC-SHA256(K_e, …) with its
/// own first bytes so no output of one use is ever an output of another (`docs/protocol.md`):
/// message id (0x45 0x01), keystream (0x45 0x02), chunk tag (0x45 0x03), subscriber beacon (0x53).
/// Deriving it costs a few HMAC blocks, so holders cache it.
package struct EpochKey: Sendable {
    package let epoch: UInt32
    /// HMAC keyed once; copies continue from the keyed state instead of re-hashing the pads.
    private let keyed: HMACSHA256

    package init(apiKey: [UInt8], epoch: UInt32) {
        self.epoch = epoch
        var info = FrameFormat.hkdfInfoPrefix
        info.append(contentsOf: [UInt8(truncatingIfNeeded: epoch >> 24), UInt8(truncatingIfNeeded: epoch >> 16),
                                 UInt8(truncatingIfNeeded: epoch >> 8), UInt8(truncatingIfNeeded: epoch)])
        let key = HKDFSHA256.deriveKey(inputKeyMaterial: apiKey, salt: FrameFormat.hkdfSalt, info: info, outputByteCount: 32)
        keyed = HMACSHA256(key: key)
    }

    /// The message id, a synthetic nonce: HMAC(K_e, 0x45 0x01 || body), first 4 bytes. It depends on the
    /// whole plaintext, so it repeats under one key only for the same body (whose ciphertext is then the
    /// same bytes) or by a 32-bit collision; the receiver recomputes it to authenticate the whole body.
    package func messageID(body: UnsafeRawBufferPointer) -> UInt32 {
        var mac = keyed
        mac.update(FrameFormat.idDomain)
        mac.update(body)
        return UInt32(truncatingIfNeeded: mac.finalize().prefix(FrameFormat.idBytes))
    }

    /// XORs `bytes`, which sit at `offset` in the body of message `id`, with the keystream
    /// HMAC(K_e, 0x45 0x02 || id || u16be(j)) for j = 0, 1, … (32 bytes each): encrypts and decrypts.
    package func applyKeystream(_ bytes: UnsafeMutableBufferPointer<UInt8>, id: UInt32, offset: Int) {
        guard !bytes.isEmpty else { return }
        var block = offset / 32
        var done = 0
        while done < bytes.count {
            var mac = keyed
            mac.update(FrameFormat.keystreamDomain)
            withUnsafeBytes(of: id.bigEndian) { mac.update($0) }
            withUnsafeBytes(of: UInt16(truncatingIfNeeded: block).bigEndian) { mac.update($0) }
            let stream = mac.finalize()
            stream.withUnsafeBytes { stream in
                var k = (offset + done) - block * 32
                while k < 32, done < bytes.count {
                    bytes[done] ^= stream[k]
                    k += 1
                    done += 1
                }
            }
            block += 1
        }
    }

    /// The tag of one chunk: HMAC(K_e, 0x45 0x03 || sequence || id || ciphertext), first 2 bytes. Checked
    /// before a chunk is stored, so bytes from someone without the key never take a partial-message slot.
    package func chunkTag(sequence: UInt8, id: UInt32, ciphertext: UnsafeRawBufferPointer) -> UInt16 {
        var mac = keyed
        mac.update(FrameFormat.chunkTagDomain)
        withUnsafeBytes(of: sequence) { mac.update($0) }
        withUnsafeBytes(of: id.bigEndian) { mac.update($0) }
        mac.update(ciphertext)
        return UInt16(truncatingIfNeeded: mac.finalize().prefix(FrameFormat.chunkTagBytes))
    }

    /// HMAC-SHA256(K_e, 0x53 || nsLen || ns || typeLen || type) truncated to 64 bits.
    package func subscriberBeacon(namespace: String, type: String) -> SubscriberBeaconID {
        var mac = keyed
        // Fed piece by piece from the strings' own UTF-8: no input array to allocate.
        withUnsafeBytes(of: (FrameFormat.subscriberBeaconKind, UInt8(truncatingIfNeeded: namespace.utf8.count))) { mac.update($0) }
        var namespace = namespace, type = type
        namespace.withUTF8 { mac.update(UnsafeRawBufferPointer($0)) }
        withUnsafeBytes(of: UInt8(truncatingIfNeeded: type.utf8.count)) { mac.update($0) }
        type.withUTF8 { mac.update(UnsafeRawBufferPointer($0)) }
        return SubscriberBeaconID(rawValue: mac.finalize().prefix(FrameFormat.subscriberBeaconIDBytes))
    }
}

/// The keys of the epochs a receiver accepts: current first (the common case), then previous and next
/// (a sender whose clock is a little off, or a frame sent just before/after the rotation). The owner
/// narrows that to the current epoch alone away from a rotation (`accept(previous:next:)`), which
/// shortens how long a recorded frame can be replayed.
struct EpochKeyRing: Sendable {
    private(set) var current: EpochKey
    private(set) var previous: EpochKey?
    private(set) var next: EpochKey
    private(set) var acceptsPrevious = true
    private(set) var acceptsNext = true

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
        // Both neighbours until the owner's clock narrows it again.
        acceptsPrevious = true
        acceptsNext = true
    }

    mutating func accept(previous: Bool, next: Bool) {
        acceptsPrevious = previous
        acceptsNext = next
    }

    /// The accepted key under which `tag` is the tag of this chunk, or nil.
    func key(sequence: UInt8, id: UInt32, ciphertext: UnsafeRawBufferPointer, tag: UInt16) -> EpochKey? {
        if current.chunkTag(sequence: sequence, id: id, ciphertext: ciphertext) == tag { return current }
        if acceptsPrevious, let previous, previous.chunkTag(sequence: sequence, id: id, ciphertext: ciphertext) == tag { return previous }
        if acceptsNext, next.chunkTag(sequence: sequence, id: id, ciphertext: ciphertext) == tag { return next }
        return nil
    }

    func key(for epoch: UInt32) -> EpochKey? {
        if epoch == current.epoch { return current }
        if acceptsPrevious, let previous, epoch == previous.epoch { return previous }
        if acceptsNext, epoch == next.epoch { return next }
        return nil
    }

    func accepts(epoch: UInt32) -> Bool { key(for: epoch) != nil }
}
