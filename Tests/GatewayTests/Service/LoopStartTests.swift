import Config
import Logging
import Radio
import SystemCall
import Testing
import TestSupport
@testable import Gateway

#if canImport(Glibc)
import Glibc
#endif

/// Issue 38: the gateway's loop has its thread or the gateway does not start; nothing runs its jobs
/// on Swift's pool instead. Serialized: a test counts the process's threads named `gateway`.
@Suite(.serialized) struct LoopStartTests {
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

    /// A start refused after the loop was made (a Pi's GPIO chip that this host has not) stops the
    /// loop's thread again.
    @Test func aStartRefusedAfterTheLoopStartedLeavesNoLoopThread() async throws {
        let directory = "/tmp/nearby-loop-start-\(getpid())"
        defer { _ = try? SystemCall.retrying { rmdir(directory) } }
        let (config, board) = try ConfigFixture.load("""
        api_key = "k"
        board = "rpi4b"
        [socket]
        path = "\(directory)/gateway.sock"
        [state]
        path = "\(directory)/state.json"
        """)
        let before = try Self.threads(named: "gateway")
        let refusal = await #expect(throws: (any Error).self) {
            _ = try await GatewayParts.assemble(config: config, board: board, logLevel: SharedLogLevel(.info),
                                                logger: Logger(label: "loop-start") { _ in SwiftLogNoOpLogHandler() })
        }
        #expect(refusal.map { "\($0)".contains("pinctrl-bcm2711") } == true, "refused for the missing chip")
        #expect(try Self.threads(named: "gateway") == before)
    }

    /// The threads of this process whose name (`comm`) is `name`.
    private static func threads(named name: String) throws -> Int {
        guard let tasks = opendir("/proc/self/task") else { throw Errno(rawValue: errno) }
        defer { closedir(tasks) }
        var count = 0
        while let entry = readdir(tasks) {
            let id = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard id.first?.isNumber == true else { continue }
            let comm = (try? SystemCall.readFile("/proc/self/task/\(id)/comm")) ?? []
            if comm == Array("\(name)\n".utf8) { count += 1 }
        }
        return count
    }
}
