import LEDs
import NearbyProtocol
import Radio

/// The hardware and the outside world as the message manager sees them: one protocol per seam, so the
/// manager's logic is unit-tested with fakes while the end-to-end tests use the real parts.

/// The BLE radio (implemented by `Radio`).
protocol AirInterface: Sendable {
    /// New payloads; with `rotatingAddress` a fresh random address in the same step (privacy rotation:
    /// new ids never leave from the old address, nor old ids from the new one).
    func setAdvertisements(_ payloads: [[UInt8]], rotatingAddress: Bool) async
    func setScanning(_ enabled: Bool) async
    /// The controller's counters (HCI commands sent and their rate among them).
    var statistics: RadioStatistics { get }
}

/// The speaker and microphone (implemented over `AudioTransmitter` / `AudioReceiver`).
protocol AudioInterface: Sendable {
    func setPayloads(_ payloads: [[UInt8]])
    func setCapture(_ enabled: Bool)
}

/// The socket broker and, with `[mqtt]`, the MQTT bridge: every event goes to each, in order.
struct EventFanOut: EventSink {
    let sinks: [any EventSink]

    func publish(_ event: BrokerEvent) {
        for sink in sinks { sink.publish(event) }
    }
}

/// The front panel (implemented by `LEDPanel`).
protocol PanelInterface: Sendable {
    func handle(_ event: LEDEvent) async
    /// Whether the caller runs on the panel's executor (the gateway's loop, as the manager does), so
    /// that `handleNow` may be called.
    var isCurrent: Bool { get }
    /// `handle` in this call, without a task or an await; only where `isCurrent`.
    func handleNow(_ event: LEDEvent)
}

extension LEDPanel: PanelInterface {}
