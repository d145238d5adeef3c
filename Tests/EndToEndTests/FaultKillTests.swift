import Foundation
import LineClient
import Testing

extension EndToEnd {
    /// Issue 9, faults: a gateway killed at any moment never leaves a torn or stale state file.
    @Suite(.serialized)
    struct FaultKill {
        @Test("SIGKILL at random points during 100 state changes: the state file is always valid JSON holding the last acknowledged value")
        func killDuringStateChanges() async throws {
            let folder = try TemporaryFolder("kill")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("kill"), folder: folder, name: "k")
            var random = SeededRandom(label: "killDuringStateChanges")
            var truth: StateSnapshot? = nil       // what the file holds; nil = no file yet (defaults)
            var changes = 0
            var rounds = 0
            var killedInFlight = 0
            var savedUnacknowledged = 0
            while changes < 100 {
                rounds += 1
                let gateway = try await config.start()
                let client = try SocketLineClient(path: config.socketPath)
                // The restarted gateway serves exactly what the file held.
                #expect(try client.stateSnapshot() == truth ?? .defaults, "round \(rounds): restored state")

                // A burst of changes, pipelined, then SIGKILL right after the k-th acknowledgement: with
                // the rest in flight, the kill lands anywhere in save → rename → reply of the next one.
                var model = truth ?? .defaults
                var sent: [StateSnapshot] = []
                var burst = ""
                for _ in 0..<min(Int.random(in: 1...12, using: &random), 100 - changes) {
                    let (line, next) = model.randomChange(using: &random)
                    burst += line + "\n"
                    sent.append(next)
                    model = next
                }
                try client.send(Array(burst.utf8))
                let killAfter = Int.random(in: 0...sent.count, using: &random)
                var replies = try client.readLines(killAfter)
                #expect(try await gateway.stop(signal: SIGKILL) == SIGKILL)
                // Replies written before the process died are still in the socket: acknowledged too.
                replies += try client.readUntilClosed()
                client.close()
                #expect(replies.allSatisfy { $0 == "OK" }, "round \(rounds): \(replies)")
                let acknowledged = replies.count
                changes += sent.count
                if acknowledged < sent.count { killedInFlight += 1 }

                // The last acknowledged value, or a later one saved before its OK went out; never older.
                let allowed = acknowledged > 0 ? Array(sent[(acknowledged - 1)...]) : [truth ?? .defaults] + sent
                switch config.stateOnDisk() {
                case nil:
                    #expect(truth == nil && acknowledged == 0, "round \(rounds): state file vanished")
                case .failure(let damage)?:
                    Issue.record("round \(rounds): \(damage)")
                    return
                case .success(let onDisk)?:
                    #expect(allowed.contains(onDisk), "round \(rounds): file holds \(onDisk), acknowledged \(acknowledged) of \(sent)")
                    if acknowledged > 0, onDisk != sent[acknowledged - 1] { savedUnacknowledged += 1 }
                    truth = onDisk
                }
            }
            let stateFolder = (config.statePath as NSString).deletingLastPathComponent
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: stateFolder).sorted()
            print("killDuringStateChanges: \(changes) changes, \(rounds) kills (\(killedInFlight) with changes in flight, \(savedUnacknowledged) saved but not yet acknowledged), state folder: \(leftovers)")
            #expect(!leftovers.contains { $0.contains(".corrupt-") }, "a state file was found corrupt after a kill")
            // Temporary files of writers killed before their rename are cleaned at the next start.
            let gateway = try await config.start()
            #expect(try FileManager.default.contentsOfDirectory(atPath: stateFolder) == ["state.json"])
            #expect(try await gateway.stop() == 0)
            #expect(config.stateOnDisk().flatMap { try? $0.get() } == truth)
        }
    }
}
