import Glibc
import Logging
import NearbyProtocol
import SystemCall

/// Reads `gateway.toml` and its board file into a `GatewayConfig`, or reports every problem at once.
public enum ConfigLoader {
    /// The api_key of the packaged /etc/nearby-gateway/gateway.toml (packaging/gateway.toml): a box
    /// must not start on it, or every fresh install would share one key.
    public static let placeholderAPIKey = "REPLACE-WITH-YOUR-API-KEY"

    public static func load(path: String) throws(ConfigError) -> (GatewayConfig, Board) {
        try load(path: path, boards: .standard())
    }

    public static func load(path: String, boards: BoardCatalog) throws(ConfigError) -> (GatewayConfig, Board) {
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try SystemCall.readFile(path)
        } catch {
            throw ConfigError(problems: [ConfigProblem(file: path, line: nil, key: "", message: "cannot read the file: \(error)")])
        }
        // Not UTF-8: say where, then read on (the damaged bytes as U+FFFD) to report everything else too.
        var encodingProblems: [ConfigProblem] = []
        if let bad = UTF8Check.firstInvalidByte(in: bytes) {
            encodingProblems.append(ConfigProblem(file: path, line: bad.line, key: "",
                                                  message: "not UTF-8: byte 0x\(String(bad.byte, radix: 16, uppercase: true)) at column \(bad.column)"))
        }
        return try load(text: String(decoding: bytes, as: UTF8.self), file: path, boards: boards, earlierProblems: encodingProblems)
    }

    public static func load(text: String, file: String, boards: BoardCatalog) throws(ConfigError) -> (GatewayConfig, Board) {
        try load(text: text, file: file, boards: boards, earlierProblems: [])
    }

    private static func load(text: String, file: String, boards: BoardCatalog,
                             earlierProblems: [ConfigProblem]) throws(ConfigError) -> (GatewayConfig, Board) {
        // Syntax errors do not stop the checks: every problem of the file is reported in one run.
        let (root, syntaxErrors) = TOML.parseAll(text)
        var reader = ConfigReader(file: file)
        reader.append(earlierProblems)
        reader.append(syntaxErrors.map { ConfigProblem(file: file, line: $0.line, key: "", message: $0.message) })
        reader.checkKeys(root, prefix: "", allowed: ["api_key", "board", "log_level", "radio", "audio", "socket", "state", "leds", "limits", "mqtt", "publication", "subscription", "identity"])

        let apiKey = reader.string(root, "api_key", prefix: "")
        if root["api_key"] == nil {
            reader.problem(nil, "api_key", "missing (required: every gateway that should see the others uses the same api_key)")
        } else if let apiKey, let problem = APIKeyRule.problem(apiKey.value) {
            reader.problem(apiKey.line, "api_key", problem)
        }
        let logLevel = reader.choice(root, "log_level", prefix: "", LogLevelName.self)?.value.level ?? .info

        let board = loadBoard(root, boards: boards, reader: &reader)
        let radio = Sections.radio(root, board: board, reader: &reader)
        let audio = Sections.audio(root, board: board, reader: &reader)
        let socket = Sections.socket(root, reader: &reader)
        let state = Sections.state(root, reader: &reader)
        let leds = Sections.leds(root, reader: &reader)
        let limits = Sections.limits(root, reader: &reader)
        let mqtt = MQTTSection.read(root, reader: &reader)
        // A strategy that check-config accepts must do something on this board.
        let hasMicrophone = !audio.capture.isEmpty
        let publications = Entries.publications(root, hasMicrophone: hasMicrophone, reader: &reader)
        let identities = IdentityEntries.read(root, file: file, reader: &reader)
        let subscriptions = Entries.subscriptions(root, defaultLostAfter: radio.lostAfterS, board: board, hasMicrophone: hasMicrophone,
                                                  identities: identities, reader: &reader)

        guard reader.problems.isEmpty, let board, let apiKey else {
            throw ConfigError(problems: reader.problems.sorted { ($0.file == file ? 0 : 1, $0.line ?? 0) < ($1.file == file ? 0 : 1, $1.line ?? 0) })
        }
        let config = GatewayConfig(path: file, apiKey: apiKey.value, boardName: board.name, logLevel: logLevel, radio: radio,
                                   audio: audio, socket: socket, state: state, leds: leds, limits: limits,
                                   publications: publications, subscriptions: subscriptions, identities: identities, mqtt: mqtt)
        return (config, board)
    }

    private static func loadBoard(_ root: TOMLTable, boards: BoardCatalog, reader: inout ConfigReader) -> Board? {
        let name = reader.string(root, "board", prefix: "") ?? (root["board"] == nil ? ("sim", nil) : nil)
        guard let (boardName, line) = name else { return nil }
        guard boards.file(for: boardName) != nil else {
            let known = boards.names()
            let list = known.isEmpty ? "no board files found" : "known: \(known.joined(separator: ", "))"
            reader.problem(line, "board", "unknown board \"\(boardName)\" (\(list); searched \(boards.directories.joined(separator: ", ")))")
            return nil
        }
        do {
            let board = try boards.load(boardName)
            // Lines the board's chip does not have (a Pi 4's has 58).
            for problem in board.lineProblems() {
                reader.append([ConfigProblem(file: board.path, line: nil, key: "leds", message: problem)])
            }
            return board
        } catch {
            reader.problem(line, "board", "board \"\(boardName)\" has problems:")
            reader.append(error.problems)
            return nil
        }
    }
}

