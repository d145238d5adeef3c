import FoundationEssentials
import Glibc
import NearbyProtocol
import SystemCall

/// `[mqtt]` (docs/config.md, docs/mqtt.md), every problem reported with its line.
enum MQTTSection {
    static let keys = ["url", "client_id", "username", "password", "password_file", "ca_file", "prefix", "qos", "keepalive_s",
                       "queue", "reconnect_max_s", "discovery", "discovery_prefix", "commands",
                       "room", "fleet"]

    static func read(_ root: TOMLTable, reader: inout ConfigReader) -> MQTTSettings? {
        guard let table = reader.table(root, "mqtt", prefix: "") else { return nil }
        reader.checkKeys(table, prefix: "mqtt", allowed: keys)
        let before = reader.problems.count
        var transport: MQTTSettings.Transport?
        let url = reader.string(table, "url", prefix: "mqtt")
        if let (text, line) = url {
            switch MQTTSettings.transport(parsing: text) {
            case .success(let value): transport = value
            case .failure(let problem): reader.problem(line, "mqtt.url", "\"\(text)\" \(problem.message)")
            }
        } else if table["url"] == nil {
            reader.problem(table.line, "mqtt.url", "missing: the broker, e.g. \"mqtt://localhost:1883\" or \"unix:///run/mosquitto/mosquitto.sock\"")
        }
        var settings = MQTTSettings(url: url?.value ?? "", transport: transport ?? .unix(path: "/"))
        if let (id, line) = reader.string(table, "client_id", prefix: "mqtt") {
            if id.isEmpty || id.utf8.count > 23 * 4 { reader.problem(line, "mqtt.client_id", "must be 1 to 92 bytes") } else { settings.clientID = id }
        } else {
            settings.clientID = "nearby-gateway-" + ProcessInfo.processInfo.hostName.prefix(40)
        }
        settings.username = reader.string(table, "username", prefix: "mqtt")?.value
        let password = reader.string(table, "password", prefix: "mqtt")
        let passwordFile = reader.string(table, "password_file", prefix: "mqtt")
        if let password, passwordFile != nil {
            reader.problem(password.line, "mqtt.password", "set password or password_file, not both")
        }
        if (password != nil || passwordFile != nil), settings.username == nil {
            reader.problem((password ?? passwordFile)?.line, "mqtt.username", "missing: a password needs a username")
        }
        settings.password = password?.value
        if let (path, line) = passwordFile {
            if let problem = privateFileProblem(path) { reader.problem(line, "mqtt.password_file", problem) } else { settings.passwordFile = path }
        }
        if let (path, line) = reader.string(table, "ca_file", prefix: "mqtt") {
            if !FileManager.default.isReadableFile(atPath: path) { reader.problem(line, "mqtt.ca_file", "\(path) is not a readable file") }
            settings.caFile = path
        }
        if case .tls = transport, settings.caFile == nil {
            reader.problem(url?.line, "mqtt.ca_file", "missing: mqtts:// needs the CA file that signed the broker's certificate")
        }
        if let (prefix, line) = reader.string(table, "prefix", prefix: "mqtt") {
            if let problem = topicPrefixProblem(prefix) { reader.problem(line, "mqtt.prefix", problem) } else { settings.prefix = prefix }
        }
        if let (prefix, line) = reader.string(table, "discovery_prefix", prefix: "mqtt") {
            if let problem = topicPrefixProblem(prefix) { reader.problem(line, "mqtt.discovery_prefix", problem) } else { settings.discoveryPrefix = prefix }
        }
        settings.qos = reader.integer(table, "qos", prefix: "mqtt", range: 0...1)?.value ?? settings.qos
        settings.keepaliveS = reader.integer(table, "keepalive_s", prefix: "mqtt", range: 5...3600, unit: " s")?.value ?? settings.keepaliveS
        settings.queue = reader.integer(table, "queue", prefix: "mqtt", range: 1...100_000)?.value ?? settings.queue
        settings.reconnectMaxS = reader.integer(table, "reconnect_max_s", prefix: "mqtt", range: 1...3600, unit: " s")?.value ?? settings.reconnectMaxS
        settings.discovery = reader.boolean(table, "discovery", prefix: "mqtt")?.value ?? settings.discovery
        settings.commands = reader.boolean(table, "commands", prefix: "mqtt")?.value ?? settings.commands
        if let (room, line) = reader.string(table, "room", prefix: "mqtt") {
            if let problem = MQTTSettings.roomProblem(room) { reader.problem(line, "mqtt.room", problem) } else { settings.room = room }
        }
        if let (fleet, line) = reader.string(table, "fleet", prefix: "mqtt") {
            if let problem = topicPrefixProblem(fleet) { reader.problem(line, "mqtt.fleet", problem) } else { settings.fleet = fleet }
        }
        return reader.problems.count == before ? settings : nil
    }

    /// The password file must be readable by the gateway and by no one else.
    static func privateFileProblem(_ path: String) -> String? {
        var info = stat()
        do throws(Errno) {
            try SystemCall.retrying { stat(path, &info) }
        } catch {
            return "\(path): \(error)"
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        let mode = info.st_mode & 0o777
        if mode & 0o077 != 0 { return "\(path) is readable by others (mode 0\(String(mode, radix: 8))); chmod 600 it" }
        return nil
    }

    static func topicPrefixProblem(_ prefix: String) -> String? {
        if prefix.isEmpty { return "must not be empty" }
        if prefix.hasPrefix("$") { return "must not start with $ (reserved by brokers)" }
        if prefix.hasPrefix("/") || prefix.hasSuffix("/") { return "must not start or end with /" }
        if prefix.contains(where: { $0 == "+" || $0 == "#" || $0 == "\0" }) { return "must not contain +, # or NUL" }
        return nil
    }
}
