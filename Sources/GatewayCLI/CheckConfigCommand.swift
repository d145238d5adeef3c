import ArgumentParser
import Config
import Glibc
import MQTT
import NearbyProtocol
import Radio
import SystemCall

struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file and print every problem.",
        discussion: """
        Reads the configuration and its board file the way `run` does, and prints every problem as
        FILE:LINE: key: message (on standard error), then exits with status 1. A valid file gets a short
        summary on standard output and status 0; a weak api_key (short, few different characters, a common
        word) is a warning on standard error that names `nearby-gateway key`, and keeps status 0. Boards are looked up in $NEARBY_GATEWAY_BOARDS,
        /usr/share/nearby-gateway/boards, then a boards/ folder above the executable.
        """
    )

    @Option(name: .long, help: "The configuration file.")
    var config: String = "/etc/nearby-gateway/gateway.toml"

    func run() async throws {
        let gateway: GatewayConfig, board: Board
        do throws(ConfigError) {
            (gateway, board) = try ConfigLoader.load(path: config)
        } catch {
            for problem in error.problems { Self.printError(problem.description) }
            let count = error.problems.count
            Self.printError("\(config): \(count) problem\(count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        if let mqtt = gateway.mqtt {
            // `run` loads libmosquitto for this section (docs/mqtt.md): a system without it is refused here too.
            do throws(MQTTError) {
                try MosquittoLibrary.check(broker: mqtt.url)
            } catch {
                Self.printError("\(config): [mqtt]: \(error)")
                Self.printError("\(config): 1 problem")
                throw ExitCode(1)
            }
        }
        if !gateway.identities.isEmpty {
            // `run` loads libcrypto for [[identity]] (docs/identities.md): a system without it is refused here too.
            do throws(CryptoError) {
                _ = try AESKeyRing(keys: gateway.identities.map(\.key.bytes))
            } catch {
                Self.printError("\(config): [[identity]]: \(error)")
                Self.printError("\(config): 1 problem")
                throw ExitCode(1)
            }
        }
        if let weakness = APIKeyStrength.weakness(gateway.apiKey) {
            // A warning, not a problem: a deployment keeps running while its owner rolls out a new key.
            Self.printError("\(config): api_key: warning: \(weakness); make a strong one with `nearby-gateway key` and put it in every gateway's config")
        }
        // Config values are quoted back (names, paths): shown escaped, like everything a person reads.
        Console.out(Self.summary(gateway, board: board).split(separator: "\n", omittingEmptySubsequences: false)
            .map { TerminalText.escape(String($0)) }.joined(separator: "\n") + "\n")
    }

    private static func printError(_ line: String) {
        Console.err(TerminalText.escape(line) + "\n")
    }

    static func summary(_ config: GatewayConfig, board: Board) -> String {
        func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        let leds = board.gpioChip.map { "LEDs on gpiochip \"\($0)\"" } ?? "LEDs simulated"
        return """
        \(config.path): OK
          board \(board.name) (\(board.description)): radio \(config.radio.device), audio \(config.audio.device), \(leds)
          \(plural(config.publications.count, "publication")), \(plural(config.subscriptions.count, "subscription"))\(config.identities.isEmpty ? "" : ", \(config.identities.count) \(config.identities.count == 1 ? "identity" : "identities") (\(config.identities.map(\.name).joined(separator: ", ")))")
          socket \(config.socket.path), state \(config.state.path)\(config.mqtt.map { "\n  mqtt \($0.url)" } ?? "")
        """
    }
}
