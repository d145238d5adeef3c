import Foundation
import Testing

extension EndToEnd {
    /// Issue 9, faults: a state folder the gateway cannot write. Each gateway runs in its own mount
    /// namespace (root ignores permission bits, so only a read-only mount or a full filesystem makes
    /// writes fail), set up before the gateway starts and gone with it.
    @Suite(.serialized)
    struct FaultStorage {
        static let initial = #"{"background_mode": true, "permission": "granted", "power": "active"}"#

        @Test("State folder read-only: SET answers ERR, the state and its file stay unchanged, the gateway keeps running")
        func readOnlyStateFolder() async throws {
            let folder = try TemporaryFolder("rofs")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("rofs"), folder: folder, name: "r")
            let stateFolder = (config.statePath as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true)
            _ = try folder.write("r-state/state.json", Self.initial + "\n")
            let gateway = try await MountNamespace.start(config, setup: """
                mount --bind "$STATE_DIR" "$STATE_DIR"
                mount -o remount,bind,ro "$STATE_DIR"
                """, environment: ["STATE_DIR": stateFolder])
            try await expectRefusedWrites(gateway, config: config) { try String(contentsOfFile: config.statePath, encoding: .utf8) }
            #expect(gateway.log.contains("Read-only file system"), "the log names the cause")
            #expect(try await gateway.stop() == 0, "the final flush fails too, and is only logged")
            #expect(try FileManager.default.contentsOfDirectory(atPath: stateFolder) == ["state.json"])
        }

        @Test("State folder on a full filesystem (ENOSPC): SET answers ERR, the state and its file stay unchanged, no temporary file left")
        func fullStateFolder() async throws {
            let folder = try TemporaryFolder("full")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("full"), folder: folder, name: "f")
            let stateFolder = (config.statePath as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: stateFolder, withIntermediateDirectories: true)
            // A 16 KiB tmpfs: the state file takes one page, the filler every other one.
            let gateway = try await MountNamespace.start(config, setup: """
                mount -t tmpfs -o size=16k,mode=0755 nearby-full "$STATE_DIR"
                printf '%s\\n' "$STATE" > "$STATE_DIR/state.json"
                head -c 1048576 /dev/zero > "$STATE_DIR/filler" 2>/dev/null || true
                """, environment: ["STATE_DIR": stateFolder, "STATE": Self.initial])
            let read = { try MountNamespace.shell(in: gateway, "cat \"$0\"".replacingOccurrences(of: "$0", with: config.statePath)) }
            try await expectRefusedWrites(gateway, config: config, read: read)
            #expect(gateway.log.contains("No space left on device"), "the log names the cause")
            let listing = try MountNamespace.shell(in: gateway, "ls -A '\(stateFolder)'")
            #expect(listing.split(separator: "\n").sorted() == ["filler", "state.json"], "temporary file left: \(listing)")
            #expect(try await gateway.stop() == 0)
        }

        /// Every kind of SET is refused with ERR, nothing changes (neither the served state, nor the file,
        /// nor $SYS events), and the gateway keeps answering.
        private func expectRefusedWrites(_ gateway: GatewayProcess, config: TestGatewayConfig,
                                         read: () throws -> String) async throws {
            let client = try SocketClient(path: config.socketPath)
            _ = try await client.request("SUB $SYS/+")
            let before = try read()
            #expect(StateSnapshot(json: before) == .defaults)
            for line in ["SET power standby", "SET background off", "SET permission denied"] {
                let reply = try await client.request(line)
                #expect(reply.hasPrefix("ERR unavailable "), "\(line) answered \(reply)")
            }
            #expect(try await client.request("GET power") == "OK active")
            #expect(try await client.request("GET background") == "OK on")
            #expect(try await client.request("GET permission") == "OK granted")
            #expect(try read() == before)
            #expect(!client.received.contains { $0.hasPrefix("$SYS/power ") && $0.contains("standby") })
            // Still fully working: debug (not persisted) changes, PUB is accepted, PING answers.
            #expect(try await client.request("SET debug on") == "OK")
            #expect(try await client.request("PUB shop/offer \(Data("x".utf8).base64EncodedString()) mediums=ble").hasPrefix("OK "))
            #expect(try await client.request("PING") == "PONG")
            #expect(gateway.isRunning)
            client.close()
        }
    }
}
