import Foundation

extension SocketClient {
    /// Asks `request` until its reply satisfies `predicate` or `timeout` has passed; the last reply
    /// and whether it did. For a state that takes time to reach on the gateway's side (a message
    /// refreshed over several lost_after_s periods): the end is that state, as the gateway reports
    /// it, not a window of the test's. Each reply is also a barrier: every event the gateway
    /// published before it has arrived. Asked again when a line arrives, else after `every`.
    func ask(_ request: String, timeout: Duration, every: Duration = .seconds(1),
             until predicate: (String) -> Bool) async throws -> (reply: String, held: Bool) {
        try await ask(timeout: timeout, every: every, fetch: { try await self.request(request) }, until: predicate)
    }

    /// `ask` with `GET found`'s entries (one `$SYS/found` line each) as the reply.
    func askFound(timeout: Duration, every: Duration = .seconds(1),
                  until predicate: ([FoundEntry]) -> Bool) async throws -> (entries: [FoundEntry], held: Bool) {
        let (entries, held) = try await ask(timeout: timeout, every: every, fetch: { FoundEntry.parse(try await self.requestFound()) },
                                            until: predicate)
        return (entries, held)
    }

    /// `ask` with `GET stats`' JSON as the reply.
    func askStats(timeout: Duration, every: Duration = .seconds(1),
                  until predicate: ([String: Any]) -> Bool) async throws -> (stats: [String: Any], held: Bool) {
        let (reply, held) = try await ask(timeout: timeout, every: every, fetch: { try await stats(self) }, until: predicate)
        return (reply, held)
    }

    private func ask<Reply>(timeout: Duration, every: Duration, fetch: () async throws -> Reply,
                            until predicate: (Reply) -> Bool) async throws -> (reply: Reply, held: Bool) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let reply = try await fetch()
            if predicate(reply) { return (reply, true) }
            guard ContinuousClock.now < deadline else { return (reply, false) }
            let seen = changedGeneration
            await waitForChange(since: seen, until: min(deadline, .now + every))
        }
    }
}

/// One entry of a `GET found` reply: when the gateway first and last saw the message.
struct FoundEntry {
    var namespace: String
    var type: String
    var firstSeen: Date
    var lastSeen: Date

    /// The entries of a `GET found` reply (`SocketClient.requestFound`: one JSON object per entry).
    static func parse(_ objects: [String]) -> [FoundEntry] {
        let array = objects.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return array.compactMap { entry in
            guard let namespace = entry["namespace"] as? String, let type = entry["type"] as? String,
                  let first = (entry["first_seen"] as? String).flatMap({ try? Date($0, strategy: format) }),
                  let last = (entry["last_seen"] as? String).flatMap({ try? Date($0, strategy: format) })
            else { return nil }
            return FoundEntry(namespace: namespace, type: type, firstSeen: first, lastSeen: last)
        }
    }
}
