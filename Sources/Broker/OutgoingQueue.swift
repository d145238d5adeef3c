/// Bytes waiting to be written to one client. Events respect `limit` (they are dropped and counted
/// when it would be exceeded); replies are always kept, because the broker stops reading a client's
/// commands while its queue is above the limit, which bounds replies too.
struct OutgoingQueue {
    let limit: Int
    private var buffer: [UInt8] = []
    private var head = 0

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { buffer.count - head }
    var isEmpty: Bool { head == buffer.count }
    var isAboveLimit: Bool { count >= limit }

    mutating func appendReply(_ line: some Collection<UInt8>) {
        buffer.append(contentsOf: line)
    }

    /// False when the event did not fit and was dropped.
    mutating func appendEvent(_ line: [UInt8]) -> Bool {
        guard count + line.count <= limit else { return false }
        buffer.append(contentsOf: line)
        return true
    }

    /// Writes as much as the socket takes; `write` returns bytes written, or nil when it would block.
    mutating func flush(_ write: (UnsafeRawBufferPointer) throws(SocketBrokerError) -> Int?) throws(SocketBrokerError) {
        while head < buffer.count {
            let start = head
            // withUnsafeBytes rethrows untyped errors, so the typed error travels out as a Result.
            let written = try buffer.withUnsafeBytes { raw in
                Result { () throws(SocketBrokerError) -> Int? in try write(UnsafeRawBufferPointer(rebasing: raw[start...])) }
            }.get()
            guard let written, written > 0 else { break }
            head += written
        }
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            head = 0
        } else if head >= 64 * 1024, head >= buffer.count / 2 {
            buffer.removeFirst(head)
            head = 0
        }
    }
}
