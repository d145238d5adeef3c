import Foundation
import Testing

extension EndToEnd {
    /// Issue 5's "wildcards behave as MQTT specifies", through the real binary: one found message and
    /// one `$SYS` event fanned out to clients with different filters, each of which gets exactly what
    /// MQTT's matching rules give it.
    @Suite(.serialized)
    struct SocketFilters {
        /// Filter → whether it matches `found/kitchen/timer`, `lost/kitchen/timer`, `$SYS/background`.
        static let cases: [(filter: String, found: Bool, lost: Bool, sys: Bool)] = [
            ("#", true, true, false),                      // a leading wildcard never matches `$` topics
            ("+/#", true, true, false),
            ("+/kitchen/+", true, true, false),
            ("found/+/timer", true, false, false),
            ("found/kitchen/timer/#", true, false, false), // `#` also matches its parent level
            ("found/+", false, false, false),              // `+` is exactly one level
            ("found/garden/#", false, false, false),
            ("lost/#", false, true, false),
            ("$SYS/#", false, false, true),
            ("$SYS/+", false, false, true),
        ]

        @Test("found, lost and $SYS events reach exactly the clients whose filters match, as MQTT specifies")
        func filtersSelectEvents() async throws {
            let folder = try TemporaryFolder("filters")
            let key = TestEnvironment.uniqueAPIKey("filters")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.publications = ["namespace = \"kitchen\"\ntype = \"timer\"\ncontent = \"done\"\nmediums = [\"ble\"]"]
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.lostAfterSeconds = 2
            b.subscriptions = ["namespace = \"kitchen\"\ntype = \"*\"\nmediums = [\"ble\"]\nlost_after_s = 2"]

            let gatewayB = try await b.start()
            let gatewayA = try await a.start()
            let first = try SocketClient(path: b.socketPath)
            #expect(try await first.request("SUB found/#").hasPrefix("OK"))
            try await first.waitForLine(startingWith: "found/kitchen/timer ")

            // Subscribed after the find: the found message comes to them as a retained replay.
            var clients: [SocketClient] = []
            for entry in Self.cases {
                let client = try SocketClient(path: b.socketPath)
                let reply = try await client.request("SUB \(entry.filter)")
                #expect(reply.hasPrefix("OK"), "SUB \(entry.filter) answered \(reply)")
                clients.append(client)
            }
            let control = try SocketClient(path: b.socketPath)
            #expect(try await control.request("SET background off").hasPrefix("OK"))
            let sysIndex = try #require(Self.cases.firstIndex { $0.filter == "$SYS/#" })
            try await clients[sysIndex].waitForLine(startingWith: "$SYS/background ")

            #expect(try await gatewayA.stop() == 0)
            let lostIndex = try #require(Self.cases.firstIndex { $0.filter == "lost/#" })
            try await clients[lostIndex].waitForLine(startingWith: "lost/kitchen/timer ", timeout: .seconds(8))

            // The broker fans one event out to every client before it reads the next request, so a
            // PONG now comes after everything each client was going to get.
            for (entry, client) in zip(Self.cases, clients) {
                #expect(try await client.request("PING") == "PONG")
                let lines = client.received
                let found = lines.filter { $0.hasPrefix("found/kitchen/timer ") }
                #expect(found.count == (entry.found ? 1 : 0), "\(entry.filter): found lines \(found)")
                if entry.found {
                    #expect(found.first?.eventJSON["retained"] as? Bool == true, "\(entry.filter): not a retained replay")
                }
                let lost = lines.filter { $0.hasPrefix("lost/kitchen/timer ") }
                #expect(lost.count == (entry.lost ? 1 : 0), "\(entry.filter): lost lines \(lost)")
                let background = lines.filter { $0.hasPrefix("$SYS/background ") }
                #expect(background.isEmpty == !entry.sys, "\(entry.filter): $SYS/background lines \(background)")
                if !entry.sys {
                    #expect(!lines.contains { $0.hasPrefix("$SYS/") }, "\(entry.filter) got a $SYS event: \(lines)")
                }
            }
            #expect(try await gatewayB.stop() == 0)
        }
    }
}
