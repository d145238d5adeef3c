/// The hardware seam of the audio threads: ALSA in the product, a fake in tests of error paths.
/// Used from one thread at a time.
protocol PCMDevice: AnyObject {
    func write(_ samples: [Float]) throws(ALSAError)
    func drain() throws(ALSAError)
    func read(_ count: Int) throws(ALSAError) -> [Float]
    /// Overruns recovered since the last call.
    func takeOverruns() -> Int
    func close()
}

extension ALSAPCM: PCMDevice {}

typealias PCMOpener = @Sendable (_ device: String, _ stream: PCMStream) throws(ALSAError) -> any PCMDevice

enum ALSAOpener {
    static let open: PCMOpener = { device, stream throws(ALSAError) in try ALSAPCM(device: device, stream: stream) }
}
