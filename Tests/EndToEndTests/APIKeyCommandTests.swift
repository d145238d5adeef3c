import Foundation
import Testing

/// Issue 30 item 3 through the real binary: `key` prints a strong key, and check-config warns about
/// a weak one, names `nearby-gateway key`, and still accepts the config (exit 0).
@Suite("A key worth its name")
struct APIKeyCommandTests {
    private static let alphabet = Set("abcdefghijkmnpqrstuvwxyz23456789")

    private func newKey(in folder: TemporaryFolder) async throws -> String {
        let process = try GatewayProcess(arguments: ["key"], configPath: folder.path("none.toml"))
        let status = try await process.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "key: exit \(status)\n\(process.log)")
        return process.log.trimmingCharacters(in: .newlines)
    }

    @Test("key prints 32 characters of the documented alphabet, different each run")
    func keyPrintsANewStrongKey() async throws {
        let folder = try TemporaryFolder("apikey")
        let first = try await newKey(in: folder)
        let second = try await newKey(in: folder)
        for key in [first, second] {
            #expect(key.count == 32, "'\(key)'")
            #expect(key.allSatisfy { Self.alphabet.contains($0) }, "'\(key)'")
        }
        #expect(first != second)

        // The key it made passes check-config without a warning.
        let config = TestGatewayConfig(apiKey: first, folder: folder, name: "strong")
        let path = try config.write()
        let check = try GatewayProcess(arguments: ["check-config", "--config", path], configPath: path)
        #expect(try await check.waitForExit(timeout: .seconds(30)) == 0, "\(check.log)")
        #expect(!check.log.contains("warning"), "\(check.log)")
        #expect(!check.log.contains(first), "check-config printed the key:\n\(check.log)")
    }

    @Test("check-config on a weak key warns, names nearby-gateway key, exits 0", arguments: ["password123", "short-key"])
    func weakKeyWarns(key: String) async throws {
        let folder = try TemporaryFolder("apikey-weak")
        let path = try TestGatewayConfig(apiKey: key, folder: folder, name: "weak").write()
        let check = try GatewayProcess(arguments: ["check-config", "--config", path], configPath: path)
        #expect(try await check.waitForExit(timeout: .seconds(30)) == 0, "\(check.log)")
        #expect(check.log.contains("\(path): api_key: warning:"), "\(check.log)")
        #expect(check.log.contains("`nearby-gateway key`"), "\(check.log)")
        #expect(check.log.contains("\(path): OK"), "\(check.log)")
    }
}
