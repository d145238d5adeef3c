extension GGWaveDecoder {
    /// Every payload in a whole recording, fed as a capture device would deliver it (blocks of
    /// `blockSize` samples) to a fresh decoder: the benchmarks and the channel tests read files
    /// and simulated trials alike.
    public static func payloads(in samples: [Float], protocols: [GGWaveProtocol] = GGWaveProtocol.allCases,
                                blockSize: Int = 1024) -> [[UInt8]] {
        var decoder = GGWaveDecoder(protocols: protocols)
        var found: [[UInt8]] = []
        var i = 0
        while i < samples.count {
            found += decoder.feed(Array(samples[i..<min(i + blockSize, samples.count)]))
            i += blockSize
        }
        return found
    }
}
