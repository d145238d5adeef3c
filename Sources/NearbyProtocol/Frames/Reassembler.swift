import FoundationEssentials

/// Turns received frames back into authenticated messages (`docs/protocol.md`).
///
/// A value type with one owner (the message manager). Memory is fixed at `init`: partial messages
/// live in `limits.maxPartials` preallocated slots (oldest evicted), verified messages in a cache of
/// `limits.maxVerified` entries. Adverts that are not ours are rejected after two or three byte
/// comparisons, without allocating.
public struct Reassembler: Sendable {
    public struct Limits: Sendable {
        /// Messages being reassembled at once (across all sources).
        public var maxPartials: Int
        /// A partial message older than this is thrown away (counted as timed out).
        public var timeout: Duration
        /// Authenticated messages remembered so their later chunks are cheap sightings.
        public var maxVerified: Int

        public init(maxPartials: Int = 64, timeout: Duration = .seconds(30), maxVerified: Int = 256) {
            self.maxPartials = maxPartials
            self.timeout = timeout
            self.maxVerified = maxVerified
        }
    }

    /// What went through, for `$SYS` stats and debug logs.
    public struct Counters: Sendable, Equatable {
        public var messages = 0
        public var subscriberBeacons = 0
        public var incomplete = 0
        public var dropped: [DropReason: Int] = [:]
        /// Partial messages pushed out by newer ones while all slots were taken.
        public var evicted = 0
        /// Partial messages that did not complete within the timeout.
        public var timedOut = 0

        public var totalDropped: Int { dropped.values.reduce(0, +) }

        public init() {}
    }

    public let codec: FrameCodec
    public let limits: Limits
    public private(set) var counters = Counters()
    private var keys: EpochKeyRing
    private var partials: PartialTable
    private var verified: VerifiedCache
    /// The epoch the verified messages were copied into ahead of our rotation (`follow(clock:)`), nil
    /// outside that window.
    private var copiedAhead: UInt32?
    /// Peers whose clock is ahead of ours by more than an epoch (docs/protocol.md, "Clocks that disagree").
    private var search: EpochSearch
    /// The latest epoch ahead of ours under which a whole message authenticated, for the owner.
    private var epochAhead: UInt32?

    /// `counters` carries a predecessor's counts, so a reloaded codec does not restart them (`GET stats`
    /// counts from process start).
    public init(codec: FrameCodec, epoch: UInt32, limits: Limits = Limits(), counters: Counters = Counters()) {
        self.codec = codec
        self.limits = limits
        self.counters = counters
        keys = EpochKeyRing(apiKey: codec.apiKeyMaterial, epoch: epoch)
        search = EpochSearch(policy: EpochSearch.Policy(rotateSeconds: codec.rotateSeconds))
        partials = PartialTable(capacity: limits.maxPartials)
        verified = VerifiedCache(capacity: limits.maxVerified)
    }

    /// The epoch frames are checked against (with its neighbours). The owner moves it at every rotation.
    public var epoch: UInt32 { keys.current.epoch }

    public mutating func setEpoch(_ epoch: UInt32) {
        let old = keys.current.epoch
        guard epoch != old else { return }
        keys.advance(to: epoch, apiKey: codec.apiKeyMaterial)
        copiedAhead = nil
        let ring = keys
        verified.removeAll(keepingEpochs: { ring.accepts(epoch: $0) })
        copyVerified(from: old, to: keys.current, evicting: true)
    }

    /// The owner's clock may be wrong (the kernel does not say it is synchronised): chunks that fail
    /// authentication are searched for under the epochs ahead of ours (`EpochSearch`), and messages
    /// authenticated under an epoch ahead are reported by `takeEpochAhead`. Off by default.
    public var searchesAhead: Bool {
        get { search.enabled }
        set {
            search.enabled = newValue
            if !newValue { epochAhead = nil }
        }
    }

    /// The owner follows a peer's clock but does not yet know where in the epoch that clock is: both
    /// neighbour epochs stay accepted (`follow(clock:)` does not narrow them).
    public var phaseUnknown = false

    /// Searches run so far (each over up to three days of epochs ahead).
    public var epochSearches: Int { search.searches }

    /// The latest epoch ahead of ours under which a whole message authenticated since the last call
    /// (only while `searchesAhead`): the owner moves its clock there to follow that peer.
    public mutating func takeEpochAhead() -> UInt32? {
        defer { epochAhead = nil }
        return epochAhead
    }

    /// The owner's clock stepped or was synchronised: the next failing chunk is searched at once.
    public mutating func resetSearch() { search.reset() }

