/// The compact form the socket broker and the MQTT bridge keep a retained event's text in
/// (docs/footprint-found.md): lossless, so a replay is byte for byte the event
/// that was set.
///
/// A found set at its limit has one retained `found/…` event per entry, and most of an event's bytes
/// repeat: its JSON member names are every event's, the iBeacon UUID is in the key, the type and the
/// `uuid` member, `last_seen` often equals `first_seen`. So a repeat of 5 bytes or more, within the
/// event or in `primer` (a typical found event), is kept as a copy: 3 or 4 bytes saying how far back
/// and how long. Bytes:
///   0x20…0xFF  itself;
///   0x00 b     the byte b (a control byte in the input, which valid JSON never has raw);
///   0x01…0x1E d₁ d₀       copy 4 + the first byte's value bytes from d = d₁·256 + d₀ back;
///   0x1F d₁ d₀ n         copy 35 + n bytes from d back.
/// Distances reach into the primer, which precedes every event's text; nothing else is shared.
public enum RetainedCodec {
    static let primer = Array((#"found/ibeacon/eddystone/url/uid/tlm/$SYS/{"namespace":"ibeacon","type":"","content":"","text":null,"#
        + #""medium":"ble","rssi":null,"first_seen":"2026-01-01T00:00:00.000Z","last_seen":"2026-01-01T00:00:00.000Z","#
        + #""rssi_avg":null,"distance_m":null,"uuid":"","major":0,"minor":0,"tx_power":-59,"namespace_id":"","instance_id":"","#
        + #""url":"https://","tlm":{"battery_mv":null,"temperature_c":null,"adv_count":0,"uptime_s":0.0},"reason":"","#
        + #""medium":"audio","rssi":-00.0,"#).utf8)

    private static let shortest = 5, longestShort = 34, longest = 35 + 255
    private static let hashBits = 10

    /// The positions of the primer's 4-byte sequences, shared by every encoding.
    private static let primerTable: [Int32] = {
        var table = [Int32](repeating: -1, count: 1 << hashBits)
        for i in 0..<max(0, primer.count - 3) { table[hash(primer, i)] = Int32(i) }
        return table
    }()

    private static func hash<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, _ i: Int) -> Int where Bytes.Index == Int {
        hash(word: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
    }

    /// The same hash of the four bytes at `i`, read as one little-endian word (the encoder's loop).
    @inline(__always)
    private static func hash(_ history: UnsafeMutableBufferPointer<UInt8>, _ i: Int) -> Int {
        hash(word: UInt32(littleEndian: UnsafeRawPointer(history.baseAddress! + i).loadUnaligned(as: UInt32.self)))
    }

    @inline(__always)
    private static func hash(word: UInt32) -> Int {
        Int((word &* 2_654_435_761) >> UInt32(32 - hashBits))
    }

    /// `segments` encoded one after the other into one array; returns it and where each segment's
    /// encoding ends. A segment's encoding depends only on it and the segments before it, so equal
    /// keys (the first segment) encode to equal bytes. The working buffers are temporary (on the
    /// stack for an event's size): the one allocation that stays is the result, of its exact size,
    /// so retained events are not interleaved with freed scratch on the heap.
    /// `extra`: room left in the array for bytes the caller appends (no reallocation for them).
    public static func encode(_ segments: [Substring.UTF8View], reserving extra: Int = 0) -> (bytes: [UInt8], ends: [Int]) {
        let text = segments.reduce(0) { $0 + $1.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: primer.count + text) { history in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 1 << hashBits) { table in
                // At worst every byte is a control byte, escaped: two bytes each.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * text + 1) { out in
                    encode(segments, history: history, table: table, out: out, extra: extra)
                }
            }
        }
    }

    private static func encode(_ segments: [Substring.UTF8View], history: UnsafeMutableBufferPointer<UInt8>,
                               table: UnsafeMutableBufferPointer<Int32>, out: UnsafeMutableBufferPointer<UInt8>,
                               extra: Int) -> (bytes: [UInt8], ends: [Int]) {
        _ = history.initialize(fromContentsOf: primer)
        _ = table.initialize(fromContentsOf: primerTable)
        var count = primer.count, written = 0
        func emit(_ byte: UInt8) {
            out[written] = byte
            written += 1
        }
        var ends = [Int]()
        ends.reserveCapacity(segments.count)
        var indexed = max(0, primer.count - 3)   // history positions already in `table`
        for segment in segments {
            let start = count
            // Copied whole when the text is contiguous (a native string): iterating a substring's
            // UTF-8 view costs tens of instructions a byte.
            let copied = segment.withContiguousStorageIfAvailable { bytes in
                UnsafeMutableBufferPointer(rebasing: history[count...]).initialize(fromContentsOf: bytes)
            }
            if let copied {
                count += copied
            } else {
                for byte in segment {
                    history[count] = byte
                    count += 1
                }
            }
            var i = start
            while i < count {
                // Index every position up to i whose 4 bytes lie in the history so far.
                while indexed < i && indexed + 3 < count {
                    table[hash(history, indexed)] = Int32(indexed)
                    indexed += 1
                }
                var length = 0, distance = 0
                if i + 3 < count {
                    let candidate = Int(table[hash(history, i)])
                    if candidate >= 0, i - candidate <= 0xFFFF {
                        (length, distance) = (matching(history, candidate, i, limit: min(count - i, longest)), i - candidate)
                    }
                }
                if length >= shortest {
                    emit(length <= longestShort ? UInt8(length - 4) : 0x1F)
                    emit(UInt8(distance >> 8))
                    emit(UInt8(distance & 0xFF))
                    if length > longestShort { emit(UInt8(length - 35)) }
                    i += length
                } else {
                    if history[i] < 0x20 { emit(0) }
                    emit(history[i])
                    i += 1
                }
            }
            ends.append(written)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(written + extra)
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: out[..<written]))
        return (bytes, ends)
    }

    /// How many bytes from `from` equal those from `at` (`from` < `at`), up to `limit`: eight at a time
    /// (most of an event's bytes are in such runs; a byte at a time cost most of the encoding).
    @inline(__always)
    private static func matching(_ history: UnsafeMutableBufferPointer<UInt8>, _ from: Int, _ at: Int, limit: Int) -> Int {
        let bytes = UnsafeRawPointer(history.baseAddress!)
        var n = 0
        while n + 8 <= limit {
            let a = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: from + n, as: UInt64.self))
            let b = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at + n, as: UInt64.self))
            if a != b { return n + (a ^ b).trailingZeroBitCount / 8 }
            n += 8
        }
        while n < limit && history[from + n] == history[at + n] { n += 1 }
        return n
    }

    /// The text `bytes` encodes (all its segments, one after the other).
    public static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var history = primer
        history.reserveCapacity(primer.count + bytes.count * 3)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            switch byte {
            case 0x20...:
                history.append(byte)
                i += 1
            case 0:
                history.append(bytes[i + 1])
                i += 2
            default:
                let distance = Int(bytes[i + 1]) << 8 | Int(bytes[i + 2])
                let length = byte == 0x1F ? 35 + Int(bytes[i + 3]) : 4 + Int(byte)
                i += byte == 0x1F ? 4 : 3
                let from = history.count - distance
                // Byte by byte: a copy may overlap what it produces.
                for k in 0..<length { history.append(history[from + k]) }
            }
        }
        return Array(history[primer.count...])
    }
}
