/// One AD structure of an advert (Core Supplement Part A): its type and data, length byte gone.
public struct ADStructure: Sendable, Equatable {
    public var type: UInt8
    public var data: [UInt8]

    public init(type: UInt8, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    public static let flags: UInt8 = 0x01
    public static let incomplete16BitServiceUUIDs: UInt8 = 0x02
    public static let complete16BitServiceUUIDs: UInt8 = 0x03
    public static let shortenedLocalName: UInt8 = 0x08
    public static let completeLocalName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let serviceData16BitUUID: UInt8 = 0x16
    public static let manufacturerSpecificData: UInt8 = 0xFF

    /// The encoded form: length, type, data.
    public var encoded: [UInt8] { [UInt8(truncatingIfNeeded: data.count + 1), type] + data }

    /// Parses a whole advert. A length running past the end, or non-zero bytes after a zero
    /// length, make it malformed: what parsed before is kept, the rest dropped.
    public static func parse<C: Collection<UInt8>>(_ bytes: C) -> (structures: [ADStructure], malformed: Bool) {
        var iterator = ADStructures(ArraySlice(bytes)).makeIterator()
        var structures: [ADStructure] = []
        while let element = iterator.next() {
            structures.append(ADStructure(type: element.type, data: Array(element.data)))
        }
        return (structures, iterator.malformed)
    }
}

/// The AD structures of an advert, walked lazily over the received bytes: the fast path the
/// scanner and the frame decoder use (no allocation per structure).
public struct ADStructures: Sequence, Sendable {
    public struct Element: Sendable, Equatable {
        public var type: UInt8
        public var data: ArraySlice<UInt8>

        @inlinable
        public init(type: UInt8, data: ArraySlice<UInt8>) {
            self.type = type
            self.data = data
        }
    }

    public let bytes: ArraySlice<UInt8>

    @inlinable
    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    public struct Iterator: IteratorProtocol, Sendable {
        @usableFromInline let bytes: ArraySlice<UInt8>
        @usableFromInline var offset: Int
        /// Set once the walk stopped at a lying length or at data after a zero length.
        public var malformed: Bool

        @inlinable
        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            offset = bytes.startIndex
            malformed = false
        }

        @inlinable
        public mutating func next() -> Element? {
            let end = bytes.endIndex
            guard offset < end else { return nil }
            let length = Int(bytes[offset])
            if length == 0 {
                // The rest of an advert after a zero length is padding and must be zeros.
                malformed = bytes[offset..<end].contains { $0 != 0 }
                offset = end
                return nil
            }
            guard length < end - offset else {
                malformed = true
                offset = end
                return nil
            }
            let element = Element(type: bytes[offset + 1], data: bytes[(offset + 2)..<(offset + 1 + length)])
            offset += 1 + length
            return element
        }
    }

    @inlinable
    public func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// True when the whole advert parses: the check the scanner counts drops with.
    @inlinable
    public var isWellFormed: Bool {
        var iterator = makeIterator()
        while iterator.next() != nil {}
        return !iterator.malformed
    }

    /// The data of the first structure of `type`, e.g. manufacturer-specific data.
    @inlinable
    public func first(ofType type: UInt8) -> ArraySlice<UInt8>? {
        for element in self where element.type == type { return element.data }
        return nil
    }
}
