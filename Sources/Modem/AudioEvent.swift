/// What the audio threads report to their owner.
public enum AudioEvent: Sendable, Equatable {
    /// The device is open (first time, or again after a failure: the error state can be cleared).
    /// A capture device is ready once its first samples arrived: one that opens but stays silent
    /// (stalled) only ever fails.
    case ready(device: String)
    /// Opening or using the device failed; it is retried after `retryIn` seconds.
    case failed(ALSAError, retryIn: Double)
    /// The beacon could not be rendered (nothing was played); tried again an interval later.
    case beaconFailed(GGWaveEncoderError)
    /// One beacon (all current payloads) went out.
    case beaconPlayed(payloads: Int, seconds: Double)
    /// The capture thread fell behind and the device overran `count` times (samples were lost; the
    /// stream was recovered and goes on).
    case captureOverrun(count: Int)
    /// A payload heard on the capture device.
    case received(GGWaveReception)
}

/// Exponential backoff for reopening a device: 0.5 s doubling up to 30 s, reset on success.
struct Backoff {
    static let first = 0.5
    static let limit = 30.0
    private(set) var next = first

    mutating func fail() -> Double {
        let delay = next
        next = min(next * 2, Self.limit)
        return delay
    }

    mutating func reset() { next = Self.first }
}
