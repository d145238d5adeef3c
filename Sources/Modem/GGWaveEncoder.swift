import Glibc

public enum GGWaveEncoderError: Error, Equatable, CustomStringConvertible {
    case emptyPayload
    case payloadTooLong(length: Int, maximum: Int)
    case volumeOutOfRange(Int)

    public var description: String {
        switch self {
        case .emptyPayload: "a ggwave beacon needs at least one byte of payload"
        case .payloadTooLong(let length, let maximum):
            "payload of \(length) bytes is over ggwave's maximum of \(maximum)"
        case .volumeOutOfRange(let v): "volume \(v) is outside 0...100"
        }
    }
}

/// Renders a payload into the waveform ggwave's own transmitter produces for the same protocol and
/// volume (48 kHz mono, float samples): start marker, chunks, end marker, each tone with ggwave's
/// phase and its raised edges, every frame scaled by volume/100 divided by its number of tones.
public enum GGWaveEncoder {
    public static func encode(_ payload: [UInt8], protocol proto: GGWaveProtocol, volume: Int) throws(GGWaveEncoderError)
        -> [Float]
    {
        guard !payload.isEmpty else { throw GGWaveEncoderError.emptyPayload }
        guard payload.count <= GGWave.maxPayloadLength else {
            throw GGWaveEncoderError.payloadTooLong(length: payload.count, maximum: GGWave.maxPayloadLength)
        }
        guard (0...100).contains(volume) else { throw GGWaveEncoderError.volumeOutOfRange(volume) }

        let n = GGWave.samplesPerFrame
        let bytes = GGWaveSymbols.encodedBytes(payload: payload)
        let chunks = bytes.count / GGWave.bytesPerTx
        let totalFrames = 2 * GGWave.markerFrames + chunks * proto.framesPerTx
        var out = [Float](repeating: 0, count: totalFrames * n)
        let gain = Float(Double(volume) / 100)
        let tones = ToneTable.shared

        func addFrame(_ toneOffsets: [Int], frame: Int, cycle: Int, cycleFrames: Int) {
            let envelope = Envelope(cycleFrames: cycleFrames, samplesPerFrame: n)
            let scale = 1 / Float(toneOffsets.count)
            let base = frame * n
            var acc = [Float](repeating: 0, count: n)
            for t in toneOffsets {
                let wave = tones.wave(offset: t)
                for i in 0..<n {
                    acc[i] += gain * wave[i] * envelope.weight(cycle * n + i)
                }
            }
            for i in 0..<n { out[base + i] = acc[i] * scale }
        }

        let startTones = GGWaveSymbols.markerTones(start: true)
        let endTones = GGWaveSymbols.markerTones(start: false)
        for f in 0..<GGWave.markerFrames {
            addFrame(startTones, frame: f, cycle: f, cycleFrames: GGWave.markerFrames)
        }
        for c in 0..<chunks {
            let chunkTones = GGWaveSymbols.chunkTones(bytes[(c * GGWave.bytesPerTx)..<((c + 1) * GGWave.bytesPerTx)])
            for k in 0..<proto.framesPerTx {
                let frame = GGWave.markerFrames + c * proto.framesPerTx + k
                addFrame(chunkTones, frame: frame, cycle: k, cycleFrames: proto.framesPerTx)
            }
        }
        let endStart = GGWave.markerFrames + chunks * proto.framesPerTx
        for f in 0..<GGWave.markerFrames {
            addFrame(endTones, frame: endStart + f, cycle: f, cycleFrames: GGWave.markerFrames)
        }
        return out
    }
}

/// ggwave's edge shaping: over a group of frames (a marker or a chunk) the amplitude rises linearly
/// over the first 15 % of samples and falls over the last 15 %.
struct Envelope {
    let total: Int
    let rampEnd: Int
    let fallStart: Int
    let inverseRamp: Float

    init(cycleFrames: Int, samplesPerFrame: Int) {
        total = cycleFrames * samplesPerFrame
        let ramp = Float(0.15) * Float(total)
        rampEnd = Int(ramp)
        fallStart = Int(Float(0.85) * Float(total))
        inverseRamp = 1 / ramp
    }

    @inline(__always)
    func weight(_ k: Int) -> Float {
        if k < rampEnd { return Float(k) * inverseRamp }
        if k > fallStart { return Float(total - k) * inverseRamp }
        return 1
    }
}

/// One frame of every tone the ultrasound protocols use. Tone offset t (bin 320 + t) starts with
/// phase π·⌊t/2⌋/24, as ggwave's transmitter does; bins are whole, so frames join without a jump.
final class ToneTable: Sendable {
    static let shared = ToneTable()
    private let waves: [[Float]]

    private init() {
        let n = GGWave.samplesPerFrame
        waves = (0..<GGWave.dataBins).map { t in
            let bin = Double(GGWave.freqStart + t)
            let phase = Double.pi * Double(t / 2) / Double(8 * GGWave.bytesPerTx)
            return (0..<n).map { i in Float(sin(2 * Double.pi * Double(i) / Double(n) * bin + phase)) }
        }
    }

    func wave(offset: Int) -> [Float] { waves[offset] }
}
