import Radio
import SystemCall
import Testing
@testable import Gateway

#if canImport(Glibc)
import Glibc
#endif

/// Issue 38: the gateway's loop has its thread or the gateway does not start; nothing runs its jobs
/// on Swift's pool instead.
@Suite struct LoopStartTests {
    @Test func aLoopWithoutItsWakePipeRefusesTheStartNamingPipeAndErrno() {
        let error = #expect(throws: RadioError.self) {
            _ = try GatewayParts.startLoop(wakePipe: { () throws(Errno) in throw Errno(rawValue: EMFILE) })
        }
        #expect(error?.device == "event loop gateway")
        #expect(error?.operation == "pipe")
        #expect(error?.errno?.rawValue == EMFILE)
        #expect(error?.description == "event loop gateway: pipe: Too many open files (errno 24)")
    }

    /// Its work runs on the thread `top -H` shows as `gateway` (docs/architecture.md's thread table).
    @Test func theLoopsWorkRunsOnTheThreadNamedGateway() async throws {
        let loop = try GatewayParts.startLoop()
        defer { loop.shutdown() }
        let (onLoop, comm) = await withCheckedContinuation { (done: CheckedContinuation<(Bool, [UInt8]), Never>) in
            loop.execute { done.resume(returning: (loop.isCurrent, (try? SystemCall.readFile("/proc/thread-self/comm")) ?? [])) }
        }
        #expect(onLoop)
        #expect(comm == Array("gateway\n".utf8))
        #expect(!loop.isCurrent)
    }
}
