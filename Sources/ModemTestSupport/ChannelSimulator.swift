import Glibc
import Modem
import SplitMix
import SystemCall

/// What lies between a speaker and a microphone, for tests and the benchmark: the speaker's band
/// limit, the room's echoes, the two devices' sample clocks, and noise. Every random draw comes from
/// the seed, so a trial can be replayed exactly.
public struct Channel: Sendable, Equatable, CustomStringConvertible {
    /// Receiver sample clock minus transmitter clock, in parts per million (+ = the microphone
    /// samples faster, so the beacon arrives longer and lower).
    public var clockPPM: Double = 0
    /// Reverberation time (−60 dB) of a synthetic room; 0 = no room (direct path only).
    public var rt60: Double = 0
    /// Energy of the reverberant tail over the direct path, in dB (a few metres from a speaker in a
    /// living room is about 0 dB; further away it is positive).
    public var reverbToDirectDB: Double = 0
    /// Speaker roll-off: a 4th-order Butterworth low-pass at this frequency (24 dB/octave).
    public var lowPassHz: Double?
    /// Speaker tilt: the response falls this many dB per kHz above `tiltStartHz`.
    public var tiltDBPerKHz: Double = 0
    public var tiltStartHz: Double = 15_000
    /// White Gaussian noise over the whole file: beacon power (as sent) over noise variance; nil = none.
    public var snrDB: Double?

    public init(clockPPM: Double = 0, rt60: Double = 0, reverbToDirectDB: Double = 0, lowPassHz: Double? = nil,
                tiltDBPerKHz: Double = 0, snrDB: Double? = nil) {
        self.clockPPM = clockPPM
        self.rt60 = rt60
        self.reverbToDirectDB = reverbToDirectDB
        self.lowPassHz = lowPassHz
        self.tiltDBPerKHz = tiltDBPerKHz
        self.snrDB = snrDB
    }

    public var description: String {
        var parts: [String] = []
        if clockPPM != 0 { parts.append(String(cFormat: "clock %+.0f ppm", clockPPM)) }
        if rt60 > 0 { parts.append(String(cFormat: "RT60 %.2f s", rt60)) }
        if let lowPassHz { parts.append(String(cFormat: "low-pass %.0f kHz", lowPassHz / 1000)) }
        if tiltDBPerKHz != 0 { parts.append(String(cFormat: "tilt −%.0f dB/kHz above %.0f kHz", tiltDBPerKHz, tiltStartHz / 1000)) }
        if let snrDB { parts.append(String(cFormat: "%+.0f dB SNR", snrDB)) }
        return parts.isEmpty ? "clean" : parts.joined(separator: ", ")
    }
}

public enum ChannelSimulator {
    public struct Trial: Sendable {
        public var samples: [Float]
        /// Where the beacon's first sample lands in `samples` (receiver clock).
        public var beaconStart: Int
    }

    /// `beacon` with 0.5–1.5 s of silence either side (random), through `channel`.
    public static func trial(_ beacon: [Float], channel: Channel, seed: UInt64) -> Trial {
        var random = SeededGenerator(seed: seed)
        let rate = Double(GGWave.sampleRate)
        let lead = Int(Double.random(in: 0.5...1.5, using: &random) * rate)
        let tail = Int(Double.random(in: 0.5...1.5, using: &random) * rate) + Int(channel.rt60 * rate)
        let power = beacon.isEmpty ? 0 : beacon.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(beacon.count)
        var x = [Double](repeating: 0, count: lead) + beacon.map(Double.init) + [Double](repeating: 0, count: tail)
        if let cutoff = channel.lowPassHz { x = butterworthLowPass(x, cutoff: cutoff) }
        if channel.rt60 > 0 || channel.tiltDBPerKHz != 0 {
            let room = channel.rt60 > 0 ? roomImpulseResponse(rt60: channel.rt60, reverbToDirectDB: channel.reverbToDirectDB,
                                                               using: &random) : [1]
            x = filter(x, impulse: room, tiltDBPerKHz: channel.tiltDBPerKHz, tiltStartHz: channel.tiltStartHz)
        }
        var start = lead
        if channel.clockPPM != 0 {
            let ratio = 1 + channel.clockPPM * 1e-6
            x = resample(x, ratio: ratio)
            start = Int((Double(lead) * ratio).rounded())
        }
        if let snr = channel.snrDB {
            let sigma = (power / pow(10, snr / 10)).squareRoot()
            for i in x.indices { x[i] += sigma * gaussian(using: &random) }
        }
        return Trial(samples: x.map { Float($0) }, beaconStart: start)
    }

