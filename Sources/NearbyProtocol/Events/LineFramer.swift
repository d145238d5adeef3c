/// Splits a client's byte stream into lines, with a hard bound on how much it keeps.
///
/// A line is at most `maxLineBytes` bytes including its `\n` (and an optional `\r` before it). A
/// longer line is reported once as `.tooLong` and then skipped up to its `\n`, so memory never grows
/// with a client that sends no newline.
public struct LineFramer: Sendable {
    public enum Output: Equatable, Sendable {
        case line([UInt8])   // without the terminator
        case tooLong
    }

    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var head = 0            // bytes before head are consumed
    private var scanned = 0         // bytes from head up to here hold no `\n`
    private var discarding = false  // inside a too-long line already reported

    public init(maxLineBytes: Int = 4096) {
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes received and not yet returned as a line.
    public var bufferedBytes: Int { buffer.count - head }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if head > 0, head >= buffer.count / 2 {   // compact lazily: amortised O(1) per byte
            buffer.removeFirst(head)
            head = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func next() -> Output? {
        while true {
            let start = head + scanned
            guard let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                scanned = buffer.count - head
                if discarding {
                    dropAll()
                    return nil
                }
                if bufferedBytes >= maxLineBytes {
                    // Without a `\n` in the first maxLineBytes bytes the line can only be too long.
                    dropAll()
                    discarding = true
                    return .tooLong
                }
                return nil
            }
            let lineStart = head
            head = newline + 1
            scanned = 0
            if discarding {
                discarding = false
                continue
            }
            if newline + 1 - lineStart > maxLineBytes { return .tooLong }
            var end = newline
            if end > lineStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            return .line(Array(buffer[lineStart..<end]))
        }
    }

    private mutating func dropAll() {
        buffer.removeAll(keepingCapacity: true)
        head = 0
        scanned = 0
    }
}
