import Foundation
import Logging
import NearbyProtocol
import Radio
import SystemCall
import TestSupport
import Testing

extension EndToEnd {
    /// Issue 13: iBeacons are unauthenticated by nature. A neighbour sending a flood of distinct ones must
    /// neither grow the gateway's memory (found set, retained events) nor push out an authenticated
    /// message. On a private air: the flood would slow every other test's gateways on the shared one.
    @Suite(.serialized)
    struct FaultBeaconFlood {
        @Test("A flood of distinct iBeacons (20,000 taken after warming up): found set at its limit, RSS flat, evictions counted, the message still found")
        func distinctBeaconFlood() async throws {
            let air = try PrivateAir(label: "flood")
            try air.start()
            defer { air.stop() }
            var config = try TestGatewayConfig("flood", name: "f")
            let key = config.apiKey
            config.radioDevice = "h4:\(air.socketPath)"
            config.lostAfterSeconds = 600
            config.subscriptions = ["namespace = \"flood\"\ntype = \"*\"\nmediums = [\"ble\"]\ninclude = [\"ibeacon\"]"]
            config.extra = "[limits]\nfound = 512"
            let gateway = try await config.start(logLevel: "info")
            let watch = try SocketClient(path: config.socketPath)
            _ = try await watch.request("SUB found/flood/#")
            _ = try await watch.request("SUB lost/flood/#")

            // The authenticated message, on the air all along from a transmitter of our own.
            let codec = FrameCodec(apiKey: key, rotateSeconds: config.rotateSeconds)
            let message = Message(namespace: "flood", type: "keep", content: Array("still here".utf8))
            let loop = try EventLoop(name: "publisher")
            defer { loop.shutdown() }
            let transmitter = Radio(device: .h4(path: air.socketPath), logger: Logger(label: "publisher"), loop: loop)
            let tasks = [Task { await transmitter.run() }, Task { for await _ in transmitter.events {} }]
            defer { tasks.forEach { $0.cancel() } }
            await transmitter.setAdvertisements(try codec.bleAdverts(for: message, epoch: codec.epoch(at: Date())))
            _ = try await watch.waitForLine(startingWith: "found/flood/keep ", timeout: .seconds(20))

            // Warm up until the found set is full and has been churning, then measure while the gateway
            // takes 20,000 more distinct beacons: kept, they would cost ~30 MB (1.6 KB each, measured
            // before the found set was bounded), far over the 8 MB allowed. How many of the flooder's
            // reports reach the scanner depends on how busy the machine is (15,109 of 80,000 in one run
            // beside other work, 58,000-odd in another), so the flood goes on, in batches of fresh
            // beacons, until the gateway itself has counted enough: the check is on what it received.
            var next = 0
            let warm = try await flood(air: air, next: &next, batch: 5_000, watch: watch, until: "found_evicted", reaches: 5_000)
            let rssWarm = try residentKiB(gateway.pid)
            let warmEvicted = warm["found_evicted"] as? Int ?? 0
            let end = try await flood(air: air, next: &next, batch: 10_000, watch: watch, until: "found_evicted",
                                      reaches: warmEvicted + 20_000)
            let rssEnd = try residentKiB(gateway.pid)

            print("beacon flood: RSS \(rssWarm) KiB after warming up, \(rssEnd) KiB after \(next) beacons sent; stats \(end)")
            let evicted = (end["found_evicted"] as? Int ?? 0) - warmEvicted
            let seen = (end["adverts_seen"] as? Int ?? 0) - (warm["adverts_seen"] as? Int ?? 0)
            #expect(end["found"] as? Int ?? .max <= 512, "found set over its limit: \(end)")
            #expect(evicted >= 20_000 && seen >= evicted, "evictions not counted (evicted \(evicted), seen \(seen)): \(end)")
            #expect(rssEnd - rssWarm < 8 * 1024, "RSS grew from \(rssWarm) KiB to \(rssEnd) KiB during the flood")
            #expect(!watch.received.contains { $0.hasPrefix("lost/flood/keep ") }, "the authenticated message was evicted")
            let before = watch.received.count
            watch.send("GET found")
            try await watch.waitForLine(startingWith: "OK ", after: before)
            #expect(watch.received[before...].contains { $0.hasPrefix("$SYS/found ") && $0.contains("\"namespace\":\"flood\",\"type\":\"keep\"") },
                    "the message is not in GET found")
            #expect(try await gateway.stop() == 0)
        }

