import Foundation
import LineClient
import Testing

extension EndToEnd {
    /// Issue 9, faults and security of the socket path: what is (or is not) at the path when the
    /// gateway starts, the mode and group it gets, and who connects.
    @Suite(.serialized)
    struct FaultSocketPath {
        @Test("The socket's folder missing at start is created, and the gateway serves")
        func missingFolderIsCreated() async throws {
            var config = try TestGatewayConfig("sockdir", name: "d")
            let socketPath = config.folder.path("run/nearby/d.sock")
            config.socketPath = socketPath
            #expect(!FileManager.default.fileExists(atPath: config.folder.path("run")))
            try await withGateway(config) { _ in
                let client = try SocketClient(path: socketPath)
                #expect(try await client.request("PING") == "PONG")
                client.close()
            }
            #expect(!FileManager.default.fileExists(atPath: socketPath), "the socket file is removed at exit")
            #expect(!FileManager.default.fileExists(atPath: socketPath), "the socket file is removed at exit")
        }

        @Test("A stale socket file left by a SIGKILLed gateway is replaced at the next start")
        func staleSocketIsReplaced() async throws {
            let config = try TestGatewayConfig("stale", name: "s")
            var gateway = try await config.start()
            #expect(try await gateway.stop(signal: SIGKILL) == SIGKILL)
            #expect(try fileType(config.socketPath) == .typeSocket, "a crash leaves the socket file behind")
            #expect(throws: SocketClientError.self) { try SocketLineClient(path: config.socketPath) }
            gateway = try await config.start()
            #expect(gateway.log.contains("replacing a stale socket file"))
            let client = try SocketClient(path: config.socketPath)
            #expect(try await client.request("PING") == "PONG")
            client.close()
            #expect(try await gateway.stop() == 0)
        }

        @Test("A second gateway on a live socket refuses to start with a clear message and a non-zero exit; the first keeps serving")
        func liveSocketIsRefused() async throws {
            let first = try TestGatewayConfig("live")
            var second = first.peer("b")
            second.socketPath = first.socketPath
            let gateway = try await first.start()
            let intruder = try second.launch()
            let status = try await intruder.waitForExit()
            #expect(status != 0)
            #expect(intruder.log.contains("socket \(first.socketPath): another gateway is running and answers on it"), "log:\n\(intruder.log)")
            #expect(!intruder.log.contains("running board="), "the second gateway got as far as running")
            let client = try SocketClient(path: first.socketPath)
            #expect(try await client.request("PING") == "PONG", "the first gateway lost its socket")
            client.close()
            #expect(try await gateway.stop() == 0)
        }

        @Test("A symbolic link at the socket path is refused, never followed; a regular file there is not deleted")
        func symlinkAndFileAreRefused() async throws {
            let folder = try TemporaryFolder("symlink")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("symlink"), folder: folder, name: "l")
            let target = try folder.write("precious", "do not touch\n")
            chmod(target, 0o600)
            for (kind, prepare) in [("symbolic link to a file", { try FileManager.default.createSymbolicLink(atPath: config.socketPath, withDestinationPath: target) }),
                                    ("dangling symbolic link", { try FileManager.default.createSymbolicLink(atPath: config.socketPath, withDestinationPath: folder.path("nowhere.sock")) }),
                                    ("regular file", { _ = try folder.write("l.sock", "not a socket\n") })] as [(String, () throws -> Void)] {
                try? FileManager.default.removeItem(atPath: config.socketPath)
                try prepare()
                let gateway = try config.launch()
                #expect(try await gateway.waitForExit() != 0, "\(kind): started anyway")
                let expected = kind == "regular file" ? "exists and is not a socket; refusing to replace it" : "is a symbolic link; refusing to follow it"
                #expect(gateway.log.contains(expected), "\(kind): log:\n\(gateway.log)")
                #expect(try fileType(config.socketPath) == (kind == "regular file" ? .typeRegular : .typeSymbolicLink), "\(kind): path replaced")
                #expect(!FileManager.default.fileExists(atPath: folder.path("nowhere.sock")), "\(kind): link followed")
            }
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "do not touch\n")
            #expect(try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int == 0o600)
        }

        @Test("The socket is created with mode 0660 and the configured group; every client's pid and uid are logged")
        func modeGroupAndPeerCredentials() async throws {
            var config = try TestGatewayConfig("sockmode", name: "m")
            config.socketGroup = "daemon"
            // A umask that would give everyone access: the mode must not depend on it.
            let gateway = try await config.start(umask: "000")
            var info = stat()
            #expect(lstat(config.socketPath, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o7777 == 0o660, "mode \(String(info.st_mode & 0o7777, radix: 8))")
            #expect(info.st_gid == 1, "group daemon (gid 1), got gid \(info.st_gid)")
            #expect(info.st_uid == getuid())

            let client = try SocketClient(path: config.socketPath)
            #expect(try await client.request("PING") == "PONG")
            try await gateway.waitForLog(timeout: .seconds(5), what: "the client's pid and uid") {
                $0.split(separator: "\n").contains { $0.contains("socket client connected") && $0.contains("pid=\(getpid())") && $0.contains("uid=\(getuid())") }
            }
            client.close()
            #expect(try await gateway.stop() == 0)
        }
    }
}

/// The type of what is at `path`, without following a symbolic link.
func fileType(_ path: String) throws -> FileAttributeType? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    switch info.st_mode & S_IFMT {
    case S_IFSOCK: return .typeSocket
    case S_IFLNK: return .typeSymbolicLink
    case S_IFREG: return .typeRegular
    case S_IFDIR: return .typeDirectory
    default: return .typeUnknown
    }
}