    /// Exponentially decaying Gaussian noise (the diffuse field of a room) after a direct path of 1,
    /// starting 2 ms later, scaled to `reverbToDirectDB`, cut at −60 dB.
    public static func roomImpulseResponse(rt60: Double, reverbToDirectDB: Double, using random: inout SeededGenerator) -> [Double] {
        let rate = Double(GGWave.sampleRate)
        let gap = Int(0.002 * rate)
        let length = Int(rt60 * rate)
        let decay = 6.907755 / (rt60 * rate)   // ln(1000): amplitude −60 dB after rt60
        var tail = (0..<length).map { n in gaussian(using: &random) * exp(-decay * Double(n)) }
        let energy = tail.reduce(0) { $0 + $1 * $1 }
        let scale = (pow(10, reverbToDirectDB / 10) / max(energy, 1e-30)).squareRoot()
        for i in tail.indices { tail[i] *= scale }
        return [1] + [Double](repeating: 0, count: gap - 1) + tail
    }

    /// Convolution with `impulse` and the tilt (zero phase), through one FFT of the whole signal.
    static func filter(_ x: [Double], impulse: [Double], tiltDBPerKHz: Double, tiltStartHz: Double) -> [Double] {
        var n = 1
        while n < x.count + impulse.count { n *= 2 }
        var xr = x + [Double](repeating: 0, count: n - x.count), xi = [Double](repeating: 0, count: n)
        var hr = impulse + [Double](repeating: 0, count: n - impulse.count), hi = [Double](repeating: 0, count: n)
        fft(&xr, &xi, inverse: false)
        fft(&hr, &hi, inverse: false)
        let rate = Double(GGWave.sampleRate)
        for k in 0..<n {
            let f = Double(min(k, n - k)) * rate / Double(n)
            let gain = pow(10, -tiltDBPerKHz * max(0, f - tiltStartHz) / 1000 / 20)
            let re = (xr[k] * hr[k] - xi[k] * hi[k]) * gain
            let im = (xr[k] * hi[k] + xi[k] * hr[k]) * gain
            xr[k] = re
            xi[k] = im
        }
        fft(&xr, &xi, inverse: true)
        return (0..<x.count).map { xr[$0] / Double(n) }
    }

    /// y[m] = x(m / ratio): the same sound sampled by a clock `ratio` times faster. Blackman-windowed
    /// sinc with 32 taps, flat to 20 kHz within a fraction of a dB at 48 kHz.
    static func resample(_ x: [Double], ratio: Double) -> [Double] {
        let half = 16
        let count = Int(Double(x.count) * ratio)
        var y = [Double](repeating: 0, count: count)
        for m in 0..<count {
            let t = Double(m) / ratio
            let center = Int(t.rounded(.down))
            let first = center - half + 1
            // sin(π(t − k)) only changes sign from one k to the next.
            var sign = sin(Double.pi * (t - Double(first)))
            var acc = 0.0
            for k in first...(center + half) {
                defer { sign = -sign }
                guard k >= 0 && k < x.count else { continue }
                let d = t - Double(k)
                let sinc = abs(d) < 1e-12 ? 1 : sign / (Double.pi * d)
                acc += x[k] * sinc * blackman(d / Double(half))
            }
            y[m] = acc
        }
        return y
    }

