import Foundation
import Testing

extension EndToEnd {
    /// docs/product.md §10: the process as systemd runs it.
    @Suite(.serialized)
    struct ServiceBehaviour {
        @Test("With NOTIFY_SOCKET set the gateway sends READY=1 and, on SIGTERM, STOPPING=1, and exits 0")
        func notifiesSystemd() async throws {
            let folder = try TemporaryFolder("notify")
            let notify = try NotifySocket(path: folder.path("notify.sock"))
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("notify"), folder: folder, name: "n")
            let gateway = try config.launch(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"])
            var received: [String] = []
            while !received.contains(where: { $0.contains("READY=1") }) {
                received.append(try notify.receive(timeout: .seconds(15)))
            }
            // The watchdog is fed at half of WATCHDOG_USEC, after READY.
            while !received.contains(where: { $0.contains("WATCHDOG=1") }) {
                received.append(try notify.receive(timeout: .seconds(5)))
            }
            #expect(received.firstIndex { $0.contains("READY=1") }! < received.firstIndex { $0.contains("WATCHDOG=1") }!)
            kill(gateway.pid, SIGTERM)
            var messages: [String] = []
            while !messages.contains(where: { $0.contains("STOPPING=1") }) {
                messages.append(try notify.receive(timeout: .seconds(5)))
            }
            #expect(try await gateway.stop() == 0)
        }

        /// Issue 27: the parts are services of one ServiceGroup, which stops them in the reverse of
        /// their start-up order: the manager first (off the air, state flushed), the socket last.
        @Test("SIGTERM stops the parts in reverse start-up order: manager, audio, LEDs, socket, then the event loop; exit 0")
        func shutdownOrder() async throws {
            let folder = try TemporaryFolder("order")
            let config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("order"), folder: folder, name: "o")
            let gateway = try await config.start(logLevel: "debug")
            #expect(try await gateway.stop() == 0)
            #expect(gateway.stoppedServices == ["manager", "audio", "leds", "socket", "loop"], "\(gateway.log.suffix(2_000))")
        }

        @Test("With the radio down, STATUS= names bluetooth-power and its cause, not just running")
        func statusNamesErrors() async throws {
            let folder = try TemporaryFolder("status")
            let notify = try NotifySocket(path: folder.path("notify.sock"))
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("status"), folder: folder, name: "s")
            // No btvirt listens at this path: the radio cannot come up.
            let missing = folder.path("no-btvirt-here")
            config.radioDevice = "h4:\(missing)"
            let gateway = try config.launch(environment: ["NOTIFY_SOCKET": notify.path])
            var received: [String] = []
            while !received.contains(where: { $0.contains("STATUS=running with an error: bluetooth-power (") }) {
                received.append(try notify.receive(timeout: .seconds(15)))
            }
            let status = received.last { $0.contains("bluetooth-power") }!
            #expect(status.contains(missing), "the status names the device: \(status)")
            #expect(try await gateway.stop() == 0)
        }

        @Test("SIGHUP reloads the config; an invalid config is refused and the running one kept")
        func sighupReloads() async throws {
            let folder = try TemporaryFolder("reload")
            let key = TestEnvironment.uniqueAPIKey("reload")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"room\"\ntype = \"first\"\ncontent = \"1\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 2
            b.subscriptions = ["namespace = \"room\"\ntype = \"*\"\nmediums = [\"ble\"]\nlost_after_s = 2"]
            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB +/room/#")
            let gatewayA = try await a.start()
            try await watch.waitForLine(startingWith: "found/room/first ")

            // A broken file: refused, A keeps publishing what it had.
            _ = try folder.write("a.toml", a.toml + "\nthis is not toml\n")
            kill(gatewayA.pid, SIGHUP)
            try await gatewayA.waitForLog("keeping the running config")
            #expect(gatewayA.log.contains("a.toml:"), "the refusal names the file and line")

            // A good one: the new publication replaces the old.
            a.publications = ["namespace = \"room\"\ntype = \"second\"\ncontent = \"2\"\nmediums = [\"ble\"]"]
            _ = try a.write()
            kill(gatewayA.pid, SIGHUP)
            try await watch.waitForLine(startingWith: "found/room/second ")
            try await watch.waitForLine(startingWith: "lost/room/first ", timeout: .seconds(8))
            try await gatewayA.stop()
            try await gatewayB.stop()
        }
    }
}

/// The receiving end of sd_notify(3): a datagram socket the test binds and names in NOTIFY_SOCKET.
final class NotifySocket: Sendable {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw TimeoutError(description: "cannot bind \(path): \(String(cString: strerror(errno)))") }
    }

    /// One datagram, waiting at most `timeout` (poll(2) with a deadline; blocking is fine in a test thread).
    func receive(timeout: Duration) throws -> String {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&descriptor, 1, milliseconds) == 1 else { throw TimeoutError(description: "no sd_notify message within \(timeout)") }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
    }

    deinit { close(fd) }
}
