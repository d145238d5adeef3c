import Foundation
import SystemCall
@testable import Modem

/// PyPI ggwave driven through tools/modem/ggwave_peer.py: the reference our modem must match.
enum GGWavePeer {
    /// `NEARBY_REPO` (set by scripts/test), else this file's path: a bundle built elsewhere (the arm64
    /// tests, cross-built in a root where the repository is /src) still finds the scripts.
    static let repoRoot: URL = {
        if let path = ProcessInfo.processInfo.environment["NEARBY_REPO"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// `NEARBY_VENV_PYTHON` (set by scripts/test), else the repository's own `.venv` made by scripts/setup.
    static var python: String {
        if let p = ProcessInfo.processInfo.environment["NEARBY_VENV_PYTHON"], !p.isEmpty { return p }
        return repoRoot.appendingPathComponent(".venv/bin/python").path
    }

    static var script: String { repoRoot.appendingPathComponent("tools/modem/ggwave_peer.py").path }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the peer and returns its standard output; a non-zero exit is an error with its stderr.
    static func run(_ arguments: [String], input: String? = nil) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no Python at \(python): run scripts/setup (it creates .venv with ggwave)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "ggwave_peer \(arguments.prefix(2)) exited \(process.terminationStatus): "
                + String(decoding: errors, as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// ggwave's own waveform for a payload.
    static func encode(_ payload: [UInt8], protocol proto: GGWaveProtocol, volume: Int, in dir: URL) throws -> [Float] {
        let path = dir.appendingPathComponent("ggwave-\(proto.ggwaveID)-\(payload.count)-\(UUID().uuidString).wav").path
        _ = try run(["encode", String(proto.ggwaveID), String(volume), hex(payload), path])
        return try WAVFile.read(path: path).samples
    }

    /// ggwave's own waveforms for many payloads at once (one Python start-up).
    static func encode(_ items: [(payload: [UInt8], protocol: GGWaveProtocol)], volume: Int, in dir: URL) throws -> [[Float]] {
        let paths = items.indices.map { dir.appendingPathComponent("ggwave-batch-\($0).wav").path }
        let lines = zip(items, paths).map { "\($0.protocol.ggwaveID) \(volume) \(hex($0.payload)) \($1)" }
        _ = try run(["encode-batch"], input: lines.joined(separator: "\n") + "\n")
        return try paths.map { try WAVFile.read(path: $0).samples }
    }

    /// What ggwave decodes from each file, in the order given.
    static func decode(files: [String]) throws -> [[[UInt8]]] {
        let lines = try run(["decode"] + files).split(separator: "\n", omittingEmptySubsequences: false)
        var result: [String: [[UInt8]]] = [:]
        for line in lines where !line.isEmpty {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            let payloads = parts.count > 1 ? parts[1].split(separator: ",").map { unhex(String($0)) } : []
            result[String(parts[0])] = payloads
        }
        return files.map { result[$0] ?? [] }
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.lower(bytes) }

    static func unhex(_ s: String) -> [UInt8] { Hex.bytes(s) ?? [] }
}

/// A fresh temporary folder per test.
func makeTemporaryDirectory(_ name: String = #function) throws -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("modem-\(safe)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Deterministic bytes for test payloads (a tiny xorshift, so failures reproduce).
struct TestRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &self) } }
}
