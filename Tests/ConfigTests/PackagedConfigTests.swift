import Foundation
import Testing
import TestSupport
@testable import Config

/// Issue 17: the config the Debian package installs (packaging/gateway.toml) must be right for a Pi as
/// it is, and must not start before its owner sets an api_key of their own.
@Suite struct PackagedConfigTests {
    static let path = "\(ConfigFixture.repository)/packaging/gateway.toml"

    @Test("As installed: refused, with one problem that says to set api_key")
    func placeholderIsRefused() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        let problems = ConfigFixture.problems(text)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.contains("api_key: is still the installed placeholder: set api_key") == true, "\(problems)")
    }

    @Test("With an api_key set: a Pi 4 whose radio and speaker come from the board, not from overrides")
    func rightForAPi() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
            .replacingOccurrences(of: ConfigLoader.placeholderAPIKey, with: "my-own-key")
        let (config, board) = try ConfigFixture.load(text)
        #expect(board.name == "rpi4b")
        #expect(config.radio.device == "hci0")
        #expect(config.audio.device == "plughw:CARD=Headphones,DEV=0")
        #expect(config.socket.path == "/run/nearby-gateway/gateway.sock")
        #expect(config.state.path == "/var/lib/nearby-gateway/state.json")
        #expect(config.publications.isEmpty && config.subscriptions.isEmpty)
    }

    @Test("The placeholder is refused wherever it appears, only as the whole key")
    func placeholderOnly() {
        #expect(ConfigFixture.problems("api_key = \"\(ConfigLoader.placeholderAPIKey)\"\nboard = \"sim\"\n").count == 1)
        #expect(ConfigFixture.problems("api_key = \"\(ConfigLoader.placeholderAPIKey)-not\"\nboard = \"sim\"\n").isEmpty)
    }
}
