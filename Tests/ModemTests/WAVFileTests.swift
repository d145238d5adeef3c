import Foundation
import Testing
@testable import Modem
import SystemCall

@Suite struct WAVFileTests {
    let dir: URL
    init() throws { dir = try makeTemporaryDirectory("wav") }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func writeBytes(_ bytes: [UInt8], _ name: String) throws -> String {
        let p = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }

    private func kind(_ p: String) -> WAVError.Kind? {
        do {
            _ = try WAVFile.read(path: p)
            return nil
        } catch {
            #expect(error.path == p)
            #expect(error.description.hasPrefix(p))
            return error.kind
        }
    }

    @Test func pcm16RoundTripIsWithinOneStep() throws {
        let samples: [Float] = (0..<1000).map { Float(sin(Double($0) * 0.1)) * 0.8 }
        try WAVFile.write(samples, format: .pcm16, to: path("a.wav"))
        let audio = try WAVFile.read(path: path("a.wav"))
        #expect(audio.sampleRate == 48_000 && audio.channels == 1 && audio.samples.count == 1000)
        #expect(zip(samples, audio.samples).allSatisfy { abs($0 - $1) <= 1.0 / 32768 })
    }

    @Test func float32RoundTripIsExact() throws {
        let samples: [Float] = [0, 0.25, -1, 1, 0.123456]
        try WAVFile.write(samples, sampleRate: 44_100, format: .float32, to: path("f.wav"))
        let audio = try WAVFile.read(path: path("f.wav"))
        #expect(audio == WAVAudio(sampleRate: 44_100, channels: 1, samples: samples))
    }

    @Test func pcm16ClipsInsteadOfWrapping() throws {
        try WAVFile.write([2, -2, .nan], format: .pcm16, to: path("clip.wav"))
        let s = try WAVFile.read(path: path("clip.wav")).samples
        // Typed: Swift 6.2.3 (Debian's, the arm64 cross-build) cannot infer [Float] inside #expect.
        let expected: [Float] = [32767.0 / 32768, -1, 0]
        #expect(s == expected)
    }

    @Test func stereoIsMixedToMono() throws {
        // A hand-made stereo PCM16 file: frames (16384, 0) and (-16384, -16384).
        var b = Array("RIFF".utf8) + le32(36 + 8) + Array("WAVE".utf8)
        b += Array("fmt ".utf8) + le32(16) + le16(1) + le16(2) + le32(48_000) + le32(48_000 * 4) + le16(4) + le16(16)
        b += Array("data".utf8) + le32(8) + le16(16384) + le16(0) + le16(UInt16(bitPattern: -16384)) + le16(UInt16(bitPattern: -16384))
        let audio = try WAVFile.read(path: try writeBytes(b, "stereo.wav"))
        #expect(audio.channels == 2)
        #expect(audio.samples == [0.25, -0.5])
    }

    @Test func badFilesGiveTypedErrorsNamingTheFile() throws {
        #expect(kind(path("missing.wav")) == .io(call: "open", errno: Errno(rawValue: ENOENT)))
        #expect(kind(dir.path) == .io(call: "read", errno: Errno(rawValue: EISDIR)))
        #expect(kind(try writeBytes([], "empty.wav")) == .empty)
        #expect(kind(try writeBytes(Array("hello, this is not audio".utf8), "text.wav")) == .notWAV("no RIFF signature"))
        #expect(kind(try writeBytes(Array("RIFF".utf8) + le32(4) + Array("AVI ".utf8), "avi.wav")) == .notWAV("RIFF type is not WAVE"))
        #expect(kind(try writeBytes(Array("RIFF".utf8) + [1, 2], "short.wav")) == .truncated("no room for the WAVE header"))

        try WAVFile.write([Float](repeating: 0.5, count: 100), to: path("good.wav"))
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("good.wav"))))
        #expect(kind(try writeBytes(Array(good.prefix(100)), "cut.wav")) == .truncated("data chunk declares 200 bytes, 56 present"))
        #expect(kind(try writeBytes(Array(good.prefix(30)), "cutfmt.wav")) == .truncated("'fmt ' chunk declares 16 bytes, 10 present"))

        var alaw = good
        alaw[20] = 6   // format tag 6 = A-law
        #expect(kind(try writeBytes(alaw, "alaw.wav")) == .unsupportedFormat("format tag 6, 16 bits per sample"))
        var noFmt = Array(good.prefix(12)) + Array(good[36...])
        noFmt[4] = 0
        #expect(kind(try writeBytes(noFmt, "nofmt.wav")) == .notWAV("data chunk before fmt chunk"))
    }

    @Test func hugeFilesAreRefusedWithoutReadingThem() throws {
        let p = path("huge.wav")
        #expect(FileManager.default.createFile(atPath: p, contents: Data(Array("RIFF".utf8))))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: p))
        try handle.truncate(atOffset: UInt64(WAVFile.maximumFileSize) + 1)   // sparse: no disk used
        try handle.close()
        #expect(kind(p) == .tooLarge(bytes: WAVFile.maximumFileSize + 1, limit: WAVFile.maximumFileSize))
    }

    @Test func unwritablePathIsATypedError() {
        #expect(throws: WAVError(path: "/nonexistent-dir/x.wav", kind: .io(call: "open", errno: Errno(rawValue: ENOENT)))) {
            try WAVFile.write([0], to: "/nonexistent-dir/x.wav")
        }
    }

    @Test func zeroSizedDataChunkMeansUntilTheEnd() throws {
        // What a streaming writer leaves when it never went back to fix the sizes.
        try WAVFile.write([0.5, -0.5, 0.25], to: path("s.wav"))
        var b = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("s.wav"))))
        b.replaceSubrange(40..<44, with: [0, 0, 0, 0])
        #expect(try WAVFile.read(path: try writeBytes(b, "stream.wav")).samples == [0.5, -0.5, 0.25])
    }

    private func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }
    private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xff) } }
}