        /// Issue 31, item 4: once a flood's beacons have all expired, the memory they took comes back
        /// (the found set's table and heaps and the broker's retained store are rebuilt smaller, then
        /// `malloc_trim`). Anonymous RSS only (RssAnon): the code pages the flood faults in stay mapped.
        @Test("After a flood fills the default found set (4,096) and every beacon expires, at least a quarter of the anonymous memory it took comes back")
        func memoryComesBackAfterExpiry() async throws {
            let air = try PrivateAir(label: "expiry")
            try air.start()
            defer { air.stop() }
            var config = try TestGatewayConfig("expiry", name: "e")
            config.radioDevice = "h4:\(air.socketPath)"
            config.lostAfterSeconds = 30
            config.subscriptions = ["namespace = \"expiry\"\ntype = \"*\"\nmediums = [\"ble\"]\ninclude = [\"ibeacon\"]\nlost_after_s = 30"]
            let gateway = try await config.start(logLevel: "info")
            let watch = try SocketClient(path: config.socketPath)
            _ = try await stats(watch)
            let before = try residentKiB(gateway.pid, "RssAnon")

            var next = 0
            let full = try await flood(air: air, next: &next, batch: 2_048, watch: watch, until: "found", reaches: 4_096)
            let rssFull = try residentKiB(gateway.pid, "RssAnon")
            try #require(full["found"] as? Int == 4_096, "the found set never filled: \(full)")
            // Expiry announces itself by lost events; the count in GET stats is the truth (a slow
            // reader may be dropped some), so it is asked again after each batch of them.
            _ = try await watch.request("SUB lost/#")
            let deadline = ContinuousClock.now + .seconds(120)
            while try await stats(watch)["found"] as? Int ?? 0 > 0 && ContinuousClock.now < deadline {
                let seen = watch.received.count
                _ = try? await watch.waitForLine(after: seen, timeout: .seconds(10), what: "a lost event") { $0.hasPrefix("lost/") }
            }
            let empty = try await stats(watch)
            let rssAfter = try residentKiB(gateway.pid, "RssAnon")
            print("found expiry: RssAnon \(before) KiB before, \(rssFull) KiB full, \(rssAfter) KiB after every entry expired; \(empty)")
            #expect(empty["found"] as? Int == 0, "entries left: \(empty)")
            #expect(rssFull - before > 2 * 1024, "the flood took too little to tell (\(before) → \(rssFull) KiB)")
            // At least a quarter back, not half: since the retained events are kept compactly the flood
            // takes ~1.2 MB less, and what stays (the queues' buffers, free chunks pinned by live ones:
            // ~1.3–2 MB, docs/footprint-found.md) is a larger share of less: 51–59 % stayed in the runs
            // of that change. The failure this guards against kept it all.
            #expect(rssAfter - before <= (rssFull - before) * 3 / 4,
                    "RssAnon \(before) → \(rssFull) → \(rssAfter) KiB: less than a quarter of the flood's memory came back")
            #expect(try await gateway.stop() == 0)
        }

        /// Issue 28 (fault runs): `GET found` answered in one line of 1.3 MB (4,096 entries), though lines
        /// are at most 4,096 bytes. Now one `$SYS/found` line per entry, then `OK <count>`.
        @Test("GET found: one line per entry, each within 4,096 bytes, closed by OK <count>")
        func getFoundKeepsTheLineBound() async throws {
            let air = try PrivateAir(label: "found-list")
            try air.start()
            defer { air.stop() }
            let folder = try TemporaryFolder("found-list")
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("found-list"), folder: folder, name: "l")
            config.lostAfterSeconds = 600
            config.subscriptions = ["namespace = \"list\"\ntype = \"*\"\nmediums = [\"ble\"]\ninclude = [\"ibeacon\"]"]
            config.radioDevice = "h4:\(air.socketPath)"
            let gateway = try await config.start(logLevel: "info")
            let watch = try SocketClient(path: config.socketPath)
            _ = try await watch.request("SUB found/ibeacon/#")
            // 40 found make a one-line answer of ~12 KB, three times the bound. "running" comes before the
            // radio has reached the relay and enabled scanning (CI once flooded all 300 before it had, and
            // nothing was found), so fresh beacons go out in batches until 40 have been found.
            func found() -> Int { watch.received.filter { $0.hasPrefix("found/ibeacon/") }.count }
            var sent = 0
            while found() < 40 && sent < 2_000 {
                try await flood(air: air, first: sent, count: 100)
                sent += 100
                _ = try? await watch.waitForLine(timeout: .seconds(3), what: "40 beacons found") { _ in found() >= 40 }
            }
            try #require(found() >= 40, "\(sent) beacons sent, \(found()) found")
            let before = watch.received.count
            watch.send("GET found")
            let end = try await watch.waitForLine(startingWith: "OK ", after: before, timeout: .seconds(10))
            let reply = Array(watch.received[before...]).filter { !$0.hasPrefix("found/") && !$0.hasPrefix("$SYS/dropped") }
            let entries = reply.filter { $0.hasPrefix("$SYS/found {") }
            #expect(Int(end.dropFirst(3)) == entries.count, "OK's count is not the number of entry lines: \(end), \(entries.count)")
            #expect(entries.count >= 40, "\(reply.prefix(3))")
            #expect(reply.last == end && reply.count == entries.count + 1, "lines other than entries in the reply: \(reply.prefix(3))")
            for line in reply { #expect(line.utf8.count + 1 <= 4096, "a line of \(line.utf8.count + 1) bytes") }
            for line in entries {
                let object = try JSONSerialization.jsonObject(with: Data(line.dropFirst("$SYS/found ".count).utf8)) as? [String: Any]
                #expect(object?["namespace"] as? String == "ibeacon" && object?["last_seen"] is String, "\(line)")
            }
            #expect(try await gateway.stop() == 0)
        }

        /// Floods fresh beacons (numbered from `next` on) in batches until the gateway's `counter` in
        /// `GET stats` reaches `target`; returns the stats that showed it. Bounded by the test's time
        /// limit, and by 100 batches so that a gateway that stopped counting fails by an assertion. (40
        /// were too few for the arm64 gateway under qemu-user on a busy machine: it took 25,141 of
        /// 500,000 reports, dropping the rest at its queue as it should, and evicted 19,462 of 20,000.)
        private func flood(air: PrivateAir, next: inout Int, batch: Int, watch: SocketClient, until counter: String,
                           reaches target: Int) async throws -> [String: Any] {
            for _ in 0..<100 {
                try await flood(air: air, first: next, count: batch)
                next += batch
                let now = try await stats(watch)
                if now[counter] as? Int ?? 0 >= target { return now }
            }
            let last = try await stats(watch)
            Issue.record("\(next) beacons sent, \(counter) still under \(target): \(last)")
            return last
        }

        private func flood(air: PrivateAir, first: Int, count: Int) async throws {
            let python = ProcessInfo.processInfo.environment["NEARBY_VENV_PYTHON"] ?? "python3"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = [TestEnvironment.repository.appendingPathComponent("tools/flood/beacons.py").path,
                                 air.socketPath, "\(first)", "\(count)"]
            let exited = ChangeSignal()
            process.terminationHandler = { _ in exited.signal() }
            try process.run()
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            await exited.wait(since: 0, until: .now + .seconds(600))
            #expect(!process.isRunning && process.terminationStatus == 0, "the beacon flooder failed")
        }

        private func residentKiB(_ pid: Int32, _ field: String = "VmRSS") throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
                  let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
                throw TimeoutError(description: "no \(field) for \(pid)")
            }
            return kib
        }
    }
}
