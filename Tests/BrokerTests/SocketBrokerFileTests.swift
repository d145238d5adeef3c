import Foundation
import LineClient
import Logging
import Testing
@testable import Broker
import SystemCall

@Suite struct SocketBrokerFileTests {
    static func broker(_ path: String, mode: UInt32 = 0o660) throws -> SocketBroker {
        try SocketBroker(configuration: SocketBrokerConfiguration(path: path, mode: mode), logger: Logger(label: "socket-test"))
    }

    @Test func createsParentFoldersAndAppliesTheMode() async throws {
        let folder = SocketTestBroker.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/a/b/gateway.sock"
        let broker = try Self.broker(path, mode: 0o640)
        try broker.start(handler: FakeBrokerHandler())
        defer { broker.shutdown() }
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o640)
        let client = try await SocketTestConnection.open(path)
        defer { client.close() }
        try await client.ping()
    }

    @Test func replacesAStaleSocketFile() async throws {
        let folder = SocketTestBroker.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/gateway.sock"
        // What a crashed gateway leaves: a socket file nobody listens on.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(try UnixAddress(path: path).bind(fd) == 0)
        close(fd)
        let broker = try Self.broker(path)
        try broker.start(handler: FakeBrokerHandler())
        defer { broker.shutdown() }
        let client = try await SocketTestConnection.open(path)
        defer { client.close() }
        try await client.ping()
    }

    @Test func refusesToStartWhileAnotherGatewayAnswers() async throws {
        let running = try SocketTestBroker.start()
        defer { running.stop() }
        let second = try Self.broker(running.path)
        #expect(throws: SocketBrokerError(path: running.path, kind: .alreadyRunning)) {
            try second.start(handler: FakeBrokerHandler())
        }
        #expect("\(SocketBrokerError(path: running.path, kind: .alreadyRunning))".contains(running.path))
        let client = try await SocketTestConnection.open(running.path)   // the first one is untouched
        defer { client.close() }
        try await client.ping()
    }

    @Test func neverFollowsASymlinkNorReplacesAFile() throws {
        let folder = SocketTestBroker.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/link.sock", file = folder + "/file.sock"
        #expect(symlink(folder + "/elsewhere", link) == 0)
        #expect(FileManager.default.createFile(atPath: file, contents: Data("keep".utf8)))
        #expect(throws: SocketBrokerError(path: link, kind: .symbolicLink)) { try Self.broker(link).start(handler: FakeBrokerHandler()) }
        #expect(throws: SocketBrokerError(path: file, kind: .notASocket)) { try Self.broker(file).start(handler: FakeBrokerHandler()) }
        #expect(FileManager.default.contents(atPath: file) == Data("keep".utf8))
        let long = folder + "/" + String(repeating: "x", count: 120)
        #expect(throws: SocketBrokerError(path: long, kind: .pathTooLong)) { try Self.broker(long).start(handler: FakeBrokerHandler()) }
    }

    @Test func unknownGroupAndUnwritableFolderAreTypedErrors() throws {
        let folder = SocketTestBroker.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/gateway.sock"
        let broker = try SocketBroker(configuration: SocketBrokerConfiguration(path: path, group: "no-such-group-ngw"), logger: Logger(label: "t"))
        #expect(throws: SocketBrokerError(path: path, kind: .unknownGroup("no-such-group-ngw"))) { try broker.start(handler: FakeBrokerHandler()) }
        #expect(!FileManager.default.fileExists(atPath: path))   // no half-configured socket left behind
        // A parent that is a file: mkdir fails with ENOTDIR, named in the error.
        let blocked = folder + "/file/gateway.sock"
        #expect(FileManager.default.createFile(atPath: folder + "/file", contents: Data()))
        #expect {
            try Self.broker(blocked).start(handler: FakeBrokerHandler())
        } throws: { error in
            (error as? SocketBrokerError)?.errno == ENOTDIR && "\(error)".contains(blocked)
        }
    }

    @Test func clientErrorsNameTheCause() throws {
        let folder = SocketTestBroker.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect { try SocketLineClient(path: folder + "/none.sock") } throws: { error in
            let error = error as? SocketClientError
            return error?.errno == Errno(rawValue: ENOENT) && error?.description.contains("ENOENT") == true
        }
        let stale = folder + "/stale.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = try UnixAddress(path: stale).bind(fd)
        close(fd)
        #expect { try SocketLineClient(path: stale) } throws: { error in
            (error as? SocketClientError)?.description.contains("ECONNREFUSED") == true
        }
    }
}
