import ArgumentParser
import Config
import FoundationEssentials
import Modem
import NearbyProtocol
import SystemCall

struct DecodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Print every ggwave payload found in a WAV file.",
        discussion: """
            Reads the file (PCM or float, any channel count; 48 kHz) through the same streaming \
            receiver the gateway runs on its capture device, and prints one line per payload: \
            the time it starts, the protocol, the bytes in hex, and the text when it is UTF-8. \
            With --config, payloads that are Nearby Gateway frames are also checked against the \
            config's api_key (for the rotation epoch at --at, default now, and its neighbours) and \
            complete messages are printed as namespace/type and content.
            """
    )

    @Argument(help: "The WAV file to read.")
    var file: String

    @OptionGroup var air: AirOptions

    @Option(name: .long, help: "Gateway configuration whose api_key authenticates frames.")
    var config: String?

    func run() async throws {
        let protocols = air.protocol.map { [$0] } ?? GGWaveProtocol.allCases
        var reassembler: Reassembler?
        if let path = config {
            do {
                let cfg = try ConfigLoader.load(path: path).0
                let codec = FrameCodec(apiKey: cfg.apiKey, rotateSeconds: cfg.radio.rotateS)
                reassembler = Reassembler(codec: codec, epoch: codec.epoch(at: air.date))
            } catch {
                throw CommandFailure(error.problems.map { "\($0)" }.joined(separator: "\n"))
            }
        }
        let audio: WAVAudio
        do {
            audio = try WAVFile.read(path: file)
        } catch {
            throw CommandFailure(error.description)
        }
        guard audio.sampleRate == GGWave.sampleRate else {
            throw CommandFailure(WAVError(path: file, kind: .unsupportedSampleRate(audio.sampleRate)).description
                + "; ggwave's ultrasound protocols need \(GGWave.sampleRate) Hz")
        }
        var decoder = GGWaveDecoder(protocols: protocols)
        var receptions = decoder.feedReceptions(audio.samples)
        // A message whose end marker closes the file is only confirmed a few frames later.
        receptions += decoder.feedReceptions([Float](repeating: 0, count: GGWave.sampleRate / 2))
        for r in receptions {
            print(String(cFormat: "%8.3f s  ", Double(r.startSample) / Double(GGWave.sampleRate))
                + "\(r.protocol)  \(r.payload.count) bytes  \(Hex.lower(r.payload))" + Self.quoted(r.payload))
            guard reassembler != nil else { continue }
            switch reassembler!.ingest(r.payload, source: SourceID(medium: .audio, address: 0), now: .now) {
            case .message(let m):
                print("          message \(TerminalText.escape(m.namespace))/\(TerminalText.escape(m.type))  \(m.content.count) bytes  \(Hex.lower(m.content))"
                    + Self.quoted(m.content))
            case .subscriberBeacon(let id): print("          subscriber beacon \(id)")
            case .incomplete: print("          chunk of a message, waiting for the rest")
            case .dropped(let reason): print("          dropped: \(reason.rawValue) (another api_key or epoch?)")
            case .notOurs: print("          not a Nearby Gateway frame")
            }
        }
        if receptions.isEmpty { print("no payload found in \(file)") }
    }

    /// `  "text"` when the bytes are UTF-8, control characters escaped; empty otherwise.
    static func quoted(_ bytes: [UInt8]) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { return "" }
        let escaped = text.unicodeScalars.map { s in
            s.value >= 0x20 && !(0x7f...0x9f).contains(s.value) && s != "\"" && s != "\\" ? String(s) : "\\u{\(String(s.value, radix: 16))}"
        }.joined()
        return "  \"\(escaped)\""
    }
}
