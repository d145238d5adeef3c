/// The three ggwave ultrasound protocols ("[U] Normal", "[U] Fast", "[U] Fastest"; ids 3, 4, 5 in
/// ggwave's `ggwave_ProtocolId`). They share the tone layout and the markers and differ only in how
/// many 1024-sample frames each 3-byte chunk is held for. Facts and their sources: docs/modem.md.
public enum GGWaveProtocol: String, Sendable, CaseIterable, CustomStringConvertible {
    case ultrasoundNormal = "ultrasound-normal"
    case ultrasoundFast = "ultrasound-fast"
    case ultrasoundFastest = "ultrasound-fastest"

    /// ggwave's numeric protocol id (what `ggwave.encode(..., protocolId=)` takes).
    public var ggwaveID: Int {
        switch self {
        case .ultrasoundNormal: 3
        case .ultrasoundFast: 4
        case .ultrasoundFastest: 5
        }
    }

    /// Frames (of `GGWave.samplesPerFrame`) each chunk of `GGWave.bytesPerTx` bytes is held for.
    public var framesPerTx: Int {
        switch self {
        case .ultrasoundNormal: 9
        case .ultrasoundFast: 6
        case .ultrasoundFastest: 3
        }
    }

    public var description: String { rawValue }

    /// Samples of one chunk ("tx slot").
    var samplesPerTx: Int { framesPerTx * GGWave.samplesPerFrame }

    /// Number of samples a beacon carrying `payloadLength` bytes lasts (markers included).
    public func sampleCount(payloadLength: Int) -> Int {
        (2 * GGWave.markerFrames + GGWave.txCount(payloadLength: payloadLength) * framesPerTx)
            * GGWave.samplesPerFrame
    }

    /// Duration in seconds of a beacon carrying `payloadLength` bytes.
    public func duration(payloadLength: Int) -> Double {
        Double(sampleCount(payloadLength: payloadLength)) / Double(GGWave.sampleRate)
    }
}

/// Constants of ggwave's variable-length mode at its default parameters.
public enum GGWave {
    public static let sampleRate = 48_000
    public static let samplesPerFrame = 1024
    /// Largest payload in variable-length mode (ggwave's `kMaxLengthVariable`).
    public static let maxPayloadLength = 140
    /// Start and end markers last this many frames each.
    static let markerFrames = 16
    /// Tones of a marker: one per pair of neighbouring bins, 16 pairs.
    static let markerPairs = 16
    /// FFT bin of the lowest tone: 320 × 46.875 Hz = 15 000 Hz (ultrasound protocols).
    static let freqStart = 320
    /// Bytes per chunk; each byte is two 4-bit nibbles, each nibble one tone among 16 bins.
    static let bytesPerTx = 3
    static let nibblesPerTx = 2 * bytesPerTx
    /// The length block in front of the data: the length byte plus its 2 RS check bytes.
    static let lengthBlockBytes = 3
    /// Bins spanned by the data tones: 6 nibbles × 16 bins = 96 (15 000 … 19 453 Hz).
    static let dataBins = nibblesPerTx * 16
    static let hzPerBin = Double(sampleRate) / Double(samplesPerFrame)

    /// Reed–Solomon check bytes protecting a payload of `length` bytes.
    static func eccBytes(length: Int) -> Int {
        length < 4 ? 2 : max(4, 2 * (length / 5))
    }

    /// Bytes sent after the start marker: length block, payload, payload check bytes.
    static func encodedLength(payloadLength: Int) -> Int {
        lengthBlockBytes + payloadLength + eccBytes(length: payloadLength)
    }

    /// Chunks sent for a payload (the last one padded with zero bytes).
    static func txCount(payloadLength: Int) -> Int {
        (encodedLength(payloadLength: payloadLength) + bytesPerTx - 1) / bytesPerTx
    }
}
