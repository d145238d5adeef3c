#if DEBUG || FUZZING
import Foundation
@testable import Config
@testable import Gateway
@testable import NearbyProtocol

/// Files an operator (or a damaged disk) hands the gateway: the TOML config and the state file.
enum ConfigTargets {
    /// The repository's boards (scripts/fuzz runs from the top of the checkout), else those installed.
    static let boards = BoardCatalog.standard()

    static func configTOML(_ input: FuzzInput) {
        // Invalid UTF-8 never gets this far: the loader reads a String (String(decoding:) repairs it).
        let text = String(decoding: input.bytes, as: UTF8.self)
        do {
            let (config, board) = try ConfigLoader.load(text: text, file: "fuzz.toml", boards: boards)
            // What run and check-config print about a valid one.
            _ = "\(config) \(board.name)"
            require(!config.apiKey.isEmpty, "a config without api_key was accepted")
        } catch {
            require(!error.problems.isEmpty, "an error without problems")
            // Lines by their "\n" bytes: as Characters, "\r\n" is one grapheme and hides a line.
            let lines = input.bytes.count(where: { $0 == UInt8(ascii: "\n") }) + 1
            for problem in error.problems {
                if let line = problem.line {
                    require(line >= 1 && line <= lines, "problem on line \(line) of a \(lines)-line file")
                }
                _ = problem.description
            }
        }
    }

    static let defaults = GatewayState(backgroundMode: true, permission: .undecided, power: .active)

    static func stateFile(_ input: FuzzInput) {
        switch StateFile.decode(input.bytes, defaults: defaults) {
        case .success(let state):
            // Whatever was accepted is written back in the canonical form, which decodes to the same.
            let again = StateFile.decode(StateFile.encode(state), defaults: defaults)
            require((try? again.get()) == state, "state does not round-trip: \(state)")
        case .failure(let reason):
            require(!reason.text.isEmpty, "a refusal without a reason")
        }
    }
}
#endif