    /// Blackman window on [−1, 1], from a table (the resampler asks for it 32 times a sample).
    private static let windowTable: [Double] = (0...4096).map { i in
        let r = Double(i) / 4096
        return 0.42 + 0.5 * cos(Double.pi * r) + 0.08 * cos(2 * Double.pi * r)
    }

    private static func blackman(_ r: Double) -> Double {
        let a = min(abs(r), 1) * 4096
        let i = Int(a)
        if i >= 4096 { return windowTable[4096] }
        let f = a - Double(i)
        return windowTable[i] * (1 - f) + windowTable[i + 1] * f
    }

    /// 4th-order Butterworth low-pass: two biquads (bilinear transform, Q 0.5412 and 1.3066).
    static func butterworthLowPass(_ x: [Double], cutoff: Double) -> [Double] {
        var y = x
        for q in [0.541_196_1, 1.306_563] {
            let w0 = 2 * Double.pi * cutoff / Double(GGWave.sampleRate)
            let alpha = sin(w0) / (2 * q), c = cos(w0)
            let a0 = 1 + alpha
            let b0 = (1 - c) / 2 / a0, b1 = (1 - c) / a0, b2 = b0
            let a1 = -2 * c / a0, a2 = (1 - alpha) / a0
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in y.indices {
                let v = y[i]
                let out = b0 * v + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
                x2 = x1; x1 = v; y2 = y1; y1 = out
                y[i] = out
            }
        }
        return y
    }

    static func gaussian(using random: inout SeededGenerator) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let u2 = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// In-place radix-2 complex FFT (n a power of two); the inverse is unscaled.
    static func fft(_ re: inout [Double], _ im: inout [Double], inverse: Bool) {
        let n = re.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var len = 2
        while len <= n {
            let angle = (inverse ? 2 : -2) * Double.pi / Double(len)
            let wr = cos(angle), wi = sin(angle)
            var start = 0
            while start < n {
                var cr = 1.0, ci = 0.0
                for k in 0..<(len / 2) {
                    let a = start + k, b = a + len / 2
                    let tr = re[b] * cr - im[b] * ci, ti = re[b] * ci + im[b] * cr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                    let nr = cr * wr - ci * wi
                    ci = cr * wi + ci * wr
                    cr = nr
                }
                start += len
            }
            len *= 2
        }
    }
}

/// The channels issue 16 measures, by name: the benchmark writes a file per cell, protocol and
/// trial, and the tests decode a few of them with fixed seeds.
public enum ChannelCells {
    public static let all: [(name: String, channel: Channel)] = [
        ("white-noise-15dB", Channel(snrDB: -15)),
        ("clock+100ppm", Channel(clockPPM: 100, snrDB: 0)),
        ("clock+150ppm", Channel(clockPPM: 150, snrDB: 0)),
        ("clock+200ppm", Channel(clockPPM: 200, snrDB: 0)),
        ("clock+1000ppm", Channel(clockPPM: 1000, snrDB: 0)),
        ("clock-1000ppm", Channel(clockPPM: -1000, snrDB: 0)),
        ("rt60-0.5s", Channel(rt60: 0.5, snrDB: 0)),
        ("rt60-1.0s", Channel(rt60: 1.0, snrDB: 0)),
        ("lowpass-16kHz", Channel(lowPassHz: 16_000, snrDB: 0)),
        ("lowpass-18kHz", Channel(lowPassHz: 18_000, snrDB: 0)),
        ("tilt-3dB/kHz", Channel(tiltDBPerKHz: 3, snrDB: 0)),
        ("lowpass-18kHz-10dB", Channel(lowPassHz: 18_000, snrDB: -10)),
        ("tilt-3dB/kHz-10dB", Channel(tiltDBPerKHz: 3, snrDB: -10)),
    ]

    public static func named(_ name: String) -> Channel? { all.first { $0.name == name }?.channel }

    /// The seed of one trial: the same cell, protocol and trial always give the same file.
    public static func seed(base: UInt64, cell: String, protocol proto: GGWaveProtocol, trial: Int) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ base
        for b in Array("\(cell)/\(proto.ggwaveID)/\(trial)".utf8) { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}
