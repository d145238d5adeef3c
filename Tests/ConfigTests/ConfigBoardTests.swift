import Foundation
import Testing
import TestSupport
@testable import Config

@Suite struct ConfigBoardTests {
    @Test(arguments: [
        ("rpi3b", "pinctrl-bcm2835"), ("rpi4b", "pinctrl-bcm2711"), ("rpi5", "pinctrl-rp1"),
        ("rpizero2w", "pinctrl-bcm2835"), ("sim", nil),
    ] as [(String, String?)])
    func everyShippedBoardLoads(name: String, chip: String?) throws {
        let board = try ConfigFixture.boards.load(name)
        #expect(board.name == name)
        #expect(board.gpioChip == chip)
        #expect(board.leds.map(\.name).starts(with: ["status", "found", "lost", "error"]))
        if chip != nil {
            #expect(board.leds.map(\.line) == [17, 27, 22, 23, 5, 6])
            #expect(board.radioDevice == "hci0")
        } else {
            #expect(board.radioDevice == "h4:/tmp/bt-server-le")
        }
    }

    @Test func catalogSearchOrder() throws {
        let catalog = BoardCatalog.standard(environment: ["NEARBY_GATEWAY_BOARDS": "/opt/boards"],
                                            executable: "\(ConfigFixture.repository)/.build/debug/nearby-gateway")
        #expect(catalog.directories == ["/opt/boards", "/usr/share/nearby-gateway/boards", "\(ConfigFixture.repository)/boards"])
        #expect(BoardCatalog.standard(environment: [:], executable: "/nonexistent-root/bin/x").directories == ["/usr/share/nearby-gateway/boards"])
        #expect(ConfigFixture.boards.names() == ["rpi3b", "rpi4b", "rpi5", "rpizero2w", "sim"])
        #expect(ConfigFixture.boards.file(for: "../boards/sim") == nil)
    }

    @Test func badBoardFilesAreReportedWithTheirOwnLines() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("boards-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("""
        name = "broken"
        [gpio]
        chip = 3
        [leds]
        status = 17
        found = 17
        lost = "x"
        [inputs.power]
        line = 17
        [radio]
        device = "bt0"
        [extra]
        """.utf8).write(to: URL(fileURLWithPath: "\(folder)/broken.toml"))
        let problems = ConfigFixture.problems("api_key = \"k\"\nboard = \"broken\"", boards: BoardCatalog(directories: [folder]))
        let file = "\(folder)/broken.toml"
        #expect(problems == [
            "2: board: board \"broken\" has problems:",
            "3: gpio.chip: expected a string, found integer",
            "4: leds.error: missing (every board names the status, found, lost and error LEDs)",
            "6: leds.found: line 17 is already used by LED status",
            "7: leds.lost: expected a line offset (integer), found string",
            "9: inputs.power.line: line 17 is already used by LED status",
            "11: radio.device: \"bt0\" is neither \"hciN\" (a kernel controller) nor \"h4:PATH\" (an H4 socket)",
            "12: extra: unknown key",
        ])
        do {
            _ = try BoardCatalog(directories: [folder]).load("broken")
            Issue.record("loaded a broken board")
        } catch {
            #expect(error.problems.allSatisfy { $0.file == file })
        }
    }

    @Test func aLineTheBoardsChipDoesNotHaveIsAProblem() throws {
        let folder = NSTemporaryDirectory() + "boards-lines-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("""
        name = "wide"
        [gpio]
        chip = "pinctrl-bcm2711"
        [leds]
        status = 17
        found = 27
        lost = 22
        error = 77
        [inputs.power]
        line = 58
        [radio]
        device = "hci0"
        """.utf8).write(to: URL(fileURLWithPath: "\(folder)/wide.toml"))
        let problems = ConfigFixture.problems("api_key = \"k\"\nboard = \"wide\"", boards: BoardCatalog(directories: [folder]))
        let offChip = problems.filter { $0.contains("is not on") }
        #expect(offChip.count == 2, "\(problems)")
        #expect(offChip.first?.hasSuffix("LED 'error': line 77 is not on pinctrl-bcm2711 (58 lines, 0...57)") == true, "\(problems)")
        #expect(offChip.last?.hasSuffix("input 'power': line 58 is not on pinctrl-bcm2711 (58 lines, 0...57)") == true, "\(problems)")
    }
}