    /// Narrows the accepted epochs to what the wall clock allows (`docs/protocol.md`, "Epochs accepted"):
    /// the previous epoch only in the first `codec.clockSkew` seconds of the current one, the next only in
    /// its last `codec.clockSkew` seconds. A `date` outside the current epoch (the owner has not rotated
    /// yet, or a clock step) accepts both neighbours, as before. Costs a few comparisons; call it with
    /// every sighting.
    public mutating func follow(clock date: Date) {
        let into = date.timeIntervalSince(codec.start(of: keys.current.epoch))
        let length = Double(codec.rotateSeconds), skew = codec.clockSkew
        let inside = into >= 0 && into < length
        let previous = phaseUnknown || !inside || into < skew, next = phaseUnknown || !inside || length - into <= skew
        if previous != keys.acceptsPrevious || next != keys.acceptsNext {
            keys.accept(previous: previous, next: next)
            let ring = keys
            verified.removeAll(keepingEpochs: { ring.accepts(epoch: $0) })
        }
        // While the owner does not know its peer's phase, that peer's next epoch must reach `finish`
        // (its rotation is what shows the phase, `takeEpochAhead`), not be a sighting of a copy.
        if !next || phaseUnknown {
            copiedAhead = nil
        } else if copiedAhead != keys.next.epoch {
            copiedAhead = keys.next.epoch
            copyVerified(from: keys.current.epoch, to: keys.next, evicting: false)
        }
    }

    /// At a rotation every sender re-encodes its messages under the new key: new id, new ciphertext. A
    /// presence frame (one chunk, docs/protocol.md "Rotation") is a sighting only through the verified
    /// cache, so a message we had authenticated was not refreshed until its whole block came round again
    /// under the new key, up to one round, longer than a short lost_after_s: reported lost while its
    /// publisher was on the air. So the messages authenticated under `old` are entered again as the
    /// frames `key` gives them, what their senders send next: at our rotation (evicting, as any new
    /// entry), and in the last `clockSkew` seconds before it for senders whose clock is ahead (only into
    /// free room, most recently seen first: a speculative copy never pushes out what is on the air now).
    private mutating func copyVerified(from old: UInt32, to key: EpochKey, evicting: Bool) {
        let sources = verified.entries.filter { $0.value.epoch == old }.sorted { $0.value.lastUsed > $1.value.lastUsed }
        for (cached, entry) in sources {
            guard let body = try? FrameCodec.body(of: entry.message, medium: cached.medium) else { continue }
            guard verified.enter(entry.message, body: body, key: key, medium: cached.medium, now: entry.lastUsed,
                                 copy: true, evicting: evicting) else { return }
        }
    }

    /// Partial messages held right now (at most `limits.maxPartials`).
    public var partialCount: Int { partials.count }
    /// Verified messages cached right now (at most `limits.maxVerified`).
    public var verifiedCount: Int { verified.entries.count }

    /// Ingests a BLE manufacturer-specific data field (company id first, as in the AD structure) when
    /// `source.medium == .ble`, or an audio payload (the frame itself) when `.audio`.
    @inlinable
    public mutating func ingest(_ frame: some Collection<UInt8>, source: SourceID, now: ContinuousClock.Instant) -> FrameOutcome {
        if let outcome = frame.withContiguousStorageIfAvailable({ ingest(buffer: $0, source: source, now: now) }) {
            return outcome
        }
        return Array(frame).withUnsafeBufferPointer { ingest(buffer: $0, source: source, now: now) }
    }

    /// Walks the AD structures of a whole advert and ingests the first manufacturer-specific data that
    /// is ours. Malformed AD (a length running past the end) ends the walk.
    public mutating func ingest(advertisingData ad: UnsafeBufferPointer<UInt8>, source: SourceID, now: ContinuousClock.Instant) -> FrameOutcome {
        var i = 0
        while i < ad.count {
            let length = Int(ad[i])
            guard length > 0, i + 1 + length <= ad.count else { return .notOurs }
            if ad[i + 1] == FrameFormat.manufacturerSpecificType {
                let data = UnsafeBufferPointer(rebasing: ad[(i + 2)..<(i + 1 + length)])
                let outcome = ingest(buffer: data, source: source, now: now)
                if outcome != .notOurs { return outcome }
            }
            i += 1 + length
        }
        return .notOurs
    }

    public mutating func ingest(buffer: UnsafeBufferPointer<UInt8>, source: SourceID, now: ContinuousClock.Instant) -> FrameOutcome {
        var frame = buffer
        if source.medium == .ble {
            guard frame.count >= 3, frame[0] == FrameFormat.companyID.0, frame[1] == FrameFormat.companyID.1 else { return .notOurs }
            frame = UnsafeBufferPointer(rebasing: frame[2...])
        }
        guard let kind = frame.first else { return .notOurs }
        switch kind {
        case FrameFormat.messageKind:
            return count(chunk(frame, source: source, now: now))
        case FrameFormat.subscriberBeaconKind:
            guard frame.count == FrameFormat.subscriberBeaconBytes else { return count(.dropped(.malformedChunk)) }
            var id: UInt64 = 0
            for i in 1..<FrameFormat.subscriberBeaconBytes { id = id << 8 | UInt64(frame[i]) }
            return count(.subscriberBeacon(SubscriberBeaconID(rawValue: id)))
        default:
            return .notOurs
        }
    }

