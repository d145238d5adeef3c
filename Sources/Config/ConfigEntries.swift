import FoundationEssentials
import NearbyProtocol

/// `[[publication]]` and `[[subscription]]` entries.
enum Entries {
    /// `hasMicrophone`: `audio.capture` names a device (an audio-only scan publication listens with it).
    static func publications(_ root: TOMLTable, hasMicrophone: Bool = true, reader: inout ConfigReader) -> [PublicationConfig] {
        tables(root, "publication", reader: &reader).compactMap { index, table in
            let prefix = "publication[\(index + 1)]"
            reader.checkKeys(table, prefix: prefix, allowed: ["namespace", "type", "content", "content_base64", "mediums", "mode", "background", "ttl_s"])
            let before = reader.problems.count
            let namespace = name(table, "namespace", prefix: prefix, allowWildcard: false, reader: &reader)
            let type = name(table, "type", prefix: prefix, allowWildcard: false, reader: &reader)
            let content = self.content(table, prefix: prefix, reader: &reader)
            let mediums = reader.choices(table, "mediums", prefix: prefix, Medium.self, allowEmpty: false)?.value ?? Medium.allCases
            let mode = reader.choice(table, "mode", prefix: prefix, DiscoveryMode.self)?.value ?? .both
            let background = reader.boolean(table, "background", prefix: prefix)
            let ttl = reader.integer(table, "ttl_s", prefix: prefix, range: 0...31_536_000, unit: " s")?.value ?? 0
            checkBackground(background, mediums: mediums, table: table, prefix: prefix, reader: &reader)
            if mode == .scan, mediums == [.audio], !hasMicrophone {
                reader.problem(table["mode"]?.line ?? table.line, "\(prefix).mode",
                               "a scan publication on audio only listens for subscribers on the microphone, but audio.capture is empty (set audio.capture, add \"ble\" to mediums, or use mode = \"broadcast\")")
            }
            if let namespace, let type, let (bytes, line) = content {
                for medium in mediums {
                    let limit = medium.maxContentBytes(namespace: namespace, type: type)
                    if bytes.count > limit {
                        reader.problem(line, "\(prefix).content", "\(bytes.count) bytes is over the \(medium.rawValue) limit of \(limit) bytes for this namespace and type (docs/protocol.md)")
                    }
                }
            }
            guard reader.problems.count == before, let namespace, let type, let content else { return nil }
            return PublicationConfig(message: Message(namespace: namespace, type: type, content: content.bytes), mediums: mediums,
                                     mode: mode, background: background?.value ?? false, ttlS: ttl, line: table.line)
        }
    }

    static func subscriptions(_ root: TOMLTable, defaultLostAfter: Int, board: Board?, hasMicrophone: Bool = true,
                              identities: [IdentityConfig] = [], reader: inout ConfigReader) -> [SubscriptionConfig] {
        tables(root, "subscription", reader: &reader).compactMap { index, table in
            let prefix = "subscription[\(index + 1)]"
            reader.checkKeys(table, prefix: prefix, allowed: ["namespace", "type", "mediums", "mode", "background", "lost_after_s", "include", "led"])
            let before = reader.problems.count
            let namespace = name(table, "namespace", prefix: prefix, allowWildcard: false, reader: &reader)
            let type = table["type"] == nil ? "*" : name(table, "type", prefix: prefix, allowWildcard: true, reader: &reader)
            let mediums = reader.choices(table, "mediums", prefix: prefix, Medium.self, allowEmpty: false)?.value ?? Medium.allCases
            let mode = reader.choice(table, "mode", prefix: prefix, DiscoveryMode.self)?.value ?? .both
            let background = reader.boolean(table, "background", prefix: prefix)
            let lostAfter = reader.integer(table, "lost_after_s", prefix: prefix, range: 1...86_400, unit: " s")?.value ?? defaultLostAfter
            let include = IdentityEntries.include(table, prefix: prefix, identities: identities, reader: &reader)
            checkBackground(background, mediums: mediums, table: table, prefix: prefix, reader: &reader)
            if mediums == [.audio], !hasMicrophone {
                reader.problem(table["mediums"]?.line ?? table.line, "\(prefix).mediums",
                               "receives on audio only, but audio.capture is empty: it would never find anything (set audio.capture or add \"ble\")")
            }
            var led: String?
            if let (name, line) = reader.string(table, "led", prefix: prefix), !name.isEmpty {
                if GatewayConfig.systemLEDs.contains(name) {
                    reader.problem(line, "\(prefix).led", "\"\(name)\" is driven by the gateway itself; use another LED of the board")
                } else if let board, board.led(named: name) == nil {
                    let others = board.leds.map(\.name).filter { !GatewayConfig.systemLEDs.contains($0) }
                    reader.problem(line, "\(prefix).led", "board \(board.name) has no LED \"\(name)\"\(others.isEmpty ? "" : " (it has \(others.joined(separator: ", ")))")")
                } else {
                    led = name
                }
            }
            guard reader.problems.count == before, let namespace, let type else { return nil }
            return SubscriptionConfig(namespace: namespace, type: type, mediums: mediums, mode: mode, background: background?.value ?? false,
                                      lostAfterS: lostAfter, include: include.families, identities: include.identities, led: led, line: table.line)
        }
    }

