import ArgumentParser
import Config
import FoundationEssentials
import Modem
import NearbyProtocol
import SystemCall

struct BeaconCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon",
        abstract: "Render the audio beacon the speaker would play to a WAV file.",
        discussion: """
            With --config: the frames of every publication that uses the audio medium and \
            broadcasts (mode broadcast or both), keyed for the current rotation epoch, with the \
            config's protocol and volume: exactly the samples the gateway hands to ALSA for one \
            beacon while active. Scan-mode publications are left out (they only transmit after \
            hearing a subscriber). With --payload: one raw ggwave payload instead. \
            Any ggwave receiver, or 'nearby-gateway decode', reads the file back.
            """
    )

    @Option(name: .long, help: "The gateway configuration whose audio publications to render.")
    var config: String?

    @Option(name: .long, help: "Text to send as one raw ggwave payload instead (at most 140 bytes of UTF-8).")
    var payload: String?

    @Option(name: .long, help: "Where to write the WAV file.")
    var out: String

    @OptionGroup var air: AirOptions

    @Option(name: .long, help: "Volume 0...100 (default: the config's, else 50). The peak sample is volume/100.")
    var volume: Int?

    @Flag(name: .long, help: "Write 32-bit float samples instead of 16-bit PCM.")
    var float = false

    func validate() throws {
        guard (config == nil) != (payload == nil) else { throw ValidationError("give exactly one of --config and --payload") }
    }

    func run() async throws {
        var proto = GGWaveProtocol.ultrasoundFast
        var level = 50
        var payloads: [[UInt8]] = []
        var what = ""
        if let path = config {
            let loaded: (GatewayConfig, Board)
            do {
                loaded = try ConfigLoader.load(path: path)
            } catch {
                throw CommandFailure(error.problems.map { "\($0)" }.joined(separator: "\n"))
            }
            let cfg = loaded.0
            proto = GGWaveProtocol(rawValue: cfg.audio.protocol.rawValue) ?? proto
            level = cfg.audio.volume
            let codec = FrameCodec(apiKey: cfg.apiKey, rotateSeconds: cfg.radio.rotateS)
            let epoch = codec.epoch(at: air.date)
            let audible = cfg.publications.filter { $0.mediums.contains(.audio) && $0.mode.broadcasts }
            for publication in audible {
                do {
                    payloads += try codec.audioPayloads(for: publication.message, epoch: epoch)
                } catch {
                    throw CommandFailure("\(path):\(publication.line): \(error)")
                }
            }
            guard !payloads.isEmpty else {
                throw CommandFailure("\(path): no publication broadcasts on audio; the speaker would stay silent")
            }
            what = "\(audible.count) publication(s), epoch \(epoch)"
        } else if let text = payload {
            payloads = [Array(text.utf8)]
            what = "raw payload"
        }
        if let chosen = air.protocol { proto = chosen }
        if let volume { level = volume }
        do {
            let samples = try GGWaveBeacon.render(payloads: payloads, protocol: proto, volume: level)
            try WAVFile.write(samples, format: float ? .float32 : .pcm16, to: out)
            let seconds = GGWaveBeacon.duration(payloadLengths: payloads.map(\.count), protocol: proto)
            print("wrote \(out): \(what), \(payloads.count) payload(s) of \(payloads.map { String($0.count) }.joined(separator: "+")) bytes, "
                + "\(proto), volume \(level), \(String(cFormat: "%.2f", seconds)) s")
        } catch let error as GGWaveEncoderError {
            throw CommandFailure(error.description)
        } catch let error as WAVError {
            throw CommandFailure(error.description)
        }
    }
}
