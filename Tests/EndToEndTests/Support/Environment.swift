import Foundation

/// Where the end-to-end tests find what `scripts/test` prepared.
enum TestEnvironment {
    /// The repository root, from this file's path (Tests/EndToEndTests/Support/Environment.swift).
    static let repository: URL = {
        if let path = ProcessInfo.processInfo.environment["NEARBY_REPO"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// The binary under test: `$NEARBY_GATEWAY_BIN`, else the debug build next to the tests.
    static let gatewayBinary: URL = {
        if let path = ProcessInfo.processInfo.environment["NEARBY_GATEWAY_BIN"] { return URL(fileURLWithPath: path) }
        return repository.appendingPathComponent(".build/debug/nearby-gateway")
    }()

    static let btvirtServer = "/tmp/bt-server-le"

    /// A fresh api_key per test: every test shares btvirt's one air, and gateways with another key never
    /// see each other's messages, so unique keys keep tests apart.
    static func uniqueAPIKey(_ label: String = "test") -> String {
        "e2e-\(label)-\(UUID().uuidString)"
    }
}

/// A temporary folder removed when the test ends.
final class TemporaryFolder: Sendable {
    let url: URL

    init(_ label: String = "nearby") throws {
        // Short paths: UNIX socket paths are limited to 108 bytes.
        url = URL(fileURLWithPath: "/tmp/ng-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws -> String {
        let target = path(name)
        try text.write(toFile: target, atomically: true, encoding: .utf8)
        return target
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

struct TimeoutError: Error, CustomStringConvertible {
    var description: String
}
