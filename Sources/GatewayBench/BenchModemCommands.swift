import ArgumentParser
import Glibc
import Modem
import SystemCall

/// Encode and decode cost as a fraction of real time, per protocol (`ModemCost`, the modem's own
/// helper: encode a payload, then decode it with silence around it in 1024-sample blocks).
struct BenchModemCostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "modem-cost", abstract: "Modem cost as a fraction of real time.")

    @Option(help: "Payload length in bytes.") var length = 32
    @Option(help: "Passes; the total time is divided by the total audio.") var repetitions = 3

    func run() throws {
        var rows: [[String: Any]] = []
        for proto in GGWaveProtocol.allCases {
            let figures = try ModemCost.measure(protocol: proto, payloadLength: length, repetitions: repetitions)
            let (everyProtocol, decoded) = try decodeCostListeningToAll(proto)
            rows.append(["protocol": proto.rawValue, "ggwave_id": proto.ggwaveID, "length": length,
                         "encode": figures.encode, "decode": figures.decode, "decoded_all": figures.decodedAll && decoded,
                         "decode_every_protocol": everyProtocol])
        }
        BenchJSON.print(["protocols": rows])
    }

    /// The same decode as `ModemCost`, with the receiver listening for every protocol, as the gateway's is.
    private func decodeCostListeningToAll(_ proto: GGWaveProtocol) throws -> (Double, Bool) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let padding = [Float](repeating: 0, count: GGWave.sampleRate / 2)
        let stream = padding + (try GGWaveEncoder.encode(payload, protocol: proto, volume: 50)) + padding
        let blocks = ModemCost.captureBlocks(stream)
        var ok = true
        let elapsed = ContinuousClock().measure {
            for _ in 0..<repetitions {
                var decoder = GGWaveDecoder()
                var found: [[UInt8]] = []
                for block in blocks { found += decoder.feed(block) }
                if found != [payload] { ok = false }
            }
        }
        return (elapsed.seconds / (Double(stream.count * repetitions) / Double(GGWave.sampleRate)), ok)
    }
}

/// Decodes WAV files with the gateway's streaming receiver (every protocol listened for, 1024-sample
/// blocks, as on a capture device) and lists the payloads found in each.
struct BenchModemDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "modem-decode", abstract: "Payloads found in WAV files.")

    @Argument var files: [String]

    func run() throws {
        var found: [String: [String]] = [:]
        let clock = ContinuousClock()
        var audioSeconds = 0.0
        let elapsed = try clock.measure {
            for file in files {
                let audio = try WAVFile.read(path: file)
                let payloads = GGWaveDecoder.payloads(in: audio.samples)
                audioSeconds += Double(audio.samples.count) / Double(audio.sampleRate)
                found[PathText.lastComponent(file)] = payloads.map { Hex.lower($0) }
            }
        }
        BenchJSON.print(["files": found, "seconds": elapsed.seconds, "audio_seconds": audioSeconds])
    }
}
