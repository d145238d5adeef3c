import Foundation

/// A gateway config for a test, as typed fields: everything under the test's own folder, on btvirt,
/// the `sim` board. `start()` and `withGateway` run it (docs: Tests/EndToEndTests/Support/Fixture.swift).
struct TestGatewayConfig {
    var apiKey: String
    var folder: TemporaryFolder
    var name: String
    /// The file's `log_level` (`start` also passes `--log-level`, which wins, unless told not to).
    var logLevel = "debug"
    var board = "sim"
    /// `radio.device`: btvirt's shared air unless a test brings its own (`PrivateAir`).
    var radioDevice = "h4:\(TestEnvironment.btvirtServer)"
    var lostAfterSeconds = 3
    /// `radio.quiet_s`; nil leaves the gateway's default.
    var quietSeconds: Int? = nil
    var rotateSeconds = 600
    var socketMode = "0660"
    var socketGroup: String? = nil
    var maxClients: Int? = nil
    var permission = "granted"
    var backgroundMode = true
    var power = "active"
    var publications: [String] = []
    var subscriptions: [String] = []
    /// `[[identity]]` tables' bodies. A config holding a key inline must not be readable by others,
    /// so `write` makes the file 0600 when there are any.
    var identities: [String] = []
    var audio: String? = nil
    /// More tables, as TOML (e.g. `[limits]`).
    var extra = ""
    private var customSocketPath: String?
    private var customStatePath: String?

    init(apiKey: String, folder: TemporaryFolder, name: String) {
        self.apiKey = apiKey
        self.folder = folder
        self.name = name
    }

    /// A config in a fresh folder with a fresh api key, both named after `label`.
    init(_ label: String, name: String = "a") throws {
        self.init(apiKey: TestEnvironment.uniqueAPIKey(label), folder: try TemporaryFolder(label), name: name)
    }

    /// Another gateway of the same test: the same folder and api key (they see each other on the air,
    /// and no other test's gateways), its own name and otherwise the defaults.
    func peer(_ name: String) -> TestGatewayConfig {
        TestGatewayConfig(apiKey: apiKey, folder: folder, name: name)
    }

    /// `<folder>/<name>.sock` unless set.
    var socketPath: String {
        get { customSocketPath ?? folder.path("\(name).sock") }
        set { customSocketPath = newValue }
    }

    /// `<folder>/<name>-state/state.json` unless set.
    var statePath: String {
        get { customStatePath ?? folder.path("\(name)-state/state.json") }
        set { customStatePath = newValue }
    }

    var toml: String {
        var text = """
        api_key = "\(apiKey)"
        board = "\(board)"
        log_level = "\(logLevel)"

        [radio]
        device = "\(radioDevice)"
        interval_ms = 100
        rotate_s = \(rotateSeconds)
        lost_after_s = \(lostAfterSeconds)
        \(quietSeconds.map { "quiet_s = \($0)" } ?? "")

        [socket]
        path = "\(socketPath)"
        mode = "\(socketMode)"

        """
        if let socketGroup { text += "group = \"\(socketGroup)\"\n" }
        if let maxClients { text += "max_clients = \(maxClients)\n" }
        text += """

        [state]
        path = "\(statePath)"
        defaults = { background_mode = \(backgroundMode), permission = "\(permission)", power = "\(power)" }

        """
        if let audio { text += "\n[audio]\n\(audio)\n" }
        if !extra.isEmpty { text += "\n\(extra)\n" }
        for publication in publications { text += "\n[[publication]]\n\(publication)\n" }
        for subscription in subscriptions { text += "\n[[subscription]]\n\(subscription)\n" }
        for identity in identities { text += "\n[[identity]]\n\(identity)\n" }
        return text
    }

    /// Writes the config as `<name>.toml` in the folder (or `file`); returns its path.
    @discardableResult
    func write(as file: String? = nil) throws -> String {
        let path = try folder.write(file ?? "\(name).toml", toml)
        if !identities.isEmpty { chmod(path, 0o600) }
        return path
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
