import Foundation
import NearbyProtocol
import Testing
import TestSupport

extension EndToEnd {
    /// Issue 6 through the real binary and the real alsa-lib: ALSA's `file` plugin stands in for the
    /// speaker (writes a WAV) and the microphone (reads one).
    @Suite(.serialized)
    struct Audio {
        /// An alsa-lib configuration for one test: the stock config plus file-plugin PCMs.
        static func alsaConfig(in folder: TemporaryFolder, capture: String? = nil, speaker: String? = nil,
                               as name: String = "asound.conf") throws -> String {
            var text = """
                </usr/share/alsa/alsa.conf>
                pcm.speaker { type file; slave.pcm "null"; file "\(speaker ?? folder.path("speaker.wav"))"; format "wav" }

                """
            if let capture {
                text += "pcm.microphone { type file; slave.pcm \"null\"; file \"/dev/null\"; infile \"\(capture)\"; format \"raw\" }\n"
            }
            return try folder.write(name, text)
        }

        @Test("An audio publication's beacon goes through ALSA into a WAV that PyPI ggwave decodes, and a second gateway capturing that WAV finds the message")
        func beaconThroughALSAIsDecodedByGGWaveAndByAGateway() async throws {
            let folder = try TemporaryFolder("audio")
            let key = TestEnvironment.uniqueAPIKey("audio")
            var a = TestGatewayConfig(apiKey: key, folder: folder, name: "a")
            a.audio = "device = \"speaker\"\nprotocol = \"ultrasound-fast\"\nvolume = 60\ninterval_s = 1"
            a.publications = ["namespace = \"tv\"\ntype = \"channel\"\ncontent = \"news 24\"\nmediums = [\"audio\"]"]
            let alsaA = try Self.alsaConfig(in: folder)
            let gatewayA = try await a.start(environment: ["ALSA_CONFIG_PATH": alsaA])
            // Two beacons: the first is then complete in the file whatever the second was doing at SIGTERM.
            try await gatewayA.waitForLog(timeout: .seconds(30), what: "two beacons played") {
                $0.components(separatedBy: "audio beacon played").count > 2
            }
            #expect(try await gatewayA.stop() == 0)   // closing the PCM completes the WAV header

            // What ggwave hears in the WAV is exactly our frame for this message.
            let wav = folder.path("speaker.wav")
            let decoded = try decodeWithGGWave(wav)
            let codec = FrameCodec(apiKey: key, rotateSeconds: a.rotateSeconds)
            let message = Message(namespace: "tv", type: "channel", content: Array("news 24".utf8))
            let epoch = codec.epoch(at: Date())
            let expected = try [epoch, epoch - 1].flatMap { try codec.audioPayloads(for: message, epoch: $0) }
            #expect(!decoded.isEmpty, "ggwave decoded nothing from \(wav)")
            #expect(decoded.allSatisfy(expected.contains), "ggwave decoded \(decoded), our frames are \(expected)")

            // A second gateway listening through the microphone PCM (the same WAV) finds it.
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.audio = "device = \"speaker\"\ncapture = \"microphone\""
            b.subscriptions = ["namespace = \"tv\"\ntype = \"*\"\nmediums = [\"audio\"]\nmode = \"scan\""]
            let alsaB = try Self.alsaConfig(in: folder, capture: wav)
            let gatewayB = try await b.start(environment: ["ALSA_CONFIG_PATH": alsaB])
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB found/#")
            let found = try await watch.waitForLine(startingWith: "found/tv/channel ", timeout: .seconds(20))
            #expect(found.eventJSON["medium"] as? String == "audio")
            #expect(found.eventJSON["text"] as? String == "news 24")
            #expect(try await gatewayB.stop() == 0)
        }

        /// Issues 15 §3 and 41, the Nearby sample's set-top box: a phone app publishes to the box "using
        /// only audio scanning for detection" (its publication: `mediums = ["audio"]`, `mode = "scan"`).
        /// The box is `examples/set-top-box.toml` as shipped, with only what ties it to a real box set
        /// (key, board, ALSA names, radio, socket, state): its audio subscription in broadcast mode sends
        /// its subscriber beacon out of the speaker; the phone, a second gateway, hears it on its
        /// microphone and answers on its speaker; the box's microphone finds the message. ALSA's file
        /// plugin carries each direction in turn (a WAV written, then captured).
        @Test("The set-top box example, as shipped, finds a phone's audio-only scan publication: its subscriber beacon makes the phone answer")
        func setTopBoxExampleFindsAPhonesAudioScanPublication() async throws {
            let folder = try TemporaryFolder("stb")
            let key = TestEnvironment.uniqueAPIKey("stb")
            let boxBeacon = folder.path("box.wav"), phoneAnswer = folder.path("phone.wav")
            func alsa(_ name: String, speaker: String, microphone: String) throws -> String {
                try Self.alsaConfig(in: folder, capture: microphone, speaker: speaker, as: name)
            }
            let example = try ExampleConfig("set-top-box.toml")
            // The box receives: one audio subscription in broadcast mode, nothing published.
            let subscription = example.text.components(separatedBy: "[[subscription]]").dropFirst().joined()
            #expect(subscription.contains("mediums   = [\"audio\"]\nmode      = \"broadcast\"") && !example.text.contains("[[publication]]"),
                    "the example is not the receiving box:\n\(example.text)")
            let box: [String: [String: String]] = [
                "": ["api_key": "\"\(key)\"", "board": "\"sim\""],
                "audio": ["device": "\"speaker\"", "capture": "\"microphone\""],
                "radio": ["device": "\"h4:\(TestEnvironment.btvirtServer)\""],
                "socket": ["path": "\"\(folder.path("box.sock"))\""],
                "state": ["path": "\"\(folder.path("box-state.json"))\""],
            ]
            let silence = try folder.write("silence.raw", String(repeating: "\u{0}", count: 4800))

