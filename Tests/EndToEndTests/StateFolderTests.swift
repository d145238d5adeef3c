import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: the state file says whether the user consented; its folder is created 0750 (owner and
    /// group only) whatever the umask of whoever starts the gateway.
    @Suite(.serialized)
    struct StateFolder {
        @Test("Started under umask 000, the gateway creates its state folder (and missing parents) 0750")
        func stateFolderIs0750UnderUmask000() async throws {
            var config = try TestGatewayConfig("umask", name: "u")
            let folder = config.folder
            let nested = folder.path("var/lib/u-state/state.json")
            config.statePath = nested
            // No --log-level, as before this fixture.
            try await withGateway(config, logLevel: nil, umask: "000") { _ in
                let client = try SocketClient(path: config.socketPath)
                #expect(try await client.request("SET power standby") == "OK")   // a save into the new folder
                for created in ["var", "var/lib", "var/lib/u-state"] {
                    let mode = try #require(try FileManager.default.attributesOfItem(atPath: folder.path(created))[.posixPermissions] as? Int)
                    #expect(mode == 0o750, "\(created) is \(String(mode, radix: 8))")
                }
                #expect(FileManager.default.fileExists(atPath: nested))
            }
        }
    }
}
