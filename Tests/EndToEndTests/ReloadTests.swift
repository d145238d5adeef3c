import Foundation
import Testing

extension EndToEnd {
    /// Issue 13: SIGHUP with another `rotate_s` and another `log_level`.
    @Suite(.serialized)
    struct Reload {
        @Test("SIGHUP with rotate_s 60 → 600 and log_level debug → info: a peer configured with 600 finds the messages, debug lines stop")
        func reloadRecomputesTheEpochAndAppliesTheLogLevel() async throws {
            var a = try TestGatewayConfig("reload13")
            a.rotateSeconds = 60
            a.publications = ["namespace = \"reload\"\ntype = \"kept\"\ncontent = \"k\"\nmediums = [\"ble\"]"]
            // No --log-level: the config's log_level rules.
            let gatewayA = try await a.start(logLevel: nil)

            // The new config: 600 s epochs, info level. A peer that starts with it computes epoch t/600.
            a.rotateSeconds = 600
            a.logLevel = "info"
            try a.write()
            kill(gatewayA.pid, SIGHUP)
            try await gatewayA.waitForLog("SIGHUP: config reloaded")

            var b = a.peer("b")
            b.rotateSeconds = 600
            b.subscriptions = ["namespace = \"reload\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            // --log-level debug on the command line, log_level = "error" in the file.
            b.logLevel = "error"
            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB found/#")
            let found = try await watch.waitForLine(startingWith: "found/reload/kept ", timeout: .seconds(15))
            #expect(found.eventJSON["text"] as? String == "k")

            // A's runtime publications go out with the new epoch too, and its debug lines have stopped:
            // nothing at debug level between the reload and the second PUB's info line.
            let control = try SocketClient(path: a.socketPath)
            let first = try await control.request("PUB reload/fresh \(Data("f".utf8).base64EncodedString()) mediums=ble")
            let second = try await control.request("PUB reload/other \(Data("o".utf8).base64EncodedString()) mediums=ble")
            #expect(first.hasPrefix("OK ") && second.hasPrefix("OK "))
            try await watch.waitForLine(startingWith: "found/reload/fresh ", timeout: .seconds(15))
            let secondLine = "publishing handle=\(second.dropFirst(3))"
            try await gatewayA.waitForLog(secondLine)
            let afterReload = try #require(gatewayA.log.components(separatedBy: "SIGHUP: config reloaded").last)
            let window = try #require(afterReload.components(separatedBy: secondLine).first)
            #expect(!window.contains(" debug "), "debug lines after log_level became info:\n\(window)")
            #expect(window.contains("publishing handle=\(first.dropFirst(3))"), "info lines still logged:\n\(window)")

            // B: SET debug off goes back to --log-level (debug), not to the file's "error".
            let controlB = try SocketClient(path: b.socketPath)
            #expect(try await controlB.request("SET debug on") == "OK")
            #expect(try await controlB.request("SET debug off") == "OK")
            #expect(try await controlB.request("PUB reload/b \(Data("b".utf8).base64EncodedString()) mediums=ble").hasPrefix("OK "))
            // The PUB changes the air plan, logged at debug level.
            try await gatewayB.waitForLog(timeout: .seconds(10), what: "a debug line after SET debug off") { log in
                guard let range = log.range(of: "debug logging off") else { return false }
                return log[range.upperBound...].contains("air plan")
            }

            #expect(try await gatewayA.stop() == 0)
            #expect(try await gatewayB.stop() == 0)
        }
    
        @Test("SIGHUP with an unchanged config resets no GET stats counter: each runs from process start (issue 41)")
        func reloadKeepsEveryCounter() async throws {
            let folder = try TemporaryFolder("hupcount")
            let key = TestEnvironment.uniqueAPIKey("hupcount")
            var sender = TestGatewayConfig(apiKey: key, folder: folder, name: "sender")
            sender.publications = ["namespace = \"hupcount\"\ntype = \"x\"\ncontent = \"c\"\nmediums = [\"ble\"]"]
            // Another deployment on the same air: its frames are dropped (authentication-failed) by the receiver.
            var stranger = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("hupstranger"), folder: folder, name: "stranger")
            stranger.publications = sender.publications
            var receiver = TestGatewayConfig(apiKey: key, folder: folder, name: "receiver")
            receiver.subscriptions = ["namespace = \"hupcount\"\ntype = \"*\"\nmediums = [\"ble\"]"]

            let gateway = try await receiver.start()
            let watch = try SocketClient(path: receiver.socketPath)
            _ = try await watch.request("SUB found/#")
            let senders = [try await sender.start(), try await stranger.start()]
            try await watch.waitForLine(startingWith: "found/hupcount/x ", timeout: .seconds(15))
            var before = try await stats(watch)
            let deadline = ContinuousClock.now + .seconds(10)
            while ((before["frames_dropped"] as? [String: Int])?["authentication-failed"] ?? 0) == 0, ContinuousClock.now < deadline {
                before = try await stats(watch)
            }
            #expect((before["messages_decoded"] as? Int ?? 0) > 0)
            #expect(((before["frames_dropped"] as? [String: Int])?["authentication-failed"] ?? 0) > 0, "the stranger's frames were never dropped")
            for sending in senders { try await sending.stop() }
            // Counters sampled after the senders stopped, so nothing counts up between here and the reload.
            before = try await stats(watch)

            kill(gateway.pid, SIGHUP)
            try await gateway.waitForLog("SIGHUP: config reloaded")
            let after = try await stats(watch)
            let counters = ["adverts_seen", "audio_payloads_seen", "messages_decoded", "hci_commands", "radio_quiet_resets",
                            "found_evicted", "found_refused", "publications_refused"]
            for name in counters {
                let was = try #require(before[name] as? Int, "\(name) missing from GET stats")
                #expect(after[name] as? Int ?? -1 >= was, "\(name) went from \(was) to \(after[name] ?? "nothing") across a reload")
            }
            for group in ["frames_dropped", "capture", "radio_dropped"] {
                let was = try #require(before[group] as? [String: Int], "\(group) missing from GET stats")
                let now = after[group] as? [String: Int] ?? [:]
                for (name, count) in was {
                    #expect(now[name] ?? -1 >= count, "\(group).\(name) went from \(count) to \(now[name] ?? -1) across a reload")
                }
            }
            #expect(try await gateway.stop() == 0)
        }

