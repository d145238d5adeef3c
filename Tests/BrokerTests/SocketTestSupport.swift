import Foundation
import LineClient
import Logging
import Synchronization
import Testing
@testable import Broker

/// Runs blocking socket calls on their own thread: Swift's cooperative pool has two threads here and
/// the broker's handler tasks need them.
func socketOffPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// How long a test waits for the next line before giving up: a deadline, not a measurement. Generous,
/// because the broker's handler runs on Swift's cooperative pool (2 threads here), which the
/// CPU-bound modem tests running in parallel can hold for tens of seconds on a busy machine (a
/// 20 s bound failed `tenThousandCommandsInOneWrite` once that way, with 0 replies).
let socketTestTimeout: Duration = .seconds(120)

/// A test's connection: every read waits with a deadline, never a sleep.
struct SocketTestConnection: Sendable {
    let client: SocketLineClient

    static func open(_ path: String) async throws -> SocketTestConnection {
        SocketTestConnection(client: try await socketOffPool { try SocketLineClient(path: path) })
    }

    func send(_ text: String) async throws {
        let client = client
        try await socketOffPool { try client.send(Array(text.utf8)) }
    }

    func send(bytes: [UInt8]) async throws {
        let client = client
        try await socketOffPool { try client.send(bytes) }
    }

    /// Starts writing `bytes` on a thread of its own at once, for a test that reads while it writes. A
    /// `Task` wrapping `send` would first wait for Swift's pool: under qemu-aarch64 beside the host's
    /// stages nothing was written in `tenThousandCommandsInOneWrite`'s 120 s (0 replies), while the
    /// reading thread counted its deadline.
    func startSending(bytes: [UInt8]) -> BackgroundSend { BackgroundSend(client, bytes) }

    func line() async throws -> String {
        let client = client
        let line = try await socketOffPool { try client.readLine(timeout: socketTestTimeout) }
        return try #require(line, "no line within \(socketTestTimeout)")
    }

    func lines(_ count: Int) async throws -> [String] {
        let client = client
        return try await socketOffPool {
            var lines: [String] = []
            while lines.count < count, let line = try client.readLine(timeout: socketTestTimeout) { lines.append(line) }
            return lines
        }
    }

    /// Reads until the gateway closes the connection; returns what came before.
    func linesUntilClosed() async throws -> [String] {
        let client = client
        return try await socketOffPool {
            var lines: [String] = []
            do {
                while let line = try client.readLine(timeout: socketTestTimeout) { lines.append(line) }
                lines.append("<timeout>")
            } catch let error as SocketClientError where error.isEndOfStream {}
            return lines
        }
    }

    /// `PING` answered with `PONG`: the broker handled everything this client sent before.
    func ping() async throws {
        try await send("PING\n")
        #expect(try await line() == "PONG")
    }

    func close() { client.close() }
}

/// A write in progress on its own thread; `finished()` waits for it and rethrows its error.
final class BackgroundSend: Sendable {
    private struct State {
        var result: Result<Void, SocketClientError>?
        var waiter: CheckedContinuation<Void, any Error>?
    }
    private let state = Mutex(State())

    fileprivate init(_ client: SocketLineClient, _ bytes: [UInt8]) {
        Thread { [self] in
            let result = Result { () throws(SocketClientError) in try client.send(bytes) }
            let waiter = state.withLock { state in
                state.result = result
                return state.waiter.take()
            }
            waiter?.resume(with: result.mapError { $0 as any Error })
        }.start()
    }

    func finished() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result = state.withLock { state in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result.mapError { $0 as any Error }) }
        }
    }
}

/// A `BrokerHandler` that records what it is asked, in order, and can hold PUBs to namespace `gate`.
final class FakeBrokerHandler: BrokerHandler {
    struct State {
        var log: [String] = []
        var requests: [(SocketRequest, ClientInfo)] = []
        var disconnected: [ClientID] = []
        var nextHandle = 1
        var gateOpen = false
        var gated: [CheckedContinuation<Void, Never>] = []
        var waiters: [UUID: Waiter] = [:]
    }

