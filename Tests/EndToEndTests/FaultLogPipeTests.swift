import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: the log is a pipe whose reader goes away (journald restarted, `run … | head`). The
    /// gateway must neither die of SIGPIPE nor trap on EPIPE: it keeps serving its socket.
    @Suite(.serialized)
    struct FaultLogPipe {
        @Test("stderr is a pipe whose reader exits: the gateway keeps running and answering the socket")
        func closedLogPipe() async throws {
            let folder = try TemporaryFolder("logpipe")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("logpipe"), folder: folder, name: "p")
            let process = Process()
            process.executableURL = TestEnvironment.gatewayBinary
            process.arguments = ["run", "--config", try config.write(), "--log-level", "debug"]
            let log = Pipe()
            process.standardError = log
            process.standardOutput = log
            let exited = ChangeSignal()
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

            // The reader: reads until the gateway is up, then exits (closes the only read end).
            let seen = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                let reader = Thread {
                    var text = ""
                    while !text.contains("listening") {
                        let data = log.fileHandleForReading.availableData
                        if data.isEmpty { break }
                        text += String(decoding: data, as: UTF8.self)
                    }
                    try? log.fileHandleForReading.close()
                    continuation.resume(returning: text)
                }
                reader.start()
            }
            #expect(seen.contains("listening"), "the gateway never came up; its log:\n\(seen)")

            // Every request logs at debug level, and SET debug / PUB log at notice/info: writes into the dead pipe.
            let client = try SocketClient(path: config.socketPath)
            #expect(try await client.request("SET debug on") == "OK")
            for round in 0..<50 {
                let reply = try await client.request("PUB logpipe/r\(round) \(Data("x".utf8).base64EncodedString()) mediums=ble")
                #expect(reply.hasPrefix("OK "), "round \(round): \(reply)")
                #expect(try await client.request("UNPUB \(reply.dropFirst(3))") == "OK")
            }
            #expect(try await client.request("PING") == "PONG")
            #expect(process.isRunning, "the gateway died with status \(process.terminationStatus)")
            // A second client: the broker still accepts.
            let other = try SocketClient(path: config.socketPath)
            #expect(try await other.request("GET permission") == "OK granted")

            kill(process.processIdentifier, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning, ContinuousClock.now < deadline {
                let generation = exited.generation
                if !process.isRunning { break }
                await exited.wait(since: generation, until: deadline)
            }
            #expect(!process.isRunning)
            #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                    "SIGTERM with a dead log pipe: reason \(process.terminationReason.rawValue), status \(process.terminationStatus)")
        }
    }
}
