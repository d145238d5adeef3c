import Foundation

/// A gateway config for a test: everything under the test's own folder, on btvirt, the `sim` board.
struct TestGatewayConfig {
    var apiKey: String
    var folder: TemporaryFolder
    var name: String
    var lostAfterSeconds = 3
    var rotateSeconds = 600
    var permission = "granted"
    var backgroundMode = true
    var power = "active"
    var publications: [String] = []
    var subscriptions: [String] = []
    var audio: String? = nil
    /// More tables, as TOML (e.g. `[limits]`).
    var extra = ""

    var socketPath: String { folder.path("\(name).sock") }
    var statePath: String { folder.path("\(name)-state/state.json") }

    var toml: String {
        var text = """
        api_key = "\(apiKey)"
        board = "sim"
        log_level = "debug"

        [radio]
        device = "h4:\(TestEnvironment.btvirtServer)"
        interval_ms = 100
        rotate_s = \(rotateSeconds)
        lost_after_s = \(lostAfterSeconds)

        [socket]
        path = "\(socketPath)"
        mode = "0660"

        [state]
        path = "\(statePath)"
        defaults = { background_mode = \(backgroundMode), permission = "\(permission)", power = "\(power)" }

        """
        if let audio { text += "\n[audio]\n\(audio)\n" }
        if !extra.isEmpty { text += "\n\(extra)\n" }
        for publication in publications { text += "\n[[publication]]\n\(publication)\n" }
        for subscription in subscriptions { text += "\n[[subscription]]\n\(subscription)\n" }
        return text
    }

    func write() throws -> String {
        try folder.write("\(name).toml", toml)
    }

    /// Writes the config, starts `nearby-gateway run` and waits until its socket listens.
    func start() async throws -> GatewayProcess {
        let process = try GatewayProcess.run(config: try write())
        try await process.waitForLog("listening", timeout: .seconds(15))
        return process
    }
}

extension String {
    /// The JSON object after the topic of an event line.
    var eventJSON: [String: Any] {
        guard let space = firstIndex(of: " "),
              let object = try? JSONSerialization.jsonObject(with: Data(self[index(after: space)...].utf8)) as? [String: Any]
        else { return [:] }
        return object
    }

    var topic: String { String(prefix { $0 != " " }) }
}
