import Foundation
import Testing
@testable import Modem

/// Our receiver against PyPI ggwave's on the same noisy files (tools/modem/robustness.py makes
/// them with ggwave's own transmitter and records whether ggwave's receiver got each one).
/// The full tables, with more trials, are the benchmark's job; this keeps to a minute.
@Suite struct RobustnessTests {
    struct Row {
        var file: String
        var snr: Double
        var payload: [UInt8]
        var ggwaveOK: Bool
    }

    @Test func weDecodeAtLeastAsOftenAsGGWaveAtEverySNR() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = GGWavePeer.repoRoot.appendingPathComponent("tools/modem/robustness.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: GGWavePeer.python)
        process.arguments = [script, "generate", dir.path, "--snr", "20,10,0,-5,-10", "--lengths", "1,16,64",
                             "--trials", "1", "--seed", "3"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "robustness.py failed")

        let manifest = try String(contentsOf: dir.appendingPathComponent("manifest.tsv"), encoding: .utf8)
        let rows = manifest.split(separator: "\n").map { line -> Row in
            let f = line.split(separator: "\t").map(String.init)
            return Row(file: f[0], snr: Double(f[2])!, payload: GGWavePeer.unhex(f[3]), ggwaveOK: f[4] == "1")
        }
        #expect(rows.count == 45)

        var ours: [Double: Int] = [:], theirs: [Double: Int] = [:], total: [Double: Int] = [:]
        for row in rows {
            let samples = try WAVFile.read(path: dir.appendingPathComponent(row.file).path).samples
            var decoder = GGWaveDecoder()
            let found = decoder.feed(samples) + decoder.feed([Float](repeating: 0, count: 12_000))
            total[row.snr, default: 0] += 1
            if found == [row.payload] { ours[row.snr, default: 0] += 1 }
            if row.ggwaveOK { theirs[row.snr, default: 0] += 1 }
            // Whatever happens, never a payload that was not sent.
            #expect(found.allSatisfy { $0 == row.payload }, "\(row.file): decoded something else")
        }
        for snr in total.keys.sorted() {
            let o = ours[snr, default: 0], t = theirs[snr, default: 0]
            #expect(o >= t, "at \(snr) dB we decoded \(o)/\(total[snr]!), ggwave \(t)")
        }
        #expect(ours[20] == total[20] && ours[10] == total[10] && ours[0] == total[0])
    }
}
