import Glibc
import SystemCall
import Testing

/// The one place that loops on EINTR, with calls that fail the way the kernel makes them fail
/// (errno set, -1 returned): a signal during the call, a full non-blocking socket, a real error.
@Suite struct SystemCallTests {
    /// A call that fails with the given errnos first, then returns `result`.
    final class Script {
        var failures: [Int32]
        let result: Int
        var calls = 0
        init(_ failures: [Int32], then result: Int) { self.failures = failures; self.result = result }
        func call() -> Int {
            calls += 1
            guard !failures.isEmpty else { return result }
            errno = failures.removeFirst()
            return -1
        }
    }

    @Test func interruptedCallsAreRetriedAndOtherErrorsThrownWithTheirErrno() throws {
        let interrupted = Script([EINTR, EINTR], then: 7)
        #expect(try SystemCall.retrying { interrupted.call() } == 7)
        #expect(interrupted.calls == 3)
        let full = Script([EINTR, ENOSPC], then: 0)
        #expect(throws: Errno(rawValue: ENOSPC)) { try SystemCall.retrying { full.call() } }
        #expect(Errno(rawValue: ENOSPC).description == "No space left on device (errno 28)")
    }

    /// A library call that fails without setting errno (libgpiod v1 can) must not report the errno
    /// an earlier call left behind.
    @Test func aFailureThatSetsNoErrnoIsErrnoZeroNotAStaleOne() {
        errno = EBADF
        #expect(throws: Errno(rawValue: 0)) { try SystemCall.retrying { Int32(-1) } }
        errno = EBADF
        #expect(throws: Errno(rawValue: 0)) { try SystemCall.nonNull { nil as OpaquePointer? } }
    }

    @Test func aNULLReturningCallThrowsItsErrnoAndPassesAPointerThrough() throws {
        #expect(throws: Errno(rawValue: ENOMEM)) {
            try SystemCall.nonNull { () -> OpaquePointer? in
                errno = ENOMEM
                return nil
            }
        }
        let box = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        defer { box.deallocate() }
        #expect(try SystemCall.nonNull { box } == box)
    }

    @Test func nonBlockingIOTurnsEAGAINIntoAValue() throws {
        let interrupted = Script([EINTR], then: 5), full = Script([EAGAIN], then: 5), reset = Script([ECONNRESET], then: 5)
        #expect(try SystemCall.nonBlocking { interrupted.call() } == .done(5))
        #expect(try SystemCall.nonBlocking { full.call() } == .wouldBlock)
        #expect(throws: Errno(rawValue: ECONNRESET)) { try SystemCall.nonBlocking { reset.call() } }
    }

    @Test func writeAllResumesPartialWritesAndStopsWhenTheDescriptorIsFull() throws {
        let bytes: [UInt8] = Array(0..<10)
        var chunks: [[UInt8]] = []
        var script: [Int32?] = [nil, EINTR, nil, EAGAIN]   // nil: take up to 3 bytes
        let written = try bytes.withUnsafeBytes { raw in
            try SystemCall.writeAll(raw) { pointer, count in
                if let failure = script.isEmpty ? nil : script.removeFirst() {
                    errno = failure
                    return -1
                }
                let taken = min(3, count)
                chunks.append(Array(UnsafeRawBufferPointer(start: pointer, count: taken)))
                return taken
            }
        }
        #expect(written == 6, "two writes of 3, then EAGAIN")
        #expect(chunks == [[0, 1, 2], [3, 4, 5]])
        var all: [[UInt8]] = []
        let complete = try bytes.withUnsafeBytes { raw in
            try SystemCall.writeAll(raw) { pointer, count in
                all.append(Array(UnsafeRawBufferPointer(start: pointer, count: min(4, count))))
                return min(4, count)
            }
        }
        #expect(complete == 10)
        #expect(all.flatMap { $0 } == bytes)
    }

    @Test func aStringIsWrittenWholeAsUTF8AndABadDescriptorThrows() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let text = "journal line é\n"
        #expect(try SystemCall.writeAll(text, to: ends[1]) == text.utf8.count)
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(ends[0], &buffer, buffer.count)
        #expect(Array(buffer.prefix(max(0, n))) == Array(text.utf8))
        #expect(throws: Errno(rawValue: EBADF)) { try SystemCall.writeAll(text, to: -1) }
    }
}