    /// Throws away partial messages older than the timeout; returns how many. Ingesting also does this
    /// for the message it touches, so calling it is only needed to free memory sooner.
    @discardableResult
    public mutating func expire(now: ContinuousClock.Instant) -> Int {
        let expired = partials.expire(now: now, timeout: limits.timeout)
        counters.timedOut += expired
        return expired
    }

    private mutating func count(_ outcome: FrameOutcome) -> FrameOutcome {
        switch outcome {
        case .notOurs: break
        case .incomplete: counters.incomplete += 1
        case .message: counters.messages += 1
        case .subscriberBeacon: counters.subscriberBeacons += 1
        case .dropped(let reason): counters.dropped[reason, default: 0] += 1
        }
        return outcome
    }

    private mutating func chunk(_ frame: UnsafeBufferPointer<UInt8>, source: SourceID, now: ContinuousClock.Instant) -> FrameOutcome {
        let medium = source.medium
        guard frame.count > FrameFormat.chunkHeaderBytes else { return .dropped(.truncated) }
        let sequence = frame[1]
        let index = Int(sequence >> 4), last = Int(sequence & 0x0F)
        guard index <= last else { return .dropped(.malformedChunk) }
        guard last < medium.maxChunks else { return .dropped(.tooManyChunks) }
        let data = UnsafeBufferPointer(rebasing: frame[FrameFormat.chunkHeaderBytes...])
        guard data.count <= medium.chunkCapacity else { return .dropped(.chunkTooLong) }
        guard index == last || data.count == medium.chunkCapacity else { return .dropped(.truncated) }
        var id: UInt32 = 0
        for i in 2..<(2 + FrameFormat.idBytes) { id = id << 8 | UInt32(frame[i]) }
        let tag = UInt16(frame[2 + FrameFormat.idBytes]) << 8 | UInt16(frame[3 + FrameFormat.idBytes])

        if let message = verified.lookup(id: id, chunk: index, lastIndex: last, data: data, tag: tag, medium: medium, now: now) {
            return .message(message)
        }
        // Every chunk is authenticated on its own before anything is stored: without the key, nothing
        // reaches the partial-message slots (docs/protocol.md, "Reassembly").
        let ciphertext = UnsafeRawBufferPointer(data)
        guard let key = keys.key(sequence: sequence, id: id, ciphertext: ciphertext, tag: tag)
            ?? search.key(sequence: sequence, id: id, ciphertext: ciphertext, tag: tag, base: keys.current.epoch,
                          from: keys.acceptsNext ? 2 : 1, apiKey: codec.apiKeyMaterial, now: now)
        else {
            return .dropped(.authenticationFailed)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: data.count) { plain in
            _ = plain.initialize(fromContentsOf: data)
            key.applyKeystream(plain, id: id, offset: index * medium.chunkCapacity)
            return store(UnsafeBufferPointer(plain), index: index, last: last, id: id, key: key, source: source, now: now)
        }
    }

    /// Stores an authenticated, decrypted chunk; completes the message when it was the missing one.
    private mutating func store(_ data: UnsafeBufferPointer<UInt8>, index: Int, last: Int, id: UInt32, key: EpochKey,
                                source: SourceID, now: ContinuousClock.Instant) -> FrameOutcome {
        let medium = source.medium
        if index == 0, let problem = Self.checkDeclaredLengths(data, chunks: last + 1, medium: medium) {
            return .dropped(problem)
        }
        if last == 0 { return finish(Self.authenticate(body: data, id: id, key: key), id: id, key: key, medium: medium, now: now) }

        let partialKey = PartialTable.Key(source: source, id: UInt64(id))
        var slot: Int
        if let existing = partials.slot(for: partialKey) {
            slot = existing
            if let started = partials.slots[slot].started, now - started >= limits.timeout {
                partials.release(slot)
                counters.timedOut += 1
                slot = allocate(partialKey, medium: medium, last: last, epoch: key.epoch, now: now)
            } else if Int(partials.slots[slot].lastIndex) != last || partials.slots[slot].epoch != key.epoch {
                partials.release(slot)
                return .dropped(.conflictingChunk)
            } else if partials.slots[slot].received & (1 << UInt16(index)) != 0 {
                if partials.holds(data, chunk: index, slot: slot) { return .incomplete }
                partials.release(slot)
                return .dropped(.conflictingChunk)
            }
        } else {
            slot = allocate(partialKey, medium: medium, last: last, epoch: key.epoch, now: now)
        }
        partials.store(data, chunk: index, slot: slot)
        guard partials.isComplete(slot) else { return .incomplete }
        let outcome = partials.withBody(slot: slot) { body in Self.authenticate(body: body, id: id, key: key) }
        partials.release(slot)
        return finish(outcome, id: id, key: key, medium: medium, now: now)
    }