    /// The tables of `[[key]]` (refusing `key = ...` of another shape), with their index.
    private static func tables(_ root: TOMLTable, _ key: String, reader: inout ConfigReader) -> [(Int, TOMLTable)] {
        guard let entry = root[key] else { return [] }
        guard let items = entry.value.array, items.allSatisfy({ $0.table != nil }) else {
            reader.problem(entry.line, key, "expected [[\(key)]] tables, found \(entry.value.typeName)")
            return []
        }
        return items.enumerated().map { ($0.offset, $0.element.table!) }
    }

    /// Standby runs BLE only, so a background entry must not use audio (`allowInBackground` was BLE only too).
    private static func checkBackground(_ background: (value: Bool, line: Int)?, mediums: [Medium], table: TOMLTable, prefix: String, reader: inout ConfigReader) {
        guard let background, background.value, mediums.contains(.audio) else { return }
        let how = table["mediums"] == nil ? " (mediums default to both; set mediums = [\"ble\"])" : ""
        reader.problem(background.line, "\(prefix).background", "background = true is BLE only, but mediums include audio\(how)")
    }

    /// A namespace or type: 1…32 UTF-8 bytes that fit a topic level (no '/', '+', '#', spaces or
    /// control characters), not reserved for beacons or `$SYS`.
    private static func name(_ table: TOMLTable, _ key: String, prefix: String, allowWildcard: Bool, reader: inout ConfigReader) -> String? {
        let path = "\(prefix).\(key)"
        guard let (value, line) = reader.string(table, key, prefix: prefix) else {
            if table[key] == nil { reader.problem(table.line, path, "missing") }
            return nil
        }
        if value == "*" {
            if allowWildcard { return value }
            reader.problem(line, path, key == "type" ? "\"*\" matches types in subscriptions; a publication needs a real type" : "\"*\" is not a namespace")
            return nil
        }
        if let problem = Message.nameProblem(value, isNamespace: key == "namespace") {
            reader.problem(line, path, problem)
            return nil
        }
        return value
    }

    /// `content` (text) or `content_base64`, exactly one; both absent = empty content.
    private static func content(_ table: TOMLTable, prefix: String, reader: inout ConfigReader) -> (bytes: [UInt8], line: Int)? {
        let text = reader.string(table, "content", prefix: prefix)
        let base64 = reader.string(table, "content_base64", prefix: prefix)
        if let text, let base64 {
            reader.problem(base64.line, "\(prefix).content_base64", "give either content or content_base64, not both (content is on line \(text.line))")
            return nil
        }
        if let text { return (Array(text.value.utf8), text.line) }
        if let base64 {
            guard let data = Data(base64Encoded: base64.value) else {
                reader.problem(base64.line, "\(prefix).content_base64", "is not valid base64")
                return nil
            }
            return (Array(data), base64.line)
        }
        if table["content"] != nil || table["content_base64"] != nil { return nil }   // wrong type, already reported
        return ([], table.line)
    }
}
