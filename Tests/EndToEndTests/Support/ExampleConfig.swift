import Foundation

/// A shipped example (`examples/<name>`) as an end-to-end test runs it: the file's own text, with only
/// what ties it to one box replaced per test (the api_key, the board, the ALSA device names, the radio,
/// the socket and state paths). Each setting replaces its key's line in its table, or is added at the
/// table's start; a table the file lacks is added at the end. Every other line stays as shipped.
struct ExampleConfig {
    let name: String
    let text: String

    init(_ name: String) throws {
        self.name = name
        text = try String(contentsOf: TestEnvironment.repository.appendingPathComponent("examples/\(name)"), encoding: .utf8)
    }

    /// `settings`: table name ("" for the top level) → key → its TOML value, written as given.
    func setting(_ settings: [String: [String: String]]) -> String {
        var pending = settings
        var table = ""
        var out: [String] = []
        func addPending(_ table: String) {
            for (key, value) in (pending[table] ?? [:]).sorted(by: { $0.key < $1.key }) { out.append("\(key) = \(value)") }
            pending[table] = [:]
        }
        addPending("")
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                table = trimmed.hasPrefix("[[") ? trimmed : String(trimmed.dropFirst().prefix { $0 != "]" })
                out.append(line)
                addPending(table)
                continue
            }
            let key = trimmed.prefix { $0 != "=" && $0 != " " }
            if !key.isEmpty, !trimmed.hasPrefix("#"), settings[table]?[String(key)] != nil { continue }
            out.append(line)
        }
        for (table, values) in pending.sorted(by: { $0.key < $1.key }) where !values.isEmpty {
            out.append("\n[\(table)]")
            addPending(table)
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Starts `nearby-gateway run` on the example with `settings` (written into `folder`) and waits
    /// until it is ready.
    func start(_ settings: [String: [String: String]], in folder: TemporaryFolder, as file: String,
               environment: [String: String] = [:]) async throws -> GatewayProcess {
        let path = try folder.write(file, setting(settings))
        let process = try GatewayProcess(arguments: ["run", "--config", path, "--log-level", "debug"], configPath: path,
                                         environment: environment)
        try await process.waitUntilReady()
        return process
    }
}
