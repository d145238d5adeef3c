import Foundation
import Testing
import TestSupport
@testable import Config

/// Issue 13: check-config reports every problem of a file in one run, where the parser can recover;
/// invalid UTF-8 is named with its line; blank and example keys are refused.
@Suite struct ConfigRecoveryTests {
    @Test func aSyntaxErrorDoesNotHideTheProblemsAfterIt() {
        let problems = ConfigFixture.problems("""
        api_key = "k"
        [radio]
        interval_ms = 1.5
        rotate_s = "600"
        lost_after_s = 0
        scan_duty = true
        [socket]
        max_clients = -1
        """)
        #expect(problems.contains { $0.hasPrefix("3: : ") && $0.contains("float") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("4: radio.rotate_s: ") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("5: radio.lost_after_s: ") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("6: radio.scan_duty: ") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("8: socket.max_clients: ") }, "\(problems)")
        // The key whose value did not parse gets no second problem.
        #expect(!problems.contains { $0.contains("radio.interval_ms") }, "\(problems)")
        #expect(problems.count == 5, "\(problems)")
    }

    @Test func keysUnderABrokenTableHeaderAreSkippedNotMisfiled() {
        let problems = ConfigFixture.problems("""
        api_key = "k"
        [radio
        interval_ms = 100
        [socket]
        max_clients = 0
        """)
        #expect(problems.contains { $0.hasPrefix("2: : ") }, "\(problems)")
        #expect(!problems.contains { $0.contains("interval_ms") }, "misfiled into the root: \(problems)")
        #expect(problems.contains { $0.hasPrefix("5: socket.max_clients: ") }, "\(problems)")
    }

    @Test func invalidUTF8IsReportedWithItsLineAndTheRestIsStillChecked() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("utf8-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bad.toml").path
        var bytes = Array("api_key = \"k\"\nlog_level = \"info\"\n# caf".utf8)
        bytes += [0xE9]                                          // Latin-1 é: not UTF-8
        bytes += Array(" menu\n[radio]\nrotate_s = 0\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try ConfigLoader.load(path: path, boards: ConfigFixture.boards)
            Issue.record("loaded a file that is not UTF-8")
        } catch {
            let text = error.problems.map { "\($0.line.map(String.init) ?? "-"): \($0.key): \($0.message)" }
            #expect(text.contains { $0.hasPrefix("3: : not UTF-8: byte 0xE9 at column 6") }, "\(text)")
            #expect(text.contains { $0.hasPrefix("5: radio.rotate_s: ") }, "\(text)")
        }
    }

    @Test(arguments: ["", "   ", "\t", "CHANGE-ME", "AIzaSy-example-key"])
    func blankAndExampleKeysAreRefused(key: String) {
        let problems = ConfigFixture.problems("api_key = \"\(key)\"")
        #expect(problems.count == 1 && problems[0].hasPrefix("1: api_key: "), "\(problems)")
    }

    /// Issue 15 §3: a strategy check-config accepts must do something on the board.
    @Test func audioStrategiesThatCannotWorkWithoutAMicrophoneAreRefused() {
        let problems = ConfigFixture.problems("""
        api_key = "k"
        board = "rpi4b"
        [[publication]]
        namespace = "tv"
        type = "x-scan"
        mediums = ["audio"]
        mode = "scan"
        [[subscription]]
        namespace = "tv"
        mediums = ["audio"]
        """)
        #expect(problems.contains { $0.hasPrefix("7: publication[1].mode: ") && $0.contains("audio.capture") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("10: subscription[1].mediums: ") }, "\(problems)")
        // With a microphone both do something, and are accepted.
        #expect(ConfigFixture.problems("""
        api_key = "k"
        board = "rpi4b"
        [audio]
        capture = "hw:1,0"
        [[publication]]
        namespace = "tv"
        type = "x-scan"
        mediums = ["audio"]
        mode = "scan"
        [[subscription]]
        namespace = "tv"
        mediums = ["audio"]
        """) == [])
    }

    @Test func theExamplesAsShippedAreRefusedUntilTheKeyIsSet() {
        for name in ["gateway.toml", "set-top-box.toml"] {
            let problems: [String]
            do {
                _ = try ConfigLoader.load(path: "\(ConfigFixture.repository)/examples/\(name)", boards: ConfigFixture.boards)
                problems = []
            } catch {
                problems = error.problems.map(\.key)
            }
            #expect(problems == ["api_key"], "\(name): \(problems)")
        }
    }
}