    /// A `wait` in progress: resumed true by `change` (which cancels `deadline`) or false by `deadline`.
    struct Waiter {
        let predicate: @Sendable (State) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
        let deadline: Task<Void, Never>
    }

    let state = Mutex(State())

    func handle(_ request: SocketRequest, client: ClientInfo) async -> SocketReply {
        change { $0.requests.append((request, client)); $0.log.append("handle \(client.id)") }
        switch request {
        case .publish(let publish):
            if publish.message.namespace == "gate" {
                await withCheckedContinuation { continuation in
                    let open = state.withLock { state in
                        if !state.gateOpen { state.gated.append(continuation) }
                        return state.gateOpen
                    }
                    if open { continuation.resume() }
                }
            }
            let handle = change { state in
                defer { state.nextHandle += 1 }
                state.log.append("handled \(client.id)")
                return "p-\(state.nextHandle)"
            }
            return .ok(handle)
        case .unpublish(let handle):
            if handle == "end-of-fuzz" { return .ok("fuzz-done") }
            return .error(.notFound, "no publication \(handle)")
        case .set: return .ok()
        case .subscribeMessages: return .ok("s-1")
        case .unsubscribeMessages(let handle): return .error(.notFound, "no subscription \(handle)")
        case .get(.stats): return .ok(#"{"clients":1}"#)
        case .get(let key): return .ok("value-of-\(key.rawValue)")
        }
    }

    func clientDisconnected(_ id: ClientID) async {
        change { $0.disconnected.append(id); $0.log.append("disconnected \(id)") }
    }

    func openGate() {
        let waiting = state.withLock { state in
            state.gateOpen = true
            defer { state.gated = [] }
            return state.gated
        }
        for continuation in waiting { continuation.resume() }
    }

    /// True once `predicate` holds, false if `timeout` passed first.
    func wait(timeout: Duration = socketTestTimeout, until predicate: @escaping @Sendable (State) -> Bool) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let now = state.withLock { locked in
                if predicate(locked) { return true }
                // Made under the lock, so `change` never finds a waiter without its deadline to cancel.
                let deadline = Task {
                    do { try await Task.sleep(for: timeout) } catch { return }   // a deadline, not synchronisation
                    if let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) { waiter.continuation.resume(returning: false) }
                }
                locked.waiters[id] = Waiter(predicate: predicate, continuation: continuation, deadline: deadline)
                return false
            }
            if now { return continuation.resume(returning: true) }
        }
    }

    @discardableResult
    private func change<T>(_ body: (inout State) -> T) -> T {
        let (result, ready) = state.withLock { state in
            let result = body(&state)
            let ready = state.waiters.filter { $0.value.predicate(state) }
            for id in ready.keys { state.waiters[id] = nil }
            return (result, Array(ready.values))
        }
        for waiter in ready {
            waiter.deadline.cancel()   // or it sleeps on for the whole timeout
            waiter.continuation.resume(returning: true)
        }
        return result
    }
}

/// A running broker on a fresh temporary path; shut down (and the folder removed) at the end.
struct SocketTestBroker {
    let broker: SocketBroker
    let handler: FakeBrokerHandler
    let folder: String
    var path: String { broker.configuration.path }

    static func folder() -> String {
        var template = Array("/tmp/ngw-sock-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func start(_ configure: (inout SocketBrokerConfiguration) -> Void = { _ in }) throws -> SocketTestBroker {
        let folder = folder()
        var configuration = SocketBrokerConfiguration(path: folder + "/run/gateway.sock", mode: 0o600)
        configure(&configuration)
        var logger = Logger(label: "socket-test")
        logger.logLevel = .warning
        let broker = try SocketBroker(configuration: configuration, logger: logger)
        let handler = FakeBrokerHandler()
        try broker.start(handler: handler)
        return SocketTestBroker(broker: broker, handler: handler, folder: folder)
    }

    func stop() {
        broker.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
