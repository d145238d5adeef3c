/// Which configured identity, if any, a resolvable private address belongs to (docs/identities.md).
///
/// A new address costs one AES-128 per identity, once: the answer, an identity or none, is cached.
/// The cache is a fixed number of addresses; when it is full the oldest answer makes room, so a
/// flood of fresh addresses costs CPU in proportion to its rate and no memory beyond the cache.
/// A value with one owner (the air ingest); the key ring it holds is shared by copies.
public struct IdentityResolver: Sendable {
    public let ring: AESKeyRing
    /// Address → identity index, or -1 for none.
    private var cache: [UInt64: Int32]
    /// The cached addresses in the order they came: the oldest is at `next` once the ring is full.
    private var order: [UInt64]
    private var next = 0
    public let capacity: Int

    public struct Counters: Sendable, Equatable {
        /// AES-128 encryptions done (one per identity tried).
        public var resolutions = 0
        public var cacheHits = 0
        public var cacheMisses = 0
        /// New addresses that resolved to an identity.
        public var resolved = 0

        public init() {}
    }
    public private(set) var counters = Counters()

    public static let defaultCapacity = 4096

    public init(keys: [IdentityResolvingKey], capacity: Int = defaultCapacity) throws(CryptoError) {
        ring = try AESKeyRing(keys: keys.map(\.bytes))
        self.capacity = max(1, capacity)
        cache = Dictionary(minimumCapacity: self.capacity)
        order = []
        order.reserveCapacity(self.capacity)
    }

    public var cachedAddresses: Int { cache.count }

    /// The index of the identity whose key resolves `address`, or nil. Only for resolvable private
    /// addresses (`PrivateAddress.isResolvable`).
    public mutating func identity(of address: BDAddress) -> Int? {
        let raw = address.rawValue
        if let known = cache[raw] {
            counters.cacheHits += 1
            return known < 0 ? nil : Int(known)
        }
        counters.cacheMisses += 1
        let index = PrivateAddress.resolve(address, with: ring, tried: &counters.resolutions)
        if index != nil { counters.resolved += 1 }
        remember(raw, Int32(index ?? -1))
        return index
    }

    private mutating func remember(_ raw: UInt64, _ answer: Int32) {
        if order.count < capacity {
            order.append(raw)
        } else {
            cache[order[next]] = nil
            order[next] = raw
            next = (next + 1) % capacity
        }
        cache[raw] = answer
    }
}
