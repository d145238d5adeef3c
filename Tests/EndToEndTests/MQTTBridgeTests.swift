import Foundation
import Testing

extension EndToEnd {
    /// Issue 19: the bridge to a real mosquitto (on a UNIX socket, with a password file), read by a
    /// real client (`mosquitto_sub`), with gateways on btvirt.
    @Suite(.serialized)
    struct MQTTBridge {
        static let subscription = "namespace = \"den\"\ntype = \"*\"\nmediums = [\"ble\"]\nmode = \"scan\""

        /// A (publisher, on the air) and B (subscriber, bridged to the broker), B's socket watched.
        struct Pair {
            let a: GatewayProcess
            let b: GatewayProcess
            let watch: SocketClient
            let publisher: SocketClient
        }

        static func startPair(folder: TemporaryFolder, broker: MosquittoBroker, prefix: String) async throws -> Pair {
            let key = TestEnvironment.uniqueAPIKey("mqtt")
            let a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.subscriptions = [subscription]
            b.extra = broker.mqttSection(prefix: prefix, clientID: "gw-\(prefix)")
            let gatewayB = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            for filter in ["found/#", "lost/#", "$SYS/error/#"] { _ = try await watch.request("SUB \(filter)") }
            let gatewayA = try await a.start()
            let publisher = try SocketClient(path: a.socketPath)
            let reply = try await publisher.request("PUB den/door \(Data("open".utf8).base64EncodedString()) mediums=ble mode=broadcast")
            #expect(reply.hasPrefix("OK "), "PUB answered \(reply)")
            return Pair(a: gatewayA, b: gatewayB, watch: watch, publisher: publisher)
        }

        /// The JSON of a socket event line, without the member the socket adds (MQTT has its own retain flag).
        static func socketJSON(_ line: String) -> String {
            let json = String(line[line.index(after: line.firstIndex(of: " ")!)...])
            for flag in [",\"retained\":false}", ",\"retained\":true}"] where json.hasSuffix(flag) {
                return String(json.dropLast(flag.count)) + "}"
            }
            return json
        }

        /// The payload of a `<retain> <topic> <payload>` line.
        static func payload(_ line: String) -> String {
            String(line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).dropFirst(2).first ?? "")
        }

