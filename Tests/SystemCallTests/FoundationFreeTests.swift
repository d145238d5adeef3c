import Foundation
import Glibc
import SystemCall
import Synchronization
import Testing

/// The replacements for the Foundation calls the product no longer links (docs/footprint.md) give
/// what Foundation gave: compared with Foundation itself, which the tests may still use.
@Suite struct FoundationFreeTests {
    /// What NSString's lastPathComponent and deletingLastPathComponent give for each (checked against
    /// them once; not called here, as Foundation's path code crashed on a parallel run).
    @Test(arguments: [
        ("/var/lib/nearby-gateway/state.json", "state.json", "/var/lib/nearby-gateway"), ("state.json", "state.json", ""),
        ("/state.json", "state.json", "/"), ("/", "/", "/"), ("", "", ""), ("a/b/", "b", "a"), ("/a//b", "b", "/a"),
        ("./x", "x", "."), ("../x/y", "y", "../x"), ("/a/b/c/", "c", "/a/b"),
    ])
    func pathTextSplitsLikeNSString(path: String, last: String, parent: String) {
        #expect(PathText.lastComponent(path) == last)
        #expect(PathText.parent(path) == parent)
    }

    @Test func cFormatFormatsLikeStringFormat() {
        #expect(String(cFormat: "%.1f", -72.25) == String(format: "%.1f", -72.25))
        #expect(String(cFormat: "%02x%02x", UInt8(7), UInt8(0xAB)) == String(format: "%02x%02x", UInt8(7), UInt8(0xAB)))
        #expect(String(cFormat: "U+%04X", UInt32(0xFFFE)) == String(format: "U+%04X", UInt32(0xFFFE)))
        #expect(String(cFormat: "%+.0f dB %8.3f s", -3.4, 12.0) == String(format: "%+.0f dB %8.3f s", -3.4, 12.0))
        #expect(String(cFormat: "%3d bytes", 5) == "  5 bytes")
        #expect(String(cFormat: "") == "")
    }

    @Test func readFileReadsEveryByteAndNamesTheErrno() throws {
        let path = "/tmp/nearby-foundation-free-\(getpid())"
        let bytes = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        #expect(try SystemCall.readFile(path) == bytes)
        #expect(throws: Errno(rawValue: ENOENT)) { try SystemCall.readFile(path + "-missing") }
    }

    @Test func osThreadRunsTheBodyOnANamedThreadOfItsOwn() async throws {
        let caller = pthread_self()
        let seen = Mutex<(name: String, other: Bool)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        try OSThread.start(name: "a-long-thread-name-cut") {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.withLock { $0 = (comm.trimmingCharacters(in: .newlines), pthread_equal(pthread_self(), caller) == 0) }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(seen.withLock { $0?.name } == "a-long-thread-n")
        #expect(seen.withLock { $0?.other } == true)
    }
}
