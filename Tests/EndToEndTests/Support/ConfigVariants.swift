import Foundation

extension TestGatewayConfig {
    /// The config with some text replaced (a socket path in a missing folder, a socket group), written
    /// under `file` in the test's folder. Returns its path.
    func write(replacing edits: KeyValuePairs<String, String>, as file: String) throws -> String {
        var text = toml
        for (old, new) in edits {
            precondition(text.contains(old), "the test config has no '\(old)'")
            text = text.replacingOccurrences(of: old, with: new)
        }
        return try folder.write(file, text)
    }
}

extension GatewayProcess {
    /// Waits for the process to exit by itself (signal 0 only checks it exists); its exit status.
    func waitForExit(timeout: Duration = .seconds(10)) async throws -> Int32 {
        try await stop(signal: 0, timeout: timeout)
    }
}
