import Glibc

/// Plays the beacon on an ALSA device from its own thread: every `interval` while it has payloads,
/// nothing while it has none. Callers never wait for audio: `setPayloads` and `setVolume` only
/// change what the next beacon will be. A device that cannot be opened or fails is reported through
/// `onEvent` and retried with backoff; the beacon resumes by itself when the device comes back.
public final class AudioTransmitter: Sendable {
    public struct Settings: Sendable, Equatable {
        public var device: String
        public var interval: Duration
        public var volume: Int
        public var `protocol`: GGWaveProtocol

        public init(device: String, interval: Duration, volume: Int, protocol proto: GGWaveProtocol) {
            self.device = device
            self.interval = interval
            self.volume = volume
            self.protocol = proto
        }
    }

    private struct State {
        var settings: Settings?
        var payloads: [[UInt8]] = []
        var stopping = false
        var running = false
        /// When the next beacon is due (on `box.clock`); nil = as soon as there are payloads.
        var nextBeacon: Double?
    }

    typealias Renderer = @Sendable (_ payloads: [[UInt8]], _ proto: GGWaveProtocol, _ volume: Int)
        throws(GGWaveEncoderError) -> [Float]

    private let box: ConditionBox<State>
    private let onEvent: @Sendable (AudioEvent) -> Void
    private let opener: PCMOpener
    private let render: Renderer
    /// Samples handed to ALSA per write, so that `stop` is noticed within ~40 ms.
    static let writeChunk = 2048

    public convenience init(onEvent: @escaping @Sendable (AudioEvent) -> Void) {
        self.init(opener: ALSAOpener.open, onEvent: onEvent)
    }

    init(opener: @escaping PCMOpener, clock: any AudioClock = MonotonicClock(),
         render: @escaping Renderer = { p, proto, v throws(GGWaveEncoderError) in
             try GGWaveBeacon.render(payloads: p, protocol: proto, volume: v)
         },
         onEvent: @escaping @Sendable (AudioEvent) -> Void) {
        self.opener = opener
        self.onEvent = onEvent
        self.render = render
        box = ConditionBox(State(), clock: clock)
    }

    /// Starts the thread (once; later calls only change the settings).
    public func start(_ settings: Settings) throws(GGWaveEncoderError) {
        guard (0...100).contains(settings.volume) else { throw .volumeOutOfRange(settings.volume) }
        let launch = box.update { state -> Bool in
            state.settings = settings
            state.stopping = false
            defer { state.running = true }
            return !state.running
        }
        if launch {
            if !startAudioThread("beacon", device: settings.device, onEvent: onEvent, { [self] in run() }) { box.update { $0.running = false } }
        }
    }

    /// What to send from now on, each ≤ 140 bytes; [] = silent.
    public func setPayloads(_ payloads: [[UInt8]]) throws(GGWaveEncoderError) {
        for p in payloads {
            if p.isEmpty { throw .emptyPayload }
            if p.count > GGWave.maxPayloadLength { throw .payloadTooLong(length: p.count, maximum: GGWave.maxPayloadLength) }
        }
        box.update { state in
            if state.payloads.isEmpty && !payloads.isEmpty { state.nextBeacon = nil }   // start right away
            state.payloads = payloads
        }
    }

    public func setVolume(_ volume: Int) throws(GGWaveEncoderError) {
        guard (0...100).contains(volume) else { throw .volumeOutOfRange(volume) }
        box.update { $0.settings?.volume = volume }
    }

    /// Stops the thread and closes the device; returns once it has (within a write chunk and the
    /// device's 100 ms buffer).
    public func stop() {
        box.update { $0.stopping = true }
        box.next { state in state.running ? .sleep(until: nil) : .proceed(()) }
    }

    private struct Job {
        var settings: Settings
        var payloads: [[UInt8]]
    }

    private func run() {
        var device: (any PCMDevice)?
        var openName: String?
        var backoff = Backoff()
        var rendered: (key: [[UInt8]], settings: Settings, samples: [Float])?
        defer {
            device?.close()
            box.update { $0.running = false }
        }
        while true {
            // Sleep until stopped, or until there are payloads and the next beacon is due.
            let job: Job? = box.next { state in
                if state.stopping { return .proceed(nil) }
                guard let settings = state.settings, !state.payloads.isEmpty else { return .sleep(until: nil) }
                if let due = state.nextBeacon, due > box.clock.now() { return .sleep(until: due) }
                return .proceed(Job(settings: settings, payloads: state.payloads))
            }
            guard let job else { return }
            let started = box.clock.now()
            let interval = job.settings.interval
            let period = Double(interval.components.seconds) + Double(interval.components.attoseconds) * 1e-18
            if rendered == nil || rendered!.key != job.payloads || rendered!.settings != job.settings {
                do throws(GGWaveEncoderError) {
                    rendered = (job.payloads, job.settings,
                                try render(job.payloads, job.settings.protocol, job.settings.volume))
                } catch {
                    // Nothing to play: say so (never a beacon "played" with no samples) and try
                    // again a period later.
                    rendered = nil
                    onEvent(.beaconFailed(error))
                    box.update { $0.nextBeacon = started + period }
                    continue
                }
            }
            do throws(ALSAError) {
                if device == nil || openName != job.settings.device {
                    device?.close()
                    device = nil
                    device = try opener(job.settings.device, .playback)
                    openName = job.settings.device
                    backoff.reset()
                    onEvent(.ready(device: job.settings.device))
                }
                let samples = rendered!.samples
                var offset = 0
                while offset < samples.count {
                    if box.read({ $0.stopping }) { return }
                    let end = min(offset + Self.writeChunk, samples.count)
                    try device!.write(Array(samples[offset..<end]))
                    offset = end
                }
                try device!.drain()
                onEvent(.beaconPlayed(payloads: job.payloads.count,
                                      seconds: Double(samples.count) / Double(GGWave.sampleRate)))
                box.update { $0.nextBeacon = started + period }
            } catch {
                device?.close()
                device = nil
                let delay = backoff.fail()
                onEvent(.failed(error, retryIn: delay))
                box.update { $0.nextBeacon = box.clock.now() + delay }
            }
        }
    }
}