    private mutating func allocate(_ key: PartialTable.Key, medium: Medium, last: Int, epoch: UInt32, now: ContinuousClock.Instant) -> Int {
        let (slot, evicted) = partials.allocate(key, medium: medium, lastIndex: UInt8(last), epoch: epoch, now: now)
        if let evicted, let started = evicted.started {
            if now - started >= limits.timeout { counters.timedOut += 1 } else { counters.evicted += 1 }
        }
        return slot
    }

    /// Remembers an authenticated message with its frames' bytes (ciphertext and chunk tags), so that
    /// its later chunks are sightings without decryption or HMAC; and, as `copyVerified` does for the
    /// cache, as the frames of the epoch its sender moves to next while that epoch's are accepted too:
    /// the current one for a sender still behind us after our rotation, the next one in the last
    /// `clockSkew` seconds before it.
    private mutating func finish(_ result: Authentication, id: UInt32, key: EpochKey, medium: Medium, now: ContinuousClock.Instant) -> FrameOutcome {
        switch result {
        case .failed(let reason):
            return .dropped(reason)
        case .verified(let message, let body):
            verified.enter(message, body: body, id: id, key: key, medium: medium, now: now)
            // Ahead, and found by the search (or while the owner does not know its peer's phase): a peer
            // within the epoch window is not one to follow.
            if search.enabled, key.epoch > keys.current.epoch, phaseUnknown || !keys.accepts(epoch: key.epoch) {
                epochAhead = max(epochAhead ?? 0, key.epoch)
            }
            if key.epoch == keys.previous?.epoch {
                verified.enter(message, body: body, key: keys.current, medium: medium, now: now, copy: true)
            } else if key.epoch == keys.current.epoch, copiedAhead == keys.next.epoch {
                verified.enter(message, body: body, key: keys.next, medium: medium, now: now, copy: true, evicting: false)
            }
            return .message(message)
        }
    }

    private enum Authentication {
        case verified(Message, [UInt8])
        case failed(DropReason)
    }

    /// Cheap checks of chunk 0 before anything is stored: namespace and type lengths fit the protocol
    /// and the chunks the frame declares.
    private static func checkDeclaredLengths(_ data: UnsafeBufferPointer<UInt8>, chunks: Int, medium: Medium) -> DropReason? {
        guard data.count >= FrameFormat.bodyHeaderBytes else { return .malformedBody }
        let ns = Int(data[0]), type = Int(data[1])
        guard ns <= Message.maxNamespaceBytes, type <= Message.maxTypeBytes else { return .declaredLengthTooLarge }
        guard FrameFormat.bodyHeaderBytes + ns + type <= chunks * medium.chunkCapacity else { return .declaredLengthTooLarge }
        return nil
    }

    /// Parses the decrypted body and checks that it hashes to its message id under the key that
    /// authenticated its chunks: that binds the chunks together and authenticates the whole body.
    private static func authenticate(body: UnsafeBufferPointer<UInt8>, id: UInt32, key: EpochKey) -> Authentication {
        guard body.count >= FrameFormat.bodyHeaderBytes else { return .failed(.malformedBody) }
        let ns = Int(body[0]), type = Int(body[1])
        guard ns <= Message.maxNamespaceBytes, type <= Message.maxTypeBytes else { return .failed(.declaredLengthTooLarge) }
        let contentStart = FrameFormat.bodyHeaderBytes + ns + type
        guard contentStart <= body.count else { return .failed(.malformedBody) }
        guard key.messageID(body: UnsafeRawBufferPointer(body)) == id else { return .failed(.authenticationFailed) }
        guard let namespace = String(validating: body[2..<(2 + ns)], as: UTF8.self),
              let typeName = String(validating: body[(2 + ns)..<contentStart], as: UTF8.self)
        else { return .failed(.malformedBody) }
        // What PUB and the config refuse is refused from the air too: an empty or slashed name would
        // make a topic like `found/livingroom/`. Checked once per message, not per sighting.
        guard Message.nameProblem(namespace, isNamespace: true) == nil, Message.nameProblem(typeName, isNamespace: false) == nil
        else { return .failed(.invalidName) }
        let message = Message(namespace: namespace, type: typeName, content: Array(body[contentStart...]))
        return .verified(message, Array(body))
    }
}
