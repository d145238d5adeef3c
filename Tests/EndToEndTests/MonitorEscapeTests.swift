import Foundation
import Testing

extension EndToEnd {
    /// Issue 28 (fault runs): a message whose content is `ESC ]0;pwned BEL ESC [2J CR fake line`
    /// retitled and cleared the terminal of every `monitor` that found it. Through the air, the
    /// gateway and `nearby-gateway monitor` in pipe mode: the line shows the controls escaped.
    @Suite(.serialized)
    struct MonitorEscapes {
        @Test("monitor's pipe mode prints hostile content from the air with its control characters escaped")
        func hostileContentIsEscaped() async throws {
            let folder = try TemporaryFolder("escape")
            let key = TestEnvironment.uniqueAPIKey("escape")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = [#"namespace = "hall"\#ntype = "sign"\#ncontent = "\u001b]0;pwned\u0007\u001b[2J\rfake line"\#nmediums = ["ble"]"#]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.subscriptions = ["namespace = \"hall\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            let gatewayB = try await b.start()
            let monitor = try GatewayProcess(arguments: ["monitor", "--socket", b.socketPath, "found/#"], configPath: b.socketPath)
            let gatewayA = try await a.start()
            try await monitor.waitForLog("fake line", timeout: .seconds(20))
            let line = monitor.log.split(separator: "\n").first { $0.contains("fake line") }.map(String.init) ?? ""
            #expect(!monitor.log.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) },
                    "monitor printed a control character: \(monitor.log.debugDescription)")
            #expect(line == #"found/hall/sign "\x1b]0;pwned\x07\x1b[2J\rfake line" medium=ble rssi=-"#, "\(line)")
            _ = try await monitor.stop()
            #expect(try await gatewayA.stop() == 0)
            #expect(try await gatewayB.stop() == 0)
        }
    }
}
