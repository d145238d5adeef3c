import NearbyProtocol

/// What SIGHUP can and cannot change in a running gateway. The manager takes a new api key,
/// `rotate_s`, `lost_after_s`, `log_level`, publications and subscriptions; everything that was opened
/// or bound at start-up (socket, state file, radio, sound card, LED lines, board) keeps its start-up
/// value until the next start. docs/config.md lists both.
extension GatewayConfig {
    /// A key whose new value waits for a restart.
    public struct RestartOnlyChange: Sendable, Equatable, CustomStringConvertible {
        public var key: String
        public var running: String
        public var requested: String

        public var description: String { "\(key) changed (\(requested), running with \(running)): needs a restart" }
    }

    /// Keys SIGHUP applies (for the log line that says so).
    public static let reloadableKeys = ["api_key", "log_level", "radio.rotate_s", "radio.lost_after_s", "radio.tx_power_1m", "radio.path_loss_x10", "limits.publications", "[[publication]]", "[[subscription]]"]

    /// The restart-only keys whose value in `new` differs from this (running) config, in file order.
    public func restartOnlyChanges(to new: GatewayConfig) -> [RestartOnlyChange] {
        var changes: [RestartOnlyChange] = []
        func compare<T: Equatable>(_ key: String, _ running: T, _ requested: T, _ text: (T) -> String = { "\($0)" }) {
            if running != requested { changes.append(RestartOnlyChange(key: key, running: text(running), requested: text(requested))) }
        }
        let octal = { (mode: UInt32) in "0" + String(mode, radix: 8) }
        let quoted = { (text: String) in "\"\(text)\"" }
        compare("board", boardName, new.boardName, quoted)
        compare("radio.device", radio.device, new.radio.device, quoted)
        compare("radio.exclusive", radio.exclusive, new.radio.exclusive)
        compare("radio.interval_ms", radio.intervalMs, new.radio.intervalMs)
        compare("radio.scan_duty", radio.scanDuty, new.radio.scanDuty)
        compare("radio.reannounce", radio.reannounce.rawValue, new.radio.reannounce.rawValue, quoted)
        compare("radio.quiet_s", radio.quietS, new.radio.quietS)
        compare("audio.device", audio.device, new.audio.device, quoted)
        compare("audio.protocol", audio.protocol.rawValue, new.audio.protocol.rawValue, quoted)
        compare("audio.volume", audio.volume, new.audio.volume)
        compare("audio.interval_s", audio.intervalS, new.audio.intervalS)
        compare("audio.capture", audio.capture, new.audio.capture, quoted)
        compare("socket.path", socket.path, new.socket.path, quoted)
        compare("socket.mode", socket.mode, new.socket.mode, octal)
        compare("socket.group", socket.group, new.socket.group, quoted)
        compare("socket.max_clients", socket.maxClients, new.socket.maxClients)
        compare("state.path", state.path, new.state.path, quoted)
        compare("state.defaults", state.defaults, new.state.defaults) {
            "{background_mode = \($0.backgroundMode), permission = \"\($0.permission.rawValue)\", power = \"\($0.power.rawValue)\"}"
        }
        compare("leds.enabled", leds.enabled, new.leds.enabled)
        compare("limits.found", limits.found, new.limits.found)
        compare("mqtt", mqtt.map(\.url) ?? "none", new.mqtt.map(\.url) ?? "none")
        if let running = mqtt, let requested = new.mqtt, running.url == requested.url, running != requested {
            changes.append(RestartOnlyChange(key: "mqtt", running: "(settings of \(running.url))", requested: "(changed settings)"))
        }
        return changes
    }
}
