import SystemCall

/// CPU cost of the modem as a fraction of real time (0.05 = 5 % of one core while audio flows), for
/// the benchmark command. Measures wall-clock time on the calling thread; not used by any test
/// assertion because timings depend on the machine's load.
public enum ModemCost {
    public struct Figures: Sendable, CustomStringConvertible {
        public var `protocol`: GGWaveProtocol
        public var payloadLength: Int
        /// Seconds spent encoding per second of audio produced.
        public var encode: Double
        /// Seconds spent decoding per second of audio consumed (beacons surrounded by silence, fed in
        /// 1024-sample blocks like a capture loop).
        public var decode: Double
        /// Whether every decode pass found the payload (a cost figure for a broken decoder is void).
        public var decodedAll: Bool

        public var description: String {
            "\(self.protocol.rawValue) "
                + String(cFormat: "%3d bytes: encode %.4f, decode %.4f of real time", payloadLength, encode, decode)
                + (decodedAll ? "" : " (DECODE FAILED)")
        }
    }

    public static func measure(protocol proto: GGWaveProtocol, payloadLength: Int, repetitions: Int = 3) throws
        -> Figures
    {
        let payload = (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let clock = ContinuousClock()
        var samples: [Float] = []
        let encodeTime = try clock.measure {
            for _ in 0..<repetitions { samples = try GGWaveEncoder.encode(payload, protocol: proto, volume: 50) }
        }
        let padding = [Float](repeating: 0, count: GGWave.sampleRate / 2)
        let stream = padding + samples + padding
        // Cut into capture-sized blocks before the clock starts, as the ggwave harness beside it does.
        let blocks = captureBlocks(stream)
        var decodedAll = true
        let decodeTime = clock.measure {
            for _ in 0..<repetitions {
                var decoder = GGWaveDecoder(protocols: [proto])
                var found: [[UInt8]] = []
                for block in blocks { found += decoder.feed(block) }
                if found != [payload] { decodedAll = false }
            }
        }
        let encodedSeconds = Double(samples.count * repetitions) / Double(GGWave.sampleRate)
        let streamSeconds = Double(stream.count * repetitions) / Double(GGWave.sampleRate)
        return Figures(protocol: proto, payloadLength: payloadLength,
                       encode: seconds(encodeTime) / encodedSeconds,
                       decode: seconds(decodeTime) / streamSeconds, decodedAll: decodedAll)
    }

    /// `stream` in the 1024-sample blocks a capture device delivers.
    public static func captureBlocks(_ stream: [Float]) -> [[Float]] {
        stride(from: 0, to: stream.count, by: 1024).map { Array(stream[$0..<min($0 + 1024, stream.count)]) }
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}