            // 1. The box: its subscription's beacon goes out of the speaker.
            var gateway = try await example.start(box, in: folder, as: "box1.toml",
                                                  environment: ["ALSA_CONFIG_PATH": try alsa("box1.conf", speaker: boxBeacon, microphone: silence)])
            try await gateway.waitForLog(timeout: .seconds(30), what: "two subscriber beacons played") {
                $0.components(separatedBy: "audio beacon played").count > 2
            }
            #expect(try await gateway.stop() == 0)

            // 2. The phone: its audio scan publication is silent until it hears the box's beacon, then answers.
            var phone = TestGatewayConfig(apiKey: key, folder: folder, name: "phone")
            phone.audio = "device = \"speaker\"\ncapture = \"microphone\"\nprotocol = \"ultrasound-fast\"\nvolume = 60\ninterval_s = 1"
            phone.publications = ["namespace = \"livingroom\"\ntype = \"tv-remote\"\ncontent = \"channel 5\"\nmediums = [\"audio\"]\nmode = \"scan\""]
            gateway = try await phone.start(environment: ["ALSA_CONFIG_PATH": try alsa("phone.conf", speaker: phoneAnswer, microphone: boxBeacon)])
            try await gateway.waitForLog("subscriber beacon heard", timeout: .seconds(30))
            try await gateway.waitForLog(timeout: .seconds(30), what: "the phone's answer played twice") {
                $0.components(separatedBy: "audio beacon played").count > 2
            }
            #expect(try await gateway.stop() == 0)

            // 3. The box again, listening: the phone's message is found over audio.
            gateway = try await example.start(box, in: folder, as: "box2.toml",
                                              environment: ["ALSA_CONFIG_PATH": try alsa("box2.conf", speaker: folder.path("box2.wav"),
                                                                                         microphone: phoneAnswer)])
            let watch = try SocketClient(path: folder.path("box.sock"))
            _ = try await watch.request("SUB found/#")
            let found = try await watch.waitForLine(startingWith: "found/livingroom/tv-remote ", timeout: .seconds(30))
            #expect(found.eventJSON["medium"] as? String == "audio")
            #expect(found.eventJSON["text"] as? String == "channel 5")
            #expect(try await gateway.stop() == 0)
        }

        @Test("A capture device that can't be opened sets $SYS/error/microphone-permission, and the gateway keeps serving")
        func missingCaptureDeviceSetsTheMicrophoneError() async throws {
            let folder = try TemporaryFolder("mic")
            var b = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mic"), folder: folder, name: "b")
            b.audio = "device = \"speaker\"\ncapture = \"no_such_microphone\""
            b.subscriptions = ["namespace = \"tv\"\ntype = \"*\"\nmediums = [\"audio\"]\nmode = \"scan\""]
            let alsa = try Self.alsaConfig(in: folder)
            let gateway = try await b.start(environment: ["ALSA_CONFIG_PATH": alsa])
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB $SYS/error/#")
            let error = try await watch.waitForLine(startingWith: "$SYS/error/microphone-permission ")
            #expect(error.eventJSON["set"] as? Bool == true)
            #expect((error.eventJSON["message"] as? String ?? "").contains("no_such_microphone"))
            // Issue 41: the seed's event name, and a reason that tells this fault from the others.
            #expect(error.eventJSON["reason"] as? String == "missing", "\(error)")
            #expect(try await watch.request("PING") == "PONG")
            #expect(try await gateway.stop() == 0)
        }
    }
}

/// Every payload PyPI ggwave decodes from a WAV file, via the project's venv.
func decodeWithGGWave(_ wav: String) throws -> [[UInt8]] {
    let python = ProcessInfo.processInfo.environment["NEARBY_VENV_PYTHON"]
        ?? TestEnvironment.repository.appendingPathComponent(".venv/bin/python").path
    let script = """
        import sys, wave, ggwave, numpy as np
        w = wave.open(sys.argv[1], 'rb')
        raw = w.readframes(w.getnframes())
        width, channels = w.getsampwidth(), w.getnchannels()
        samples = np.frombuffer(raw, dtype=np.int16 if width == 2 else np.float32).astype(np.float32)
        if width == 2: samples /= 32768.0
        if channels > 1: samples = samples.reshape(-1, channels).mean(axis=1)
        ggwave.disableLog()
        instance = ggwave.init()
        block = 1024
        for i in range(0, len(samples), block):
            out = ggwave.decode(instance, samples[i:i + block].astype(np.float32).tobytes())
            if out is not None: print(out.hex())
        ggwave.free(instance)
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = ["-c", script, wav]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TimeoutError(description: "ggwave decode of \(wav) failed") }
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map { hex in
        stride(from: 0, to: hex.count, by: 2).map { i in
            UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)!
        }
    }
}
