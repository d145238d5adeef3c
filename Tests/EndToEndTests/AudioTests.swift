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

        /// Issue 15 §3, the Nearby sample's set-top box: an app publishes to the box "using only audio
        /// scanning for detection". The phone's subscription (audio, broadcast) sends its subscriber
        /// beacon out of the speaker; the box's publication (audio, scan) hears it on the microphone
        /// and answers on its speaker; the phone's microphone finds the message. ALSA's file plugin
        /// carries each direction in turn (a WAV written, then captured).
        @Test("Audio only, both ways: a broadcasting audio subscription's beacon makes an audio scan publication answer, and it is found")
        func setTopBoxExampleWorksOverAudioOnly() async throws {
            let folder = try TemporaryFolder("stb")
            let key = TestEnvironment.uniqueAPIKey("stb")
            let phoneBeacon = folder.path("phone.wav"), boxAnswer = folder.path("box.wav")
            func alsa(_ name: String, speaker: String, microphone: String) throws -> String {
                try Self.alsaConfig(in: folder, capture: microphone, speaker: speaker, as: name)
            }
            let audio = "device = \"speaker\"\ncapture = \"microphone\"\nprotocol = \"ultrasound-fast\"\nvolume = 60\ninterval_s = 1"

            // 1. The phone: its subscription's beacon goes out of the speaker.
            var phone = TestGatewayConfig(apiKey: key, folder: folder, name: "phone")
            phone.audio = audio
            phone.subscriptions = ["namespace = \"tv\"\ntype = \"*\"\nmediums = [\"audio\"]\nmode = \"broadcast\""]
            let silence = try folder.write("silence.raw", String(repeating: "\u{0}", count: 4800))
            var gateway = try await phone.start(environment: ["ALSA_CONFIG_PATH": try alsa("phone1.conf", speaker: phoneBeacon, microphone: silence)])
            try await gateway.waitForLog(timeout: .seconds(30), what: "two subscriber beacons played") {
                $0.components(separatedBy: "audio beacon played").count > 2
            }
            #expect(try await gateway.stop() == 0)

            // 2. The box: silent until it hears the phone's beacon on its microphone, then answers.
            var box = TestGatewayConfig(apiKey: key, folder: folder, name: "box")
            box.audio = audio
            box.publications = ["namespace = \"tv\"\ntype = \"x-scan\"\ncontent = \"channel 5\"\nmediums = [\"audio\"]\nmode = \"scan\""]
            gateway = try await box.start(environment: ["ALSA_CONFIG_PATH": try alsa("box.conf", speaker: boxAnswer, microphone: phoneBeacon)])
            try await gateway.waitForLog("subscriber beacon heard", timeout: .seconds(30))
            try await gateway.waitForLog(timeout: .seconds(30), what: "the box's answer played twice") {
                $0.components(separatedBy: "audio beacon played").count > 2
            }
            #expect(try await gateway.stop() == 0)

            // 3. The phone again, listening: the box's message is found over audio.
            gateway = try await phone.start(environment: ["ALSA_CONFIG_PATH": try alsa("phone2.conf", speaker: folder.path("phone2.wav"),
                                                                                        microphone: boxAnswer)])
            let watch = try SocketClient(path: phone.socketPath)
            _ = try await watch.request("SUB found/#")
            let found = try await watch.waitForLine(startingWith: "found/tv/x-scan ", timeout: .seconds(30))
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
