/// Finds peers whose clock is ahead of ours (docs/protocol.md, "Clocks that disagree").
///
/// A Pi has no RTC: it boots at its last shutdown's time (fake-hwclock) or at 1970, and its frames and
/// ours authenticate under different epochs' keys until NTP syncs, which a box with no network never
/// does. A chunk that parses but fails authentication under the accepted epochs may be such a peer's:
/// this tries it under the epochs *ahead* of ours, `base + 1 … base + range` (from `base + 2` while the
/// ring accepts the next epoch), and the reassembler authenticates the whole message under the key that matched. The owner
/// then moves its epoch there (`Reassembler.takeEpochAhead`): the gateways of a deployment follow the
/// latest clock among them.
///
/// Only epochs ahead: a recording of genuine frames can only be of epochs that have been, so no
/// replay can move a receiver, and none is accepted that the epoch window would refuse (the search
/// never looks back). Only a key holder whose clock is ahead moves others.
///
/// Bounded work: one search (up to `range` key derivations) per `interval`, which doubles after each
/// search that finds nothing (up to `maxInterval`), so frames of another deployment (another api_key)
/// on the same air cost a search every `maxInterval` at most. Between searches the latest
/// `maxPending` distinct failing chunks are kept (≤ 8 × 132 bytes) and each search tries them all
/// under every key it derives: on a busy air (other deployments) a search is not spent on one frame
/// that happens to be a stranger's.
public struct EpochSearch: Sendable {
    public struct Policy: Sendable {
        /// Epochs searched ahead of ours.
        public var range: Int
        var firstInterval: Duration = .seconds(1)
        var maxInterval: Duration = .seconds(16)
        /// How long the key a search found stays tried for the message's other chunks.
        var candidateLifetime: Duration = .seconds(60)

        /// Three days' worth of epochs (`horizonSeconds`), at least 2 and at most `maxRange`: a short
        /// `rotate_s` shortens the horizon instead of making a search cost more (`rotate_s = 2` would be
        /// 129,600 key derivations, seconds of the manager's time, in which nothing else is heard).
        public init(rotateSeconds: Int) {
            range = max(2, min(Self.maxRange, (Self.horizonSeconds + rotateSeconds - 1) / max(1, rotateSeconds)))
        }

        public static let maxRange = 432

        /// How far ahead a peer's clock may be and still be found: 3 days.
        public static let horizonSeconds = 3 * 24 * 3600
    }

    let policy: Policy
    /// Off unless the owner turns it on (its clock may be wrong); tests of the epoch window keep it off.
    var enabled = false
    private(set) var candidate: EpochKey?
    private var candidateUntil: ContinuousClock.Instant?
    private var nextSearch: ContinuousClock.Instant?
    private var interval: Duration
    /// Failing chunks heard since the last search (the latest `maxPending` distinct ones).
    private var pending: [Pending] = []
    private var nextPending = 0
    static let maxPending = 8

    private struct Pending: Sendable {
        var sequence: UInt8
        var id: UInt32
        var tag: UInt16
        var ciphertext: [UInt8]
    }
    /// Searches run (each over up to `policy.range` epochs), for `GET stats` and tests.
    private(set) var searches = 0

    init(policy: Policy) {
        self.policy = policy
        interval = policy.firstInterval
    }

    /// The key, of an epoch ahead of `base` by 2 or more, under which `tag` checks; nil when the search
    /// is off, not due, or finds nothing. Tries the candidate of an earlier search first.
    mutating func key(sequence: UInt8, id: UInt32, ciphertext: UnsafeRawBufferPointer, tag: UInt16, base: UInt32,
                      from first: UInt32 = 2, apiKey: [UInt8], now: ContinuousClock.Instant) -> EpochKey? {
        guard enabled else { return nil }
        if let candidate, let until = candidateUntil {
            if now < until, candidate.epoch >= base &+ first {
                if candidate.chunkTag(sequence: sequence, id: id, ciphertext: ciphertext) == tag { return candidate }
            } else {
                clearCandidate()
            }
        }
        if let nextSearch, now < nextSearch {
            remember(sequence: sequence, id: id, ciphertext: ciphertext, tag: tag)
            return nil
        }
        searches += 1
        defer { pending.removeAll(keepingCapacity: true) }
        var offset = first
        while offset <= UInt32(policy.range) {
            let epoch = base &+ offset
            guard epoch > base else { break }   // the last epoch a UInt32 holds: nothing beyond
            let key = EpochKey(apiKey: apiKey, epoch: epoch)
            // 16 bits checked: one in 65,536 random chunks matches each epoch; the reassembler checks
            // the whole message (32 more bits) before anything is found.
            let matched = key.chunkTag(sequence: sequence, id: id, ciphertext: ciphertext) == tag
            if matched || pending.contains(where: { p in
                p.ciphertext.withUnsafeBytes { key.chunkTag(sequence: p.sequence, id: p.id, ciphertext: $0) } == p.tag
            }) {
                // A pending chunk's key waits for that chunk's sender to repeat it (senders cycle their frames).
                candidate = key
                candidateUntil = now + policy.candidateLifetime
                interval = policy.firstInterval
                nextSearch = now + interval
                return matched ? key : nil
            }
            offset += 1
        }
        nextSearch = now + interval
        interval = min(interval * 2, policy.maxInterval)
        return nil
    }

    private mutating func remember(sequence: UInt8, id: UInt32, ciphertext: UnsafeRawBufferPointer, tag: UInt16) {
        guard !pending.contains(where: { $0.id == id && $0.sequence == sequence && $0.tag == tag }) else { return }
        let chunk = Pending(sequence: sequence, id: id, tag: tag, ciphertext: Array(ciphertext))
        if pending.count < Self.maxPending {
            pending.append(chunk)
        } else {
            pending[nextPending] = chunk
            nextPending = (nextPending + 1) % Self.maxPending
        }
    }

    /// The clock moved (a step, a sync, or the owner followed a peer): search again soon.
    mutating func reset() {
        clearCandidate()
        pending.removeAll()
        nextSearch = nil
        interval = policy.firstInterval
    }

    private mutating func clearCandidate() {
        candidate = nil
        candidateUntil = nil
    }
}