        /// The payload of a `<retain> <topic> <payload>` line as a JSON object.
        static func json(_ line: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(payload(line).utf8))) as? [String: Any] ?? [:]
        }

        static func stats(_ client: SocketClient) async throws -> [String: Any] {
            let before = client.received.count
            client.send("GET stats")
            return try await client.waitForLine(startingWith: "$SYS/stats ", after: before).eventJSON["mqtt"] as? [String: Any] ?? [:]
        }

        @Test("found/lost reach the broker under the prefix with the socket's JSON; found retained, emptied on lost; HA state follows")
        func foundAndLostMatchTheSocket() async throws {
            let folder = try TemporaryFolder("mqtt")
            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["nb/#"])
            let pair = try await Self.startPair(folder: folder, broker: broker, prefix: "nb")
            try await sub.waitForMessage("1 nb/status online")

            let found = try await pair.watch.waitForLine(startingWith: "found/den/door ", timeout: .seconds(30))
            let mqttFound = try await sub.waitForMessage("1 nb/found/den/door ")
            #expect(Self.payload(mqttFound) == Self.socketJSON(found))
            try await sub.waitForMessage("1 nb/ha/subscription/1 {\"presence\":\"ON\",\"found\":1")

            let before = sub.messages.count
            pair.publisher.close()   // A's publication goes with its connection: B loses it
            let lost = try await pair.watch.waitForLine(startingWith: "lost/den/door ", timeout: .seconds(30))
            let mqttLost = try await sub.waitForMessage("0 nb/lost/den/door ", after: before)
            #expect(Self.payload(mqttLost) == Self.socketJSON(lost))
            let cleared = try await sub.waitForMessage("1 nb/found/den/door", after: before)
            #expect(cleared == "1 nb/found/den/door ", "the retained found is deleted by an empty retained payload")
            try await sub.waitForMessage("1 nb/ha/subscription/1 {\"presence\":\"OFF\",\"found\":0", after: before)

            let stats = try await Self.stats(pair.watch)
            #expect(stats["connected"] as? Bool == true)
            #expect(stats["dropped"] as? Int == 0)
            try await pair.a.stop()
            try await pair.b.stop()
            try await sub.waitForMessage("1 nb/status offline", after: before)
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }

        @Test("Home Assistant discovery: one retained config per entity, with the fields HA's MQTT schema requires for its component")
        func discoveryPayloads() async throws {
            let folder = try TemporaryFolder("mqtt-ha")
            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["homeassistant/#", "ha-test/ha/#", "ha-test/$SYS/#"])
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-ha"), folder: folder, name: "h")
            config.subscriptions = [Self.subscription, "namespace = \"hall\"\ntype = \"light\""]
            config.extra = broker.mqttSection(prefix: "ha-test", clientID: "gw-ha") + "\ncommands = true\n"
            let gateway = try await config.start()
            try await sub.waitForMessage("1 homeassistant/switch/gw-ha/permission/config ")
            try await sub.waitForMessage("1 ha-test/$SYS/permission ")
            try await sub.waitForMessage("1 ha-test/ha/errors ")
            // Every state asserted on below is waited for: they are not sent in the order checked, and
            // under qemu-user one came after the check (the arm64 end-to-end stage, 2026-11-27).
            try await sub.waitForMessage("1 ha-test/$SYS/background ")

            // What HA's MQTT binary_sensor and sensor platforms accept (their documented keys; an
            // unknown key makes HA refuse the config) and what each needs to work.
            let common: Set = ["name", "unique_id", "object_id", "default_entity_id", "state_topic", "value_template", "json_attributes_topic",
                               "availability_topic", "payload_available", "payload_not_available", "device", "icon", "entity_category"]
            let allowed: [String: Set<String>] = ["binary_sensor": common.union(["payload_on", "payload_off", "device_class"]),
                                                  "sensor": common.union(["state_class", "unit_of_measurement", "device_class"]),
                                                  "switch": common.union(["command_topic", "payload_on", "payload_off", "state_on", "state_off", "device_class"])]
            let configs = sub.messages.filter { $0.hasPrefix("1 homeassistant/") }
            let topics = configs.map { $0.split(separator: " ")[1] }
            #expect(Set(topics) == ["homeassistant/binary_sensor/gw-ha/subscription_1/config", "homeassistant/binary_sensor/gw-ha/subscription_2/config",
                                    "homeassistant/sensor/gw-ha/found/config", "homeassistant/sensor/gw-ha/errors/config",
                                    "homeassistant/switch/gw-ha/background/config", "homeassistant/switch/gw-ha/permission/config"])
            var uniqueIDs: Set<String> = []
            for line in configs {
                let topic = line.split(separator: " ")[1].split(separator: "/")
                let component = String(topic[1])
                let json = Self.json(line)
                #expect(Set(json.keys).isSubset(of: allowed[component] ?? []), "\(line): keys HA does not know: \(Set(json.keys).subtracting(allowed[component] ?? []))")
                for key in ["name", "unique_id", "state_topic", "availability_topic"] {
                    #expect((json[key] as? String)?.isEmpty == false, "\(line) lacks \(key)")
                }
                uniqueIDs.insert(json["unique_id"] as? String ?? "")
                #expect(json["availability_topic"] as? String == "ha-test/status")
                let device = json["device"] as? [String: Any] ?? [:]
                #expect((device["identifiers"] as? [String])?.isEmpty == false, "\(line): a device needs identifiers")
                if component == "binary_sensor" {
                    #expect(json["payload_on"] as? String == "ON" && json["payload_off"] as? String == "OFF")
                }
                if component == "switch" {
                    // HA sends payload_on/off to command_topic: each must be a command the gateway takes.
                    #expect(json["command_topic"] as? String == "ha-test/cmd")
                    for payload in [json["payload_on"], json["payload_off"]] {
                        #expect((payload as? String)?.hasPrefix("SET ") == true, "\(line)")
                    }
                    continue   // its value template is Jinja over $SYS JSON, checked below by the key it reads
                }
                // The state topic has a retained state the value template can read.
                let stateTopic = json["state_topic"] as? String ?? ""
                _ = try? await sub.waitForMessage("1 \(stateTopic) ")
                let state = sub.messages.last { $0.hasPrefix("1 \(stateTopic) ") } ?? ""
                let field = (json["value_template"] as? String ?? "").replacingOccurrences(of: "{{ value_json.", with: "").replacingOccurrences(of: " }}", with: "")
                #expect(Self.json(state)[field] != nil, "\(line): no retained \(field) on \(stateTopic) (\(state))")
            }
            #expect(uniqueIDs.count == 6)
            #expect(Self.json(sub.messages.last { $0.hasPrefix("1 ha-test/$SYS/background ") } ?? "")["background"] is Bool)
            #expect(Self.json(sub.messages.last { $0.hasPrefix("1 ha-test/$SYS/permission ") } ?? "")["permission"] is String)
            try await gateway.stop()
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }

        @Test("Each Home Assistant state topic is published once per connect (it was twice: queued, then replayed)")
        func oneStatePublicationPerConnect() async throws {
            let folder = try TemporaryFolder("mqtt-once")
            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["once/#"])
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-once"), folder: folder, name: "o")
            config.subscriptions = [Self.subscription]
            config.extra = broker.mqttSection(prefix: "once", clientID: "gw-once")
            let gateway = try await config.start()
            try await sub.waitForMessage("1 once/status online")
            // A change made after the connect: its event comes after all the connect sent.
            let socket = try SocketClient(path: config.socketPath)
            #expect(try await socket.request("SET background off") == "OK")
            let marker = "1 once/$SYS/background {\"background\":false"
            try await sub.waitForMessage(marker)
            let burst = sub.messages.prefix { !$0.hasPrefix(marker) }
            let topics = burst.map { String($0.split(separator: " ")[1]) }.filter { $0.hasPrefix("once/ha/") }
            let counts = Dictionary(topics.map { ($0, 1) }, uniquingKeysWith: +)
            #expect(counts == ["once/ha/subscription/1": 1, "once/ha/found": 1, "once/ha/errors": 1], "\(burst)")
            try await gateway.stop()
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }

        @Test("Broker killed and restarted: $SYS/error/mqtt set then cleared, the found set retained again (read from the socket broker: what was lost meanwhile is not), nothing crashed")
        func brokerRestart() async throws {
            let folder = try TemporaryFolder("mqtt-kill")
            let broker = try MosquittoBroker(folder: folder)
            var mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["rs/found/#"])
            let pair = try await Self.startPair(folder: folder, broker: broker, prefix: "rs")
            // Two more: one on den/door's own topic (the topic shows the latest), one on a topic of its own.
            var extra: [String] = []
            for (type, content) in [("door", "ajar"), ("window", "shut")] {
                let reply = try await pair.publisher.request("PUB den/\(type) \(Data(content.utf8).base64EncodedString()) mediums=ble mode=broadcast")
                #expect(reply.hasPrefix("OK "), "PUB answered \(reply)")
                extra.append(String(reply.dropFirst(3)))
            }
            try await sub.waitForMessage("1 rs/found/den/window ", timeout: .seconds(30))
            try await pair.watch.waitForLine(timeout: .seconds(30), what: "both messages on found/den/door") { _ in
                pair.watch.received.filter { $0.hasPrefix("found/den/door ") }.count == 2
            }
            try await sub.stop(signal: SIGKILL)

            try await mosquitto.stop(signal: SIGKILL)
            let down = try await pair.watch.waitForLine(what: "mqtt error set") {
                $0.hasPrefix("$SYS/error/mqtt ") && $0.eventJSON["set"] as? Bool == true
            }
            #expect((down.eventJSON["message"] as? String)?.contains("unix://\(broker.socketPath)") == true, "\(down)")
            #expect(try await pair.watch.request("PING") == "PONG")
            // While the broker is down, B loses "ajar" (den/door falls back to "open") and the window.
            let beforeLost = pair.watch.received.count
            for publication in extra { #expect(try await pair.publisher.request("UNPUB \(publication)") == "OK") }
            for topic in ["lost/den/door ", "lost/den/window "] {
                try await pair.watch.waitForLine(startingWith: topic, after: beforeLost, timeout: .seconds(30))
            }

            // No persistence: the new broker knows nothing until the gateway republishes.
            let after = pair.watch.received.count
            mosquitto = try await broker.start()
            try await pair.watch.waitForLine(after: after, timeout: .seconds(20), what: "mqtt error cleared") {
                $0.hasPrefix("$SYS/error/mqtt ") && $0.eventJSON["set"] as? Bool == false
            }
            let late = try await broker.subscribe(["rs/found/#", "rs/$SYS/debug"])
            try await late.waitForMessage("1 rs/found/den/door ")
            // A barrier: what the bridge sends after its reconnect's replay. Whatever it sent before has
            // reached the broker by then (one connection, in order).
            #expect(try await pair.watch.request("SET debug on") == "OK")
            try await late.waitForMessage("1 rs/$SYS/debug {\"debug\":true")
            let door = late.messages.last { $0.hasPrefix("1 rs/found/den/door ") } ?? ""
            #expect((Self.json(door)["content"] as? String) == Data("open".utf8).base64EncodedString(), "\(late.messages)")
            #expect(!late.messages.contains { $0.hasPrefix("1 rs/found/den/window ") && !Self.payload($0).isEmpty },
                    "the window, lost while the broker was down, came back as found: \(late.messages)")
            let stats = try await Self.stats(pair.watch)
            #expect(stats["connected"] as? Bool == true)
            #expect((stats["connect_attempts"] as? Int ?? 0) >= 2)
            #expect(pair.a.isRunning && pair.b.isRunning)
            try await late.stop(signal: SIGKILL)
            try await pair.a.stop()
            #expect(try await pair.b.stop() == 0)
            try await mosquitto.stop(signal: SIGKILL)
        }

        @Test("Wrong password: $SYS/error/mqtt says the broker refused it; attempts back off (no tight loop); the gateway keeps serving")
        func wrongPassword() async throws {
            let folder = try TemporaryFolder("mqtt-pw")
            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-pw"), folder: folder, name: "w")
            config.extra = broker.mqttSection(prefix: "pw", clientID: "gw-pw", password: "not-the-password")
            let gateway = try await config.start()
            let watch = try SocketClient(path: config.socketPath)
            _ = try await watch.request("SUB $SYS/error/#")
            let error = try await watch.waitForLine(what: "mqtt error set") {
                $0.hasPrefix("$SYS/error/mqtt ") && $0.eventJSON["set"] as? Bool == true
            }
            let message = error.eventJSON["message"] as? String ?? ""
            #expect(message.contains("refused the connection") && message.contains("not authorised"), "\(error)")

            // Attempts at 0, 1, 3, 7 s…: a third one comes no sooner than ~3 s after the first.
            let clock = ContinuousClock()
            let start = clock.now
            let deadline = start + .seconds(20)
            // Each refused attempt logs one "retrying in" line: wait for the third.
            try await gateway.waitForLog(timeout: deadline - clock.now, what: "three refused connection attempts") {
                $0.components(separatedBy: "retrying in").count > 3
            }
            let attempts = try await Self.stats(watch)["connect_attempts"] as? Int ?? 0
            #expect(attempts >= 3)
            #expect(clock.now - start >= .milliseconds(2500), "\(attempts) attempts within \(clock.now - start)")
            #expect(try await watch.request("PING") == "PONG")
            #expect(try await gateway.stop() == 0)
            // The bridge stops after the manager (its last events leave first), before the rest.
            #expect(gateway.stoppedServices == ["manager", "mqtt", "audio", "leds", "socket", "loop"])
            try await mosquitto.stop(signal: SIGKILL)
        }

        @Test("mqtts:// on loopback TCP: connects with the test CA and publishes; a CA that did not sign the broker is an error naming TLS")
        func tlsWithATestCA() async throws {
            let folder = try TemporaryFolder("mqtt-tls")
            let broker = try MosquittoBroker(folder: folder, tls: true)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["tls/status", "bad/status"])
            let port = try #require(broker.tlsPort)
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-tls"), folder: folder, name: "t")
            config.extra = broker.mqttSection(prefix: "tls", clientID: "gw-tls")
                .replacingOccurrences(of: "unix://\(broker.socketPath)", with: "mqtts://127.0.0.1:\(port)") + "\nca_file = \"\(broker.caFile)\"\n"
            let gateway = try await config.start()
            try await sub.waitForMessage("1 tls/status online")
            let watch = try SocketClient(path: config.socketPath)
            #expect(try await Self.stats(watch)["connected"] as? Bool == true)

            var wrong = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-tls"), folder: folder, name: "u")
            wrong.extra = broker.mqttSection(prefix: "bad", clientID: "gw-bad")
                .replacingOccurrences(of: "unix://\(broker.socketPath)", with: "mqtts://127.0.0.1:\(port)") + "\nca_file = \"\(folder.path("other-ca.crt"))\"\n"
            let refused = try await wrong.start()
            let other = try SocketClient(path: wrong.socketPath)
            _ = try await other.request("SUB $SYS/error/#")
            let error = try await other.waitForLine(what: "mqtt error set") {
                $0.hasPrefix("$SYS/error/mqtt ") && $0.eventJSON["set"] as? Bool == true
            }
            let message = error.eventJSON["message"] as? String ?? ""
            #expect(message.contains("mqtts://127.0.0.1:\(port)") && message.contains("TLS"), "\(error)")
            #expect(!sub.messages.contains { $0.hasPrefix("1 bad/status online") })
            try await refused.stop()
            try await gateway.stop()
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }

        @Test("Commands over MQTT: answered on <prefix>/cmd/reply with commands = true, a PUB ends with the broker connection; ignored by default")
        func commands() async throws {
            let folder = try TemporaryFolder("mqtt-cmd")
            let broker = try MosquittoBroker(folder: folder)
            var mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["on/status", "on/cmd/reply", "on/$SYS/background", "off/status", "off/cmd/reply"])
            var on = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-cmd"), folder: folder, name: "on")
            on.extra = broker.mqttSection(prefix: "on", clientID: "gw-on") + "\ncommands = true\n"
            var off = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-cmd"), folder: folder, name: "off")
            off.extra = broker.mqttSection(prefix: "off", clientID: "gw-off")
            let gatewayOn = try await on.start()
            let gatewayOff = try await off.start()
            try await sub.waitForMessage("1 on/status online")
            try await sub.waitForMessage("1 off/status online")

            try broker.publish("on/cmd", "SET background off")
            try await sub.waitForMessage("0 on/cmd/reply OK")
            try await sub.waitForMessage("1 on/$SYS/background {\"background\":false}")
            let content = Data("from mqtt".utf8).base64EncodedString()
            try broker.publish("on/cmd", "PUB den/mq \(content) mediums=ble mode=broadcast")
            let published = try await sub.waitForMessage("0 on/cmd/reply OK p")
            try broker.publish("on/cmd", "SUB found/#")
            try await sub.waitForMessage("0 on/cmd/reply ERR bad-argument")
            let socket = try SocketClient(path: on.socketPath)
            #expect(try await socket.requestList("publications").contains { $0.contains("\"type\":\"mq\"") }, "\(published)")

            // Read-only by default: the same command to "off" changes nothing and gets no answer
            // ("on" answering a later command shows the broker has delivered the earlier ones).
            try broker.publish("off/cmd", "SET background off")
            try broker.publish("on/cmd", "PING")
            try await sub.waitForMessage("0 on/cmd/reply PONG")
            #expect(!sub.messages.contains { $0.hasPrefix("0 off/cmd/reply") })
            let offSocket = try SocketClient(path: off.socketPath)
            #expect(try await offSocket.request("GET background") == "OK on")

            // The publication lives with the broker connection it came over. The gateway ends that
            // connection's publications before it raises $SYS/error/mqtt for the drop (GatewayParts.runMQTT),
            // so once the error is on the socket the publication must be gone.
            #expect(try await socket.request("SUB $SYS/error/mqtt").hasPrefix("OK"))
            let beforeKill = socket.received.count
            try await mosquitto.stop(signal: SIGKILL)
            try await socket.waitForLine(after: beforeKill, timeout: .seconds(15), what: "$SYS/error/mqtt set") {
                $0.hasPrefix("$SYS/error/mqtt ") && $0.contains("\"set\":true")
            }
            let after = try await socket.requestList("publications")
            #expect(!after.contains { $0.contains("\"type\":\"mq\"") }, "the MQTT publication outlived its connection: \(after)")
            mosquitto = try await broker.start()
            try await gatewayOn.stop()
            try await gatewayOff.stop()
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }
    }
}
