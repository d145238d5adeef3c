import Foundation
import Testing
@testable import Modem

/// Events from an audio thread, with a way to wait for one (no sleeping to synchronise).
final class EventLog: Sendable {
    private let box = ConditionBox([AudioEvent]())

    var events: [AudioEvent] { box.read { $0 } }

    func record(_ e: AudioEvent) { box.update { $0.append(e) } }

    /// Waits until `predicate` holds for the events so far; false when `seconds` pass first.
    func wait(seconds: Double = 15, _ predicate: @escaping ([AudioEvent]) -> Bool) -> Bool {
        let deadline = box.clock.now() + seconds
        return box.next { events in
            if predicate(events) { return .proceed(true) }
            return box.clock.now() >= deadline ? .proceed(false) : .sleep(until: deadline)
        }
    }
}

/// The real alsa-lib path, with ALSA's `file` plugin standing in for the sound card (this machine has
/// none): playback PCMs write WAV files, capture PCMs read theirs from `infile`. One configuration per
/// test process, named by ALSA_CONFIG_PATH, which alsa-lib reads at the first PCM open.
enum TestALSA {
    static let dir: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("modem-alsa-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let d = url.path
        let conf = """
            </usr/share/alsa/alsa.conf>
            pcm.beacon_out { type file; slave.pcm "null"; file "\(d)/out.wav"; format "wav" }
            pcm.broken_out { type file; slave.pcm "null"; file "\(d)/no-such-dir/out.wav"; format "wav" }
            pcm.mic_in { type file; slave.pcm "null"; file "/dev/null"; infile "\(d)/in.wav"; format "raw" }
            pcm.late_in { type file; slave.pcm "null"; file "/dev/null"; infile "\(d)/late.wav"; format "raw" }

            """
        try! conf.write(to: url.appendingPathComponent("asound.conf"), atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", url.appendingPathComponent("asound.conf").path, 1)
        return url
    }()

    static func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
}

@Suite(.serialized) struct ALSAFilePluginTests {
    /// Every test needs the configuration in place before its first PCM open.
    init() { _ = TestALSA.dir }

    @Test func transmitterBeaconThroughALSAIsDecodedByGGWave() throws {
        let log = EventLog()
        let tx = AudioTransmitter(onEvent: log.record)
        let payloads = [Array("hello from alsa".utf8), Array("second".utf8)]
        try tx.start(.init(device: "beacon_out", interval: .seconds(3600), volume: 40, protocol: .ultrasoundFast))
        try tx.setPayloads(payloads)
        let played = log.wait { $0.contains { if case .beaconPlayed = $0 { true } else { false } } }
        tx.stop()   // closes the PCM: the plugin completes the WAV header
        #expect(played, "events: \(log.events)")
        #expect(log.events.first == .ready(device: "beacon_out"))

        let out = TestALSA.path("out.wav")
        let audio = try WAVFile.read(path: out)
        #expect(audio.sampleRate == 48_000 && audio.channels == 1)
        let beacon = try GGWaveBeacon.render(payloads: payloads, protocol: .ultrasoundFast, volume: 40)
        // What went through ALSA is the beacon, as 16-bit samples (plus the padding the plugin adds).
        #expect(audio.samples.count >= beacon.count)
        #expect(zip(audio.samples, beacon).allSatisfy { abs($0 - $1) <= 1.0 / 32768 })
        #expect(try GGWavePeer.decode(files: [out]) == [payloads])
    }

    @Test func silentTransmitterNeverOpensTheDevice() throws {
        let log = EventLog()
        let tx = AudioTransmitter(onEvent: log.record)
        try tx.start(.init(device: "no_such_pcm", interval: .seconds(1), volume: 40, protocol: .ultrasoundFast))
        try tx.setPayloads([])
        tx.stop()
        #expect(log.events.isEmpty)
        #expect(throws: GGWaveEncoderError.payloadTooLong(length: 141, maximum: 140)) {
            try tx.setPayloads([[UInt8](repeating: 0, count: 141)])
        }
        #expect(throws: GGWaveEncoderError.volumeOutOfRange(-1)) { try tx.setVolume(-1) }
    }

