import Config
import Logging
import Modem
import Synchronization
import SystemCall

/// The speaker and microphone as the manager sees them: the modem's ALSA threads, with their events
/// turned into manager calls. Starting and stopping capture waits for the capture thread, so each
/// change runs on a thread of its own (`OSThread`), never on the manager's actor.
final class AudioBridge: AudioInterface {
    private let transmitter: AudioTransmitter
    private let receiver: AudioReceiver
    private let captureSettings: AudioReceiver.Settings?
    /// The thread of the last capture change asked for. Each change first joins the one before, so
    /// they happen in the order asked (a stop returns once the capture thread has ended, and only
    /// then may the next start make a new one); the last is joined by `stop`.
    private let lastCaptureChange = Mutex<OSThread.Joinable?>(nil)
    private let logger: Logger

    /// `capture` empty = no audio scanning (docs/product.md §12).
    init(settings: GatewayConfig.AudioSettings, events: @escaping @Sendable (AudioEvent, AudioSide) -> Void, logger: Logger) throws {
        self.logger = logger
        transmitter = AudioTransmitter { events($0, .playback) }
        receiver = AudioReceiver { events($0, .capture) }
        captureSettings = settings.capture.isEmpty ? nil : AudioReceiver.Settings(device: settings.capture)
        let proto = GGWaveProtocol(rawValue: settings.protocol.rawValue) ?? .ultrasoundFast
        // The playback thread only opens the device once it has payloads to play.
        try transmitter.start(.init(device: settings.device, interval: .seconds(settings.intervalS), volume: settings.volume,
                                    protocol: proto))
    }

    enum AudioSide: Sendable { case playback, capture }

    func setPayloads(_ payloads: [[UInt8]]) {
        do {
            try transmitter.setPayloads(payloads)
        } catch {
            logger.error("audio beacon not changed: \(error)")
        }
    }

    func setCapture(_ enabled: Bool) {
        guard let captureSettings else { return }
        let change: @Sendable () -> Void = { [receiver] in
            if enabled { receiver.start(captureSettings) } else { receiver.stop() }
        }
        lastCaptureChange.withLock { last in
            let previous = last.take()
            do throws(Errno) {
                last = try OSThread.spawn(name: "audio-capture") { previous?.join(); change() }
            } catch {
                // No thread to be had (EAGAIN): the change still has to happen, so it runs here and
                // stalls the caller for its length rather than being lost (as `OwnThread.run` does).
                previous?.join()
                change()
            }
        }
    }

    /// Waits for both audio threads to end — on a thread of its own, never on Swift's cooperative
    /// pool (two threads here): the capture thread may take a read to notice, the speaker a write.
    func stop() async {
        let last = lastCaptureChange.withLock { $0.take() }
        await OwnThread.run("audio-stop") { [transmitter, receiver] in
            transmitter.stop()
            last?.join()
            receiver.stop()
        }
    }
}
