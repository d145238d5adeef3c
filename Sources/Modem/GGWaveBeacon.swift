/// What the speaker plays once per interval: every payload as its own ggwave transmission, one after
/// another, separated by silence so each receiver sees distinct start and end markers.
public enum GGWaveBeacon {
    /// Silence between two transmissions: 16 frames (≈ 0.34 s), the length of a marker, which gives
    /// ggwave's receiver (it averages 4 frames to find markers) a clean gap.
    public static let gapSamples = 16 * GGWave.samplesPerFrame

    public static func render(payloads: [[UInt8]], protocol proto: GGWaveProtocol, volume: Int) throws(GGWaveEncoderError)
        -> [Float]
    {
        var out: [Float] = []
        for (i, payload) in payloads.enumerated() {
            if i > 0 { out += [Float](repeating: 0, count: gapSamples) }
            out += try GGWaveEncoder.encode(payload, protocol: proto, volume: volume)
        }
        return out
    }

    /// Seconds the beacon lasts.
    public static func duration(payloadLengths: [Int], protocol proto: GGWaveProtocol) -> Double {
        let samples = payloadLengths.reduce(0) { $0 + proto.sampleCount(payloadLength: $1) }
            + max(0, payloadLengths.count - 1) * gapSamples
        return Double(samples) / Double(GGWave.sampleRate)
    }
}
