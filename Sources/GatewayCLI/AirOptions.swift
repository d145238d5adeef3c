import ArgumentParser
import FoundationEssentials
import Modem

/// `--protocol` and `--at`, one option group for `beacon` and `decode`, parsed into their types.
struct AirOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The ggwave protocol (beacon: default the config's, else ultrasound-fast; decode: default all three).",
        valueName: "protocol"))
    var `protocol`: GGWaveProtocol?

    @Option(name: .long, help: ArgumentHelp("Unix time whose rotation epoch keys the frames (default now).", valueName: "seconds"))
    var at: UnixTime?

    /// The moment whose rotation epoch applies: `--at`, else now.
    var date: Date { at?.date ?? Date() }
}

extension GGWaveProtocol: ExpressibleByArgument {}

/// A moment as seconds since the Unix epoch (`1700000000`, `1700000000.5`).
struct UnixTime: ExpressibleByArgument, Equatable {
    let sinceEpoch: Duration

    init?(argument: String) {
        guard let seconds = Double(argument), seconds.isFinite, seconds >= 0 else { return nil }
        sinceEpoch = .seconds(seconds)
    }

    var date: Date {
        let (seconds, attoseconds) = sinceEpoch.components
        return Date(timeIntervalSince1970: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