    @Test func missingPlaybackDeviceIsReportedAndRetriedWithBackoff() throws {
        let log = EventLog()
        let tx = AudioTransmitter(onEvent: log.record)
        try tx.start(.init(device: "no_such_pcm", interval: .seconds(1), volume: 40, protocol: .ultrasoundFastest))
        try tx.setPayloads([[1, 2, 3]])
        let twice = log.wait { $0.count >= 2 }
        tx.stop()
        #expect(twice, "events: \(log.events)")
        guard case .failed(let first, let delay1) = log.events[0], case .failed(_, let delay2) = log.events[1] else {
            Issue.record("expected two failures, got \(log.events)")
            return
        }
        #expect(first.device == "no_such_pcm" && first.call == "snd_pcm_open" && first.kind == .missing)
        #expect(first.description.contains("No such file or directory"))
        #expect(delay1 == 0.5 && delay2 == 1.0)
    }

    @Test func playbackWriteFailureIsAnErrorNotACrash() throws {
        let log = EventLog()
        let tx = AudioTransmitter(onEvent: log.record)
        try tx.start(.init(device: "broken_out", interval: .seconds(1), volume: 40, protocol: .ultrasoundFastest))
        try tx.setPayloads([[7]])
        let failed = log.wait { $0.contains { if case .failed = $0 { true } else { false } } }
        tx.stop()
        #expect(failed, "events: \(log.events)")
        let failure = log.events.compactMap { if case .failed(let e, _) = $0 { e } else { nil } }.first
        #expect(failure?.call == "snd_pcm_writei" && failure?.errno == EIO)
    }

    @Test func receiverDecodesWhatTheCaptureDeviceHears() throws {
        // ggwave's own transmission, recorded as 16-bit PCM with a second of silence either side.
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let payload = Array("heard through alsa".utf8)
        let wave = try GGWavePeer.encode([(payload, .ultrasoundNormal)], volume: 20, in: dir)[0]
        let silence = [Float](repeating: 0, count: 48_000)
        // The plugin reads `infile` raw, so the 44-byte WAV header arrives as 22 samples of noise.
        try WAVFile.write(silence + wave + silence + silence, format: .pcm16, to: TestALSA.path("in.wav"))

        let log = EventLog()
        let rx = AudioReceiver(onEvent: log.record)
        rx.start(.init(device: "mic_in"))
        let heard = log.wait { $0.contains { if case .received = $0 { true } else { false } } }
        rx.stop()
        #expect(heard, "events: \(log.events)")
        let received = log.events.compactMap { if case .received(let r) = $0 { r } else { nil } }
        // After the file ends the plugin keeps returning its last buffer (silence here): still one.
        #expect(received.map(\.payload) == [payload])
        #expect(received.first?.protocol == .ultrasoundNormal)
    }

    @Test func receiverRetriesUntilTheCaptureDeviceOpens() throws {
        try? FileManager.default.removeItem(atPath: TestALSA.path("late.wav"))
        let log = EventLog()
        let rx = AudioReceiver(onEvent: log.record)
        rx.start(.init(device: "late_in", protocols: [.ultrasoundFastest]))
        let failed = log.wait { $0.contains { if case .failed = $0 { true } else { false } } }
        #expect(failed)
        if case .failed(let e, _) = log.events.first {
            #expect(e.device == "late_in" && e.call == "snd_pcm_open" && e.kind == .missing)
        }
        let payload: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
        let silence = [Float](repeating: 0, count: 48_000)
        let beacon = try GGWaveEncoder.encode(payload, protocol: .ultrasoundFastest, volume: 30)
        try WAVFile.write(silence + beacon + silence + silence, format: .pcm16, to: TestALSA.path("late.wav"))
        let heard = log.wait { $0.contains { if case .received = $0 { true } else { false } } }
        rx.stop()
        #expect(heard, "events: \(log.events)")
        #expect(log.events.contains(.ready(device: "late_in")))
        #expect(log.events.compactMap { if case .received(let r) = $0 { r.payload } else { nil } } == [payload])
    }
}
