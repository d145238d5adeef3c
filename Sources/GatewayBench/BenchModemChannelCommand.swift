import ArgumentParser
import FoundationEssentials
import Modem
import ModemTestSupport
import SplitMix
import SystemCall

/// Writes the channel corpus of issue 16 (clock offset, rooms, speaker band limits, at SNR): one
/// float WAV per cell, protocol and trial, and manifest.tsv (file, ggwave id, cell, payload hex,
/// beacon start). The waveform is our encoder's, which equals ggwave's own to 1e-5
/// (EncoderCompatibilityTests). With --decode, also decodes each file here and prints the counts.
struct BenchModemChannelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "modem-channel",
                                                    abstract: "Write (and optionally decode) the channel corpus.")

    @Option(help: "Folder for the WAV files and manifest.tsv.") var out: String
    @Option(help: "Trials per cell and protocol.") var trials = 10
    @Option(help: "Payload length in bytes.") var length = 16
    @Option(help: "Seed of the whole corpus.") var seed: UInt64 = 1
    @Option(help: "Cells, comma-separated (default: all).") var cells: String?
    @Flag(help: "Decode every file here too and print success counts.") var decode = false

    func run() throws {
        let chosen = try cells.map { list in
            try list.split(separator: ",").map { name in
                guard let c = ChannelCells.named(String(name)) else {
                    throw ValidationError("unknown cell \(name); known: \(ChannelCells.all.map(\.name).joined(separator: ", "))")
                }
                return (name: String(name), channel: c)
            }
        } ?? ChannelCells.all
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var manifest = ""
        var counts: [String: Int] = [:]
        for (name, channel) in chosen {
            for proto in GGWaveProtocol.allCases {
                for trial in 0..<trials {
                    let s = ChannelCells.seed(base: seed, cell: name, protocol: proto, trial: trial)
                    var random = SeededGenerator(seed: s)
                    let payload = random.bytes(length)
                    let beacon = try GGWaveEncoder.encode(payload, protocol: proto, volume: 50)
                    let t = ChannelSimulator.trial(beacon, channel: channel, seed: s)
                    let file = "\(name.replacing("/", with: "per"))-\(proto.ggwaveID)-\(trial).wav"
                    try WAVFile.write(t.samples, format: .float32, to: "\(out)/\(file)")
                    let hex = Hex.lower(payload)
                    manifest += "\(file)\t\(proto.ggwaveID)\t\(name)\t\(hex)\t\(t.beaconStart)\n"
                    if decode {
                        let found = GGWaveDecoder.payloads(in: t.samples)
                        counts["\(name) \(proto)", default: 0] += found == [payload] ? 1 : 0
                    }
                }
                if decode { Swift.print("\(name) \(proto): \(counts["\(name) \(proto)"] ?? 0)/\(trials)") }
            }
        }
        try manifest.write(toFile: "\(out)/\("manifest.tsv")", atomically: true, encoding: .utf8)
    }
}
