import Foundation
@testable import NearbyProtocol
import Synchronization
import Testing
@testable import Gateway

/// Issue 13: the state file's fsyncs ran on the manager actor, i.e. on Swift's cooperative pool (one
/// thread per core). `persist` runs them on a thread of its own.
@Suite(.timeLimit(.minutes(5)))
struct StatePersistTests {
    /// More saves than the pool has threads, each blocked in open(2) on a FIFO until a task that needs
    /// the pool opens its reading end. Saves that block pool threads starve that task: deadlock.
    @Test func blockedSavesLeaveTheSharedPoolFree() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let folders = try (0..<count).map { index -> String in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("persist-\(index)-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // save() opens this temporary name first: as a FIFO, open blocks until a reader comes.
            #expect(mkfifo("\(folder)/.state.json.tmp-\(getpid())", 0o600) == 0)
            return folder
        }
        defer { folders.forEach { try? FileManager.default.removeItem(atPath: $0) } }
        // Saves that starve the pool would hang this test until its time limit. A thread of its own
        // (off the pool) gives the FIFOs their readers after a deadline instead, so the saves end and
        // the test fails by the assertion below. A deadline, not synchronisation: it never fires
        // while the pool stays free.
        let rescue = Rescue(folders: folders)
        rescue.start(after: 60)
        defer { rescue.closeAll() }
        let (started, starting) = AsyncStream<Void>.makeStream()
        let readers = await withTaskGroup(of: [Int32].self) { group in
            for folder in folders {
                group.addTask {
                    starting.yield()
                    // The FIFO takes the bytes and refuses fsync (EINVAL): the save fails, which is fine here.
                    try? await StateFile(path: "\(folder)/state.json").persist(GatewayState())
                    return []
                }
            }
            group.addTask {
                // Every save has started before any FIFO gets its reader; the readers stay open until
                // every save is done, so a save that reaches open(2) late still finds one.
                var seen = 0
                for await _ in started {
                    seen += 1
                    if seen == count { break }
                }
                return folders.map { open("\($0)/.state.json.tmp-\(getpid())", O_RDONLY | O_NONBLOCK) }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        rescue.finished()
        #expect(!rescue.fired, "the blocked saves starved Swift's shared pool: the FIFOs' reader task never ran within 60 s")
        #expect(readers.count == count && readers.allSatisfy { $0 >= 0 })
        readers.forEach { close($0) }
    }

    /// Opens the FIFOs' reading ends from a thread of its own unless `finished` comes first.
    final class Rescue: Sendable {
        private let folders: [String]
        private let done = DispatchSemaphore(value: 0)
        private let opened = Mutex<[Int32]?>(nil)

        init(folders: [String]) { self.folders = folders }

        var fired: Bool { opened.withLock { $0 != nil } }

        func start(after seconds: Int) {
            let thread = Thread { [self] in
                guard done.wait(timeout: .now() + .seconds(seconds)) == .timedOut else { return }
                opened.withLock { $0 = folders.map { open("\($0)/.state.json.tmp-\(getpid())", O_RDONLY | O_NONBLOCK) } }
            }
            thread.name = "StatePersistTests rescue"
            thread.start()
        }

        func finished() { done.signal() }

        func closeAll() { opened.withLock { $0?.forEach { close($0) } } }
    }

    @Test func persistSavesLikeSave() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("persist-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = StateFile(path: "\(folder)/state.json")
        let state = GatewayState(backgroundMode: false, permission: .denied, power: .standby)
        try await file.persist(state)
        #expect(file.load(defaults: GatewayState()) == (state, nil))
        await #expect(throws: StateFileError.self) { try await StateFile(path: "\(folder)/missing/state.json").persist(state) }
    }
}
