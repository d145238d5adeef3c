import Testing
import TestSupport
@testable import Config

/// Issue 13: SIGHUP says which changed keys need a restart.
@Suite struct ConfigReloadTests {
    let base = """
        api_key = "reload-test-key-0123456789"
        board = "sim"
        log_level = "info"
        [radio]
        rotate_s = 60
        [socket]
        path = "/run/a.sock"
        mode = "0660"
        """

    @Test func restartOnlyKeysAreListedWithBothValuesAndReloadableOnesAreNot() throws {
        let (running, _) = try ConfigFixture.load(base)
        let edited = base
            .replacingOccurrences(of: "/run/a.sock", with: "/run/b.sock")
            .replacingOccurrences(of: "\"0660\"", with: "\"0600\"")
            .replacingOccurrences(of: "log_level = \"info\"", with: "log_level = \"debug\"")
            .replacingOccurrences(of: "rotate_s = 60", with: "rotate_s = 600\ninterval_ms = 250")
        let (requested, _) = try ConfigFixture.load(edited)
        let changes = running.restartOnlyChanges(to: requested)
        #expect(changes.map(\.key) == ["radio.interval_ms", "socket.path", "socket.mode"])
        #expect(changes.map(\.description) == [
            "radio.interval_ms changed (250, running with \(running.radio.intervalMs)): needs a restart",
            "socket.path changed (\"/run/b.sock\", running with \"/run/a.sock\"): needs a restart",
            "socket.mode changed (0600, running with 0660): needs a restart",
        ])
        #expect(running.restartOnlyChanges(to: running).isEmpty)
    }
}
