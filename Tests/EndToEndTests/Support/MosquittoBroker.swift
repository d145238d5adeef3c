import Foundation

/// A real `mosquitto` (Debian's package) for one test: on a UNIX socket in the test's folder, with a
/// password file, no persistence (a restart forgets every retained message, the worst case for the
/// bridge). Killed when the test drops it (`GatewayProcess`'s deinit), so none is left running.
final class MosquittoBroker: Sendable {
    static let user = "gw"
    static let password = "s3cret-\(UUID().uuidString.prefix(6))"

    let folder: TemporaryFolder
    let socketPath: String
    /// With `tls`: a second listener, TLS on 127.0.0.1, its certificate signed by a CA made for the test.
    let tlsPort: Int?
    var caFile: String { folder.path("ca.crt") }
    private let configPath: String

    init(folder: TemporaryFolder, tls: Bool = false) throws {
        self.folder = folder
        socketPath = folder.path("mqtt.sock")
        var tlsListener = ""
        if tls {
            let port = try Self.freeLoopbackPort()
            try Self.makeCertificates(in: folder)
            tlsListener = """
                listener \(port) 127.0.0.1
                cafile \(folder.path("ca.crt"))
                certfile \(folder.path("server.crt"))
                keyfile \(folder.path("server.key"))
                """
            tlsPort = port
        } else {
            tlsPort = nil
        }
        let passwords = folder.path("passwd")
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
        tool.arguments = ["-b", "-c", passwords, Self.user, Self.password]
        try tool.run()
        tool.waitUntilExit()
        guard tool.terminationStatus == 0 else { throw TimeoutError(description: "mosquitto_passwd failed") }
        // As root, mosquitto would switch to the "mosquitto" user, which cannot read the test's files.
        configPath = try folder.write("mosquitto.conf", """
            listener 0 \(socketPath)
            allow_anonymous false
            password_file \(passwords)
            persistence false
            log_dest stderr
            log_type all
            \(getuid() == 0 ? "user root" : "")
            \(tlsListener)

            """)
    }

    /// A CA for this test only, and the broker's certificate for 127.0.0.1 signed by it (openssl).
    static func makeCertificates(in folder: TemporaryFolder) throws {
        _ = try folder.write("san.ext", "subjectAltName=IP:127.0.0.1\n")
        let script = """
            set -e
            cd '\(folder.path(""))'
            openssl req -x509 -new -nodes -newkey rsa:2048 -keyout ca.key -out ca.crt -days 2 -subj /CN=nearby-test-ca
            openssl req -new -nodes -newkey rsa:2048 -keyout server.key -out server.csr -subj /CN=127.0.0.1
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.ext
            openssl req -x509 -new -nodes -newkey rsa:2048 -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=not-the-broker-ca
            """
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/bin/sh")
        tool.arguments = ["-c", script]
        tool.standardOutput = FileHandle.nullDevice
        tool.standardError = FileHandle.nullDevice
        try tool.run()
        tool.waitUntilExit()
        guard tool.terminationStatus == 0 else { throw TimeoutError(description: "openssl could not make the test CA") }
    }

    /// A port the kernel just handed out on 127.0.0.1 (free unless taken in the instant after).
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TimeoutError(description: "no free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts the broker and waits until it listens.
    func start() async throws -> GatewayProcess {
        let process = try GatewayProcess(arguments: ["-c", configPath], configPath: configPath,
                                         executable: URL(fileURLWithPath: "/usr/sbin/mosquitto"))
        try await process.waitForLog(timeout: .seconds(10), what: "mosquitto running") { $0.contains(" running") }
        return process
    }

    /// `mosquitto_sub` on `topics`, one line per message: `<retain 0|1> <topic> <payload>`; ready once
    /// the broker acknowledged the subscription.
    func subscribe(_ topics: [String], password: String = MosquittoBroker.password) async throws -> GatewayProcess {
        // stdbuf: mosquitto_sub's stdout is a pipe here, which stdio would buffer by the block.
        var arguments = ["-oL", "/usr/bin/mosquitto_sub", "--unix", socketPath, "-u", Self.user, "-P", password, "-d",
                         // MQTT 5's retain-as-published: live messages keep their retain flag (%r).
                         "-V", "5", "--retain-as-published", "-F", "%r %t %p", "-i", "test-sub-\(UUID().uuidString.prefix(6))"]
        for topic in topics { arguments += ["-t", topic] }
        let process = try GatewayProcess(arguments: arguments, configPath: configPath,
                                         executable: URL(fileURLWithPath: "/usr/bin/stdbuf"))
        try await process.waitForLog(timeout: .seconds(10), what: "SUBACK") { $0.contains("SUBACK") }
        return process
    }

    /// `mosquitto_pub` of one message (QoS 1: it returns once the broker has it).
    func publish(_ topic: String, _ message: String) throws {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        tool.arguments = ["--unix", socketPath, "-u", Self.user, "-P", Self.password, "-q", "1", "-t", topic, "-m", message]
        try tool.run()
        tool.waitUntilExit()
        guard tool.terminationStatus == 0 else { throw TimeoutError(description: "mosquitto_pub to \(topic) failed") }
    }

    func mqttSection(prefix: String, clientID: String, password: String = MosquittoBroker.password) -> String {
        """
        [mqtt]
        url = "unix://\(socketPath)"
        client_id = "\(clientID)"
        username = "\(Self.user)"
        password = "\(password)"
        prefix = "\(prefix)"
        reconnect_max_s = 4
        """
    }
}

extension GatewayProcess {
    /// The message lines of a `mosquitto_sub -F "%r %t %p"` (its debug lines left out).
    var messages: [String] { Self.messageLines(log) }

    static func messageLines(_ log: String) -> [String] {
        log.split(separator: "\n").map(String.init).filter { $0.hasPrefix("0 ") || $0.hasPrefix("1 ") }
    }

    /// Waits for a message line starting with `prefix` after the first `after` message lines; returns it.
    @discardableResult
    func waitForMessage(_ prefix: String, after: Int = 0, timeout: Duration = .seconds(20)) async throws -> String {
        try await waitForLog(timeout: timeout, what: "MQTT message \(prefix)") { log in
            Self.messageLines(log).dropFirst(after).contains { $0.hasPrefix(prefix) }
        }
        return messages.dropFirst(after).first { $0.hasPrefix(prefix) } ?? ""
    }
}
