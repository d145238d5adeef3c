import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// Issue 40: a phone followed by its IRK through the real binary. The phone's resolvable private
    /// addresses are made by PyPI cryptography (tools/identity/rpa.py), not by the gateway's code;
    /// the controller is scripted on the H4 transport so the test can rotate the address and set an RSSI.
    @Suite(.serialized)
    struct Identity {
        /// The forms an owner configures the same key in (docs/identities.md).
        enum Form: String, CaseIterable { case hex, base64, file }

        @Test("An identity configured as hex, base64 or irk_file is found from its RPAs, kept across a rotation with no lost; a wrong IRK finds nothing", arguments: Form.allCases)
        func foundAcrossARotation(form: Form) async throws {
            let folder = try TemporaryFolder("identity-\(form.rawValue)")
            var generator = SystemRandomNumberGenerator()
            let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Home Assistant's forms: hex as the AES key is written, base64 reversed (a Keychain's order).
            let hex = key.map { String(format: "%02x", $0) }.joined()
            let base64 = Data(key.reversed()).base64EncodedString()
            let stranger = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
            let addresses = try makeRPAs(key: form == .hex ? hex : base64, count: 2)

            let controller = try ScriptedController(path: folder.path("ctl.sock"), advert: [0x02, 0x01, 0x1A, 0x05, 0xFF, 0x4C, 0x00, 0x10, 0x01],
                                                    reportInterval: .milliseconds(100))
            defer { controller.stop() }
            controller.setAddress(addresses[0])
            controller.setRSSI(-60)

            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("identity"), folder: folder, name: "g")
            config.radioDevice = "h4:\(controller.path)"
            config.lostAfterSeconds = 3
            switch form {
            case .hex: config.identities = ["name = \"phone\"\nirk = \"\(hex)\""]
            case .base64: config.identities = ["name = \"phone\"\nirk = \"\(base64)\""]
            case .file:
                let path = try folder.write("phone.irk", base64 + "\n")
                chmod(path, 0o600)
                config.identities = ["name = \"phone\"\nirk_file = \"\(path)\""]
            }
            // A second identity whose key resolves none of the phone's addresses.
            config.identities.append("name = \"stranger\"\nirk = \"\(stranger)\"")
            config.subscriptions = ["namespace = \"people\"\nmediums = [\"ble\"]\nmode = \"scan\"\ninclude = [\"identity\"]\nlost_after_s = 3"]
            let gateway = try await config.start()
            let client = try SocketClient(path: config.socketPath)
            _ = try await client.request("SUB found/identity/#")
            _ = try await client.request("SUB lost/identity/#")

            let found = try await client.waitForLine(startingWith: "found/identity/phone ", timeout: .seconds(20)).eventJSON
            #expect(found["rssi"] as? Int == -60, "\(found)")
            #expect(found["rssi_avg"] as? Double == -60, "\(found)")
            // radio.tx_power_1m's default -59 at -60 dBm: 10^(1/25) = 1.10 m.
            #expect(abs((found["distance_m"] as? Double ?? 0) - 1.10) < 0.01, "\(found)")

            // The phone rotates its address: the gateway resolves the new one (a second resolved
            // address in its stats), and the entry, keyed by the identity, stays.
            controller.setAddress(addresses[1])
            let rotated = ContinuousClock.now
            let (after, resolvedBoth) = try await client.askStats(timeout: .seconds(20)) {
                (($0["identity_cache"] as? [String: Any])?["resolved"] as? Int ?? 0) >= 2
            }
            #expect(resolvedBoth, "\(after)")
            // Past lost_after_s (3 s) from the rotation, by the gateway's own last_seen: an entry keyed by
            // the first address would have been lost by then.
            let rotatedAt = Date()
            let (entries, seenAfter) = try await client.askFound(timeout: .seconds(20)) { entries in
                entries.contains { $0.type == "phone" && $0.lastSeen > rotatedAt.addingTimeInterval(4) }
            }
            #expect(seenAfter, "\(entries)")
            #expect(ContinuousClock.now - rotated >= .seconds(4))
            #expect(entries.map { "\($0.namespace)/\($0.type)" } == ["identity/phone"], "the wrong key finds nothing: \(entries)")
            #expect(!client.received.contains { $0.hasPrefix("lost/identity/") }, "\(client.received)")
            #expect(client.received.filter { $0.hasPrefix("found/identity/") }.count == 1, "\(client.received)")

            // Each new address cost one AES per identity tried (the phone's key comes first, so one), once;
            // later reports were cache hits.
            let counters = try await stats(client)
            let cache = counters["identity_cache"] as? [String: Any] ?? [:]
            #expect(counters["identity_resolutions"] as? Int == 2, "\(counters)")
            #expect(cache["misses"] as? Int == 2 && (cache["hits"] as? Int ?? 0) > 10, "\(counters)")

            // The key is a secret: neither the log nor the socket carries it, in any form.
            let secrets = [hex, hex.uppercased(), base64]
            #expect(!secrets.contains { gateway.log.contains($0) })
            #expect(!secrets.contains { secret in client.received.contains { $0.contains(secret) } })

            // The phone leaves: lost, once.
            controller.reporting = false
            _ = try await client.waitForLine(startingWith: "lost/identity/phone ", timeout: .seconds(15))
            #expect(try await gateway.stop() == 0)
        }

        /// The phone's addresses from `key` (Home Assistant's forms), by PyPI cryptography.
        private func makeRPAs(key: String, count: Int) throws -> [String] {
            let python = ProcessInfo.processInfo.environment["NEARBY_VENV_PYTHON"]
                ?? TestEnvironment.repository.appendingPathComponent(".venv/bin/python").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = [TestEnvironment.repository.appendingPathComponent("tools/identity/rpa.py").path, key, String(count)]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw TimeoutError(description: "tools/identity/rpa.py failed") }
            let addresses = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
            guard addresses.count == count else { throw TimeoutError(description: "tools/identity/rpa.py printed \(addresses)") }
            return addresses
        }
    }
}
