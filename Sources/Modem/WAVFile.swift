#if canImport(Glibc)
import Glibc
#endif
import SystemCall

/// Why a WAV file could not be read or written. Every case names the file.
public struct WAVError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// open/read/write failed, and the errno it left.
        case io(call: String, errno: Errno)
        case empty
        case notWAV(String)
        case truncated(String)
        case tooLarge(bytes: Int, limit: Int)
        case unsupportedFormat(String)
        /// The file is fine but not at the rate the caller needs (see `WAVAudio.resampled(to:)`).
        case unsupportedSampleRate(Int)
    }

    public var path: String
    public var kind: Kind

    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }

    public var description: String {
        switch kind {
        case .io(let call, let code): "\(path): \(call) failed: \(code)"
        case .empty: "\(path): the file is empty"
        case .notWAV(let why): "\(path): not a WAV file (\(why))"
        case .truncated(let why): "\(path): truncated WAV file (\(why))"
        case .tooLarge(let bytes, let limit): "\(path): \(bytes) bytes is over the \(limit)-byte limit for WAV files"
        case .unsupportedFormat(let why): "\(path): unsupported WAV format (\(why))"
        case .unsupportedSampleRate(let rate): "\(path): sample rate \(rate) Hz is not supported here"
        }
    }
}

/// Mono audio read from a WAV file (several channels are averaged).
public struct WAVAudio: Sendable, Equatable {
    public var sampleRate: Int
    /// How many channels the file had before they were mixed to mono.
    public var channels: Int
    public var samples: [Float]

    public init(sampleRate: Int, channels: Int = 1, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }
}

public enum WAVSampleFormat: Sendable {
    case pcm16
    case float32
}

/// Reads and writes RIFF/WAVE files: PCM 8/16/24/32-bit and IEEE float 32/64-bit, plain or
/// WAVE_FORMAT_EXTENSIBLE, any channel count (mixed down to mono).
public enum WAVFile {
    /// Files larger than this are refused rather than read into memory (about 45 minutes of
    /// 48 kHz stereo float).
    public static let maximumFileSize = 1 << 30

    public static func read(path: String) throws(WAVError) -> WAVAudio {
        let bytes = try readAll(path: path)
        return try WAVParser.parse(bytes, path: path)
    }

    public static func write(
        _ samples: [Float], sampleRate: Int = GGWave.sampleRate, format: WAVSampleFormat = .pcm16, to path: String
    ) throws(WAVError) {
        let bytes = WAVParser.serialize(samples, sampleRate: sampleRate, format: format)
        let fd = try io("open", path) { Descriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        defer { close(fd) }
        // A blocking file descriptor: writeAll returns only when every byte is written, or throws.
        do throws(Errno) {
            _ = try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(raw) { Glibc.write(fd, $0, $1) } } }.get()
        } catch {
            throw WAVError(path: path, kind: .io(call: "write", errno: error))
        }
    }

    private static func readAll(path: String) throws(WAVError) -> [UInt8] {
        let fd = try io("open", path) { Descriptor.open(path, O_RDONLY) }
        defer { close(fd) }
        var info = stat()
        try io("fstat", path) { fstat(fd, &info) }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw WAVError(path: path, kind: .io(call: "read", errno: Errno(rawValue: EISDIR)))
        }
        let size = Int(info.st_size)
        guard size <= maximumFileSize else {
            throw WAVError(path: path, kind: .tooLarge(bytes: size, limit: maximumFileSize))
        }
        guard size > 0 else { throw WAVError(path: path, kind: .empty) }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let n = try io("read", path) { bytes.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress! + filled, size - filled) } }
            if n == 0 { break }
            filled += n
        }
        return Array(bytes[0..<filled])
    }

    /// One call through `SystemCall.retrying` (EINTR retried), any other errno as a `WAVError` naming
    /// the file and the call.
    @discardableResult
    private static func io<T: FixedWidthInteger>(_ call: String, _ path: String, _ body: () -> T) throws(WAVError) -> T {
        do throws(Errno) {
            return try SystemCall.retrying(body)
        } catch {
            throw WAVError(path: path, kind: .io(call: call, errno: error))
        }
    }
}
