import Glibc

/// Listens on an ALSA capture device from its own thread and reports every ggwave payload heard.
/// A device that cannot be opened (missing, busy, no permission) or fails while capturing is
/// reported through `onEvent` and retried with backoff — the gateway shows it as its
/// `microphone-permission` error until `.ready` comes back (sent once samples flow, not at open).
public final class AudioReceiver: Sendable {
    public struct Settings: Sendable, Equatable {
        public var device: String
        public var protocols: [GGWaveProtocol]

        public init(device: String, protocols: [GGWaveProtocol] = GGWaveProtocol.allCases) {
            self.device = device
            self.protocols = protocols
        }
    }

    private struct State {
        var stopping = false
        var running = false
    }

    private let box: ConditionBox<State>
    private let onEvent: @Sendable (AudioEvent) -> Void
    private let opener: PCMOpener
    /// Samples per read: 1024 at 48 kHz is ~21 ms, so `stop` is noticed quickly.
    static let readSize = 1024
    /// A source that delivers faster than real time (a file behind alsa-lib's `file` plugin with a
    /// `null` slave) may run this far ahead of the clock before the thread paces itself.
    static let maxLead = 10.0

    public convenience init(onEvent: @escaping @Sendable (AudioEvent) -> Void) {
        self.init(opener: ALSAOpener.open, onEvent: onEvent)
    }

    init(opener: @escaping PCMOpener, clock: any AudioClock = MonotonicClock(),
         onEvent: @escaping @Sendable (AudioEvent) -> Void) {
        self.opener = opener
        self.onEvent = onEvent
        box = ConditionBox(State(), clock: clock)
    }

    /// Starts the capture thread; does nothing if it already runs.
    public func start(_ settings: Settings) {
        let launch = box.update { state -> Bool in
            guard !state.running else { return false }
            state.running = true
            state.stopping = false
            return true
        }
        guard launch else { return }
        if !startAudioThread("capture", device: settings.device, onEvent: onEvent, { [self] in run(settings) }) { box.update { $0.running = false } }
    }

    /// Stops capturing and closes the device; returns once the thread has (within one read).
    public func stop() {
        box.update { $0.stopping = true }
        box.next { state in state.running ? .sleep(until: nil) : .proceed(()) }
    }

    private func run(_ settings: Settings) {
        var backoff = Backoff()
        defer { box.update { $0.running = false } }
        while !box.read({ $0.stopping }) {
            do throws(ALSAError) {
                let device = try opener(settings.device, .capture)
                defer { device.close() }
                try capture(from: device, settings) {
                    backoff.reset()
                    onEvent(.ready(device: settings.device))
                }
                return
            } catch {
                let delay = backoff.fail()
                onEvent(.failed(error, retryIn: delay))
                sleep(until: box.clock.now() + delay)
            }
        }
    }

    /// Reads and decodes until stopped (returns) or the device fails (throws). `flowing` runs once,
    /// after the first read: a stalled card opens fine and then delivers nothing, and reporting it
    /// ready at open would clear the microphone error at every retry of a device still stalled.
    private func capture(from device: any PCMDevice, _ settings: Settings, flowing: () -> Void) throws(ALSAError) {
        var decoder = GGWaveDecoder(protocols: settings.protocols)
        let began = box.clock.now()
        var samplesRead = 0
        while !box.read({ $0.stopping }) {
            let samples = try device.read(Self.readSize)
            if samplesRead == 0 { flowing() }
            let overruns = device.takeOverruns()
            if overruns > 0 { onEvent(.captureOverrun(count: overruns)) }
            samplesRead += samples.count
            for reception in decoder.feedReceptions(samples) { onEvent(.received(reception)) }
            let ahead = Double(samplesRead) / Double(GGWave.sampleRate) - (box.clock.now() - began)
            if ahead > Self.maxLead { sleep(until: box.clock.now() + ahead - Self.maxLead) }
        }
    }

    /// Until `deadline` on the box's clock, or until stopped.
    private func sleep(until deadline: Double) {
        box.next { state in state.stopping || box.clock.now() >= deadline ? .proceed(()) : .sleep(until: deadline) }
    }
}