        @Test("SIGHUP with a new socket.path and log_level: the socket change is logged as needing a restart, the rest applied; a refused reload sets $SYS/error/config, a good one clears it")
        func reloadSaysWhatNeedsARestart() async throws {
            var config = try TestGatewayConfig("hupkeys", name: "k")
            let folder = config.folder
            let gateway = try await config.start(logLevel: nil)
            let client = try SocketClient(path: config.socketPath)
            _ = try await client.request("SUB $SYS/#")

            let moved = folder.path("moved.sock")
            config.publications = ["namespace = \"hup\"\ntype = \"new\"\ncontent = \"n\"\nmediums = [\"ble\"]"]
            var reloaded = config
            reloaded.socketPath = moved
            reloaded.logLevel = "notice"
            try reloaded.write()
            kill(gateway.pid, SIGHUP)
            try await gateway.waitForLog("SIGHUP: config reloaded")
            #expect(gateway.log.contains("SIGHUP: socket.path changed (\"\(moved)\", running with \"\(config.socketPath)\"): needs a restart"),
                    "the skipped change is logged with both values:\n\(gateway.log)")
            #expect(gateway.log.contains("need_restart=socket.path"))
            // Applied: the new publication; still serving on the old path, nothing at the new one.
            #expect(try await client.requestList("publications").contains { $0.contains("\"type\":\"new\"") })
            #expect(!FileManager.default.fileExists(atPath: moved))
            // Applied: log_level = notice, so PUB's info line is no longer written (SET debug on's notice is).
            #expect(try await client.request("PUB hup/quiet \(Data("q".utf8).base64EncodedString()) mediums=ble").hasPrefix("OK "))
            #expect(try await client.request("SET debug on") == "OK")
            try await gateway.waitForLog("debug logging on")
            let window = try #require(gateway.log.components(separatedBy: "SIGHUP: config reloaded").last?
                .components(separatedBy: "debug logging on").first)
            #expect(!window.contains("publishing"), "an info line after log_level became notice:\n\(window)")
            #expect(try await client.request("SET debug off") == "OK")

            // A broken file: refused whole, $SYS/error/config set and listed, then cleared by a good one.
            _ = try folder.write("k.toml", config.toml + "\nthis is not toml\n")
            kill(gateway.pid, SIGHUP)
            let set = try await client.waitForLine(timeout: .seconds(10), what: "$SYS/error/config set") {
                $0.hasPrefix("$SYS/error/config ") && $0.eventJSON["set"] as? Bool == true
            }
            #expect((set.eventJSON["message"] as? String ?? "").contains("k.toml"), "the error names the file: \(set)")
            #expect(try await client.request("GET errors") == "OK [\"config\"]")
            _ = try config.write()
            kill(gateway.pid, SIGHUP)
            try await client.waitForLine(timeout: .seconds(10), what: "$SYS/error/config cleared") {
                $0.hasPrefix("$SYS/error/config ") && $0.eventJSON["set"] as? Bool == false
            }
            #expect(try await client.request("GET errors") == "OK []")
            #expect(try await gateway.stop() == 0)
        }
    }
}