/// What an `api_key` must not be. The key is the deployment's only secret: frames are
/// authenticated (and their epoch keys derived) from it, so a blank key or one printed in our own
/// examples would put a gateway on an air anyone can forge.
enum APIKeyRule {
    /// The keys our examples and package ship with, to be replaced before the first start.
    static let placeholders: Set<String> = ["CHANGE-ME", "AIzaSy-example-key", ConfigLoader.placeholderAPIKey]

    static func problem(_ key: String) -> String? {
        if key.isEmpty { return "must not be empty" }
        if key.allSatisfy(\.isWhitespace) { return "is blank; set the key your gateways share" }
        if key == ConfigLoader.placeholderAPIKey {
            return "is still the installed placeholder: set api_key to the key shared by every gateway that should see the others"
        }
        if placeholders.contains(key) {
            return "\"\(key)\" is the example's placeholder; set the key your gateways share (any string: every gateway that should see the others uses the same one)"
        }
        return nil
    }
}

/// `log_level` names (swift-log's levels but `critical`, as docs/product.md §12 lists them).
enum LogLevelName: String, CaseIterable {
    case trace, debug, info, notice, warning, error

    var level: Logger.Level {
        switch self {
        case .trace: .trace
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
    }
}

/// The single tables: [radio], [audio], [socket], [state], [leds], [limits].
enum Sections {
    static func radio(_ root: TOMLTable, board: Board?, reader: inout ConfigReader) -> GatewayConfig.RadioSettings {
        var settings = GatewayConfig.RadioSettings(device: board?.radioDevice ?? "", exclusive: false, intervalMs: 100,
                                                   rotateS: 600, lostAfterS: 10, scanDuty: 100)
        guard let table = reader.table(root, "radio", prefix: "") else { return settings }
        reader.checkKeys(table, prefix: "radio", allowed: ["device", "exclusive", "interval_ms", "rotate_s", "lost_after_s", "scan_duty", "reannounce", "tx_power_1m", "path_loss_x10", "quiet_s"])
        if let (device, line) = reader.string(table, "device", prefix: "radio") {
            if let problem = RadioDeviceName.problem(device) { reader.problem(line, "radio.device", problem) } else { settings.device = device }
        }
        settings.exclusive = reader.boolean(table, "exclusive", prefix: "radio")?.value ?? settings.exclusive
        // 20 ms is the shortest legacy advertising interval (Core 5.0+), 10.24 s the longest.
        settings.intervalMs = reader.integer(table, "interval_ms", prefix: "radio", range: 20...10_240, unit: " ms")?.value ?? settings.intervalMs
        settings.rotateS = reader.integer(table, "rotate_s", prefix: "radio", range: 1...604_800, unit: " s")?.value ?? settings.rotateS
        settings.lostAfterS = reader.integer(table, "lost_after_s", prefix: "radio", range: 1...86_400, unit: " s")?.value ?? settings.lostAfterS
        settings.scanDuty = reader.integer(table, "scan_duty", prefix: "radio", range: 1...100, unit: " %")?.value ?? settings.scanDuty
        settings.reannounce = reader.choice(table, "reannounce", prefix: "radio", GatewayConfig.RadioSettings.Reannounce.self)?.value ?? settings.reannounce
        settings.txPowerAt1m = reader.integer(table, "tx_power_1m", prefix: "radio", range: -100...20, unit: " dBm")?.value ?? settings.txPowerAt1m
        // 1.0 (a waveguide, corridors) to 6.0 (thick walls, obstructed): the published indoor range.
        settings.pathLossX10 = reader.integer(table, "path_loss_x10", prefix: "radio", range: 10...60)?.value ?? settings.pathLossX10
        // At most 2 minutes: a quiet controller is reset within that (issue 28); 0 turns it off.
        settings.quietS = reader.integer(table, "quiet_s", prefix: "radio", range: 0...120, unit: " s")?.value ?? settings.quietS
        return settings
    }

