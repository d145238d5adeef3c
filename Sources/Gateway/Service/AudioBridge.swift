import Config
import Dispatch
import Logging
import Modem
import SystemCall

/// The speaker and microphone as the manager sees them: the modem's ALSA threads, with their events
/// turned into manager calls. Starting and stopping capture waits for the capture thread, so it runs
/// on a queue of its own, never on the manager's actor.
final class AudioBridge: AudioInterface {
    private let transmitter: AudioTransmitter
    private let receiver: AudioReceiver
    private let captureSettings: AudioReceiver.Settings?
    private let control = DispatchQueue(label: "nearby-gateway.audio-control")
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
        control.async { [receiver] in
            if enabled { receiver.start(captureSettings) } else { receiver.stop() }
        }
    }

    /// Waits for both audio threads to end — on a thread of its own, never on Swift's cooperative
    /// pool (two threads here): the capture thread may take a read to notice, the speaker a write.
    func stop() async {
        await OwnThread.run("audio-stop") { [transmitter, receiver, control] in
            transmitter.stop()
            control.sync { receiver.stop() }
        }
    }
}
