#if DEBUG || FUZZING
@testable import Modem

/// Audio from outside: WAV files (`decode FILE.wav`) and whatever the microphone hears.
enum ModemTargets {
    static func wav(_ input: FuzzInput) {
        guard let audio = try? WAVParser.parse(input.bytes, path: "fuzz.wav") else { return }
        require(audio.channels >= 1 && audio.sampleRate > 0, "accepted \(audio.channels) channels at \(audio.sampleRate) Hz")
        require(audio.samples.allSatisfy { $0.isFinite }, "non-finite samples")
        require(audio.samples.count <= input.bytes.count, "\(audio.samples.count) samples from \(input.bytes.count) bytes")
    }

    /// 16-bit little-endian samples, fed in pieces of fuzzer-chosen sizes; the first byte picks the
    /// protocols listened for.
    static func modemReceiver(_ input: FuzzInput) {
        var input = input
        let choice = Int(input.byte())
        let protocols = GGWaveProtocol.allCases.enumerated().filter { choice & (1 << $0.offset) != 0 }.map(\.element)
        var decoder = GGWaveDecoder(protocols: protocols.isEmpty ? GGWaveProtocol.allCases : protocols)
        let cut = 64 * (Int(input.byte()) + 1)
        while !input.isEmpty {
            let bytes = input.take(2 * cut)
            var samples: [Float] = []
            samples.reserveCapacity(bytes.count / 2)
            var index = bytes.startIndex
            while index + 1 < bytes.endIndex {
                samples.append(Float(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8)) / 32768)
                index += 2
            }
            for payload in decoder.feed(samples) {
                require(payload.count <= 140, "a \(payload.count)-byte payload")
            }
        }
    }
}
#endif