    static func audio(_ root: TOMLTable, board: Board?, reader: inout ConfigReader) -> GatewayConfig.AudioSettings {
        var settings = GatewayConfig.AudioSettings(device: board?.audioDevice ?? "default", protocol: .ultrasoundFast, volume: 50,
                                                   intervalS: 5, capture: board?.captureDevice ?? "")
        guard let table = reader.table(root, "audio", prefix: "") else { return settings }
        reader.checkKeys(table, prefix: "audio", allowed: ["device", "protocol", "volume", "interval_s", "capture"])
        if let (device, line) = reader.string(table, "device", prefix: "audio") {
            if device.isEmpty { reader.problem(line, "audio.device", "must not be empty (\"default\" is ALSA's default PCM)") } else { settings.device = device }
        }
        settings.protocol = reader.choice(table, "protocol", prefix: "audio", AudioProtocol.self)?.value ?? settings.protocol
        settings.volume = reader.integer(table, "volume", prefix: "audio", range: 0...100)?.value ?? settings.volume
        settings.intervalS = reader.integer(table, "interval_s", prefix: "audio", range: 1...3600, unit: " s")?.value ?? settings.intervalS
        settings.capture = reader.string(table, "capture", prefix: "audio")?.value ?? settings.capture
        return settings
    }

    static func socket(_ root: TOMLTable, reader: inout ConfigReader) -> GatewayConfig.SocketSettings {
        var settings = GatewayConfig.SocketSettings(path: "/run/nearby-gateway/gateway.sock", mode: 0o660, group: "", maxClients: 64)
        guard let table = reader.table(root, "socket", prefix: "") else { return settings }
        reader.checkKeys(table, prefix: "socket", allowed: ["path", "mode", "group", "max_clients"])
        if let (path, line) = reader.string(table, "path", prefix: "socket") {
            // sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
            if path.isEmpty { reader.problem(line, "socket.path", "must not be empty") }
            else if path.utf8.count > 107 { reader.problem(line, "socket.path", "is \(path.utf8.count) bytes; a UNIX socket path holds at most 107") }
            else { settings.path = path }
        }
        if let entry = table["mode"], entry.value.integer != nil {
            reader.problem(entry.line, "socket.mode", "write the mode as an octal string, e.g. \"0660\"")
        } else if let (text, line) = reader.string(table, "mode", prefix: "socket") {
            if (3...4).contains(text.count), let mode = UInt32(text, radix: 8), mode <= 0o777 { settings.mode = mode }
            else { reader.problem(line, "socket.mode", "\"\(text)\" is not an octal permission mode such as \"0660\"") }
        }
        settings.group = reader.string(table, "group", prefix: "socket")?.value ?? settings.group
        settings.maxClients = reader.integer(table, "max_clients", prefix: "socket", range: 1...1024)?.value ?? settings.maxClients
        return settings
    }

    static func state(_ root: TOMLTable, reader: inout ConfigReader) -> GatewayConfig.StateSettings {
        var settings = GatewayConfig.StateSettings(path: "/var/lib/nearby-gateway/state.json", defaults: GatewayState())
        guard let table = reader.table(root, "state", prefix: "") else { return settings }
        reader.checkKeys(table, prefix: "state", allowed: ["path", "defaults"])
        if let (path, line) = reader.string(table, "path", prefix: "state") {
            if path.isEmpty || path.hasSuffix("/") { reader.problem(line, "state.path", "must name a file") } else { settings.path = path }
        }
        if let defaults = reader.table(table, "defaults", prefix: "state") {
            reader.checkKeys(defaults, prefix: "state.defaults", allowed: ["background_mode", "permission", "power"])
            settings.defaults.backgroundMode = reader.boolean(defaults, "background_mode", prefix: "state.defaults")?.value ?? settings.defaults.backgroundMode
            settings.defaults.permission = reader.choice(defaults, "permission", prefix: "state.defaults", Permission.self)?.value ?? settings.defaults.permission
            settings.defaults.power = reader.choice(defaults, "power", prefix: "state.defaults", PowerState.self)?.value ?? settings.defaults.power
        }
        return settings
    }

    static func leds(_ root: TOMLTable, reader: inout ConfigReader) -> GatewayConfig.LEDSettings {
        var settings = GatewayConfig.LEDSettings(enabled: true)
        guard let table = reader.table(root, "leds", prefix: "") else { return settings }
        reader.checkKeys(table, prefix: "leds", allowed: ["enabled"])
        settings.enabled = reader.boolean(table, "enabled", prefix: "leds")?.value ?? settings.enabled
        return settings
    }

    static func limits(_ root: TOMLTable, reader: inout ConfigReader) -> GatewayConfig.LimitSettings {
        var settings = GatewayConfig.LimitSettings()
        guard let table = reader.table(root, "limits", prefix: "") else { return settings }
        reader.checkKeys(table, prefix: "limits", allowed: ["found", "publications"])
        settings.found = reader.integer(table, "found", prefix: "limits", range: 16...1_000_000)?.value ?? settings.found
        settings.publications = reader.integer(table, "publications", prefix: "limits", range: 1...1024)?.value ?? settings.publications
        return settings
    }
}
