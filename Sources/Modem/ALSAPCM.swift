import CALSA

/// An ALSA failure: the device, the call that failed and its -errno (with alsa-lib's text for it).
public struct ALSAError: Error, Sendable, Equatable, CustomStringConvertible {
    public var device: String
    public var call: String
    /// Positive errno value (alsa-lib returns it negated).
    public var errno: Int32
    public var message: String

    /// Why, in the words of `$SYS/error/microphone-permission`'s `reason` (docs/socket-protocol.md).
    public enum Kind: String, Sendable, Equatable {
        /// No such device or configuration (ENOENT, ENODEV, ENXIO).
        case missing
        /// Another process holds it (EBUSY, EAGAIN on open).
        case busy
        /// Not allowed to open it (EACCES, EPERM).
        case permission
        /// Open, but it delivered nothing for `stallTimeoutMs` (ETIMEDOUT from our wait).
        case stalled
        /// Anything else: I/O errors, refused parameters.
        case failed
    }

    public var kind: Kind {
        switch errno {
        case ENOENT, ENODEV, ENXIO: .missing
        case EBUSY, EAGAIN: .busy
        case EACCES, EPERM: .permission
        case ETIMEDOUT: .stalled
        default: .failed
        }
    }

    public var description: String { "ALSA device '\(device)': \(call) failed: \(message) (errno \(errno))" }

    init(device: String, call: String, code: Int32) {
        self.device = device
        self.call = call
        errno = abs(code)
        message = String(cString: snd_strerror(-abs(code)))
    }
}

public enum PCMStream: Sendable {
    case playback, capture
}

/// One open ALSA PCM, 48 kHz mono, 16-bit interleaved (the `plug` layer of `default` and of most
/// configurations converts to whatever the hardware wants). The only file that imports CALSA.
/// Blocking: use it from one dedicated thread.
final class ALSAPCM {
    let device: String
    let stream: PCMStream
    private var handle: OpaquePointer?
    private var overruns = 0
    /// 2 s without a single frame from a capture device that should deliver 48,000 a second.
    static let stallTimeoutMs: Int32 = 2000

    /// Buffer asked of alsa-lib. Playback: 100 ms is plenty for a beacon and keeps `drain` and
    /// `stop` prompt. Capture: a read returns as soon as 1,024 samples are there whatever the
    /// buffer, so a long one costs only memory (48 KB) and lets the capture thread fall 500 ms
    /// behind before samples are lost: with 100 ms, a busy machine (the system test under qemu
    /// beside a build) overran every few hundred ms and no beacon arrived whole.
    static func latencyMicroseconds(_ stream: PCMStream) -> UInt32 {
        stream == .capture ? 500_000 : 100_000
    }

    init(device: String, stream: PCMStream, sampleRate: Int = GGWave.sampleRate) throws(ALSAError) {
        self.device = device
        self.stream = stream
        _ = nearby_alsa_silence_errors()
        var pcm: OpaquePointer?
        let direction = stream == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE
        try Self.check(device, "snd_pcm_open", snd_pcm_open(&pcm, device, direction, 0))
        handle = pcm
        do {
            try Self.check(device, "snd_pcm_set_params", snd_pcm_set_params(
                pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, UInt32(sampleRate), 1,
                Self.latencyMicroseconds(stream)))
            if stream == .capture {
                // Start capturing at the first read, whatever its size (see the shim's comment).
                try Self.check(device, "snd_pcm_sw_params(start_threshold)", nearby_alsa_set_start_threshold(pcm, 1))
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Writes every sample, recovering from underruns (EPIPE) and suspends (ESTRPIPE) on the way.
    func write(_ samples: [Float]) throws(ALSAError) {
        guard let pcm = handle else { throw ALSAError(device: device, call: "snd_pcm_writei", code: -EBADF) }
        let pcm16 = samples.map(WAVParser.pcm16)
        var offset = 0
        while offset < pcm16.count {
            let n = pcm16.withUnsafeBufferPointer { buf in
                snd_pcm_writei(pcm, buf.baseAddress! + offset, snd_pcm_uframes_t(pcm16.count - offset))
            }
            if n >= 0 {
                offset += Int(n)
                continue
            }
            try recover(pcm, Int32(n), call: "snd_pcm_writei")
        }
    }

    /// Waits until what was written has been played, then gets ready for the next write.
    func drain() throws(ALSAError) {
        guard let pcm = handle else { return }
        try Self.check(device, "snd_pcm_drain", snd_pcm_drain(pcm))
        try Self.check(device, "snd_pcm_prepare", snd_pcm_prepare(pcm))
    }

    /// Overruns recovered since the last call (the capture thread fell behind the device).
    func takeOverruns() -> Int {
        defer { overruns = 0 }
        return overruns
    }

    /// Reads exactly `count` samples (blocking), recovering from overruns. A device that delivers
    /// nothing for `stallTimeoutMs` (a stalled or paused card) is an error, not a silent wait.
    func read(_ count: Int) throws(ALSAError) -> [Float] {
        guard let pcm = handle else { throw ALSAError(device: device, call: "snd_pcm_readi", code: -EBADF) }
        var pcm16 = [Int16](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            // A capture stream that is only prepared (just opened, or after an overrun's recovery)
            // captures nothing until started; readi would start it, but we wait first, so start it
            // here. Without this a real card (snd-aloop in the system test) never delivered a frame
            // and every wait timed out (the ALSA file plugin is always ready, so it hid this).
            if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED {
                let started = snd_pcm_start(pcm)
                if started < 0 { try recover(pcm, started, call: "snd_pcm_start") }
            }
            let ready = snd_pcm_wait(pcm, Self.stallTimeoutMs)
            if ready == 0 { throw ALSAError(device: device, call: "snd_pcm_wait", code: -ETIMEDOUT) }
            if ready < 0 {
                try recover(pcm, ready, call: "snd_pcm_wait")
                continue
            }
            let n = pcm16.withUnsafeMutableBufferPointer { buf in
                snd_pcm_readi(pcm, buf.baseAddress! + offset, snd_pcm_uframes_t(count - offset))
            }
            if n >= 0 {
                offset += Int(n)
                continue
            }
            try recover(pcm, Int32(n), call: "snd_pcm_readi")
        }
        return pcm16.map { Float($0) / 32768 }
    }

    func close() {
        if let pcm = handle {
            snd_pcm_close(pcm)
            handle = nil
        }
    }

    private func recover(_ pcm: OpaquePointer, _ code: Int32, call: String) throws(ALSAError) {
        if code == -EINTR || code == -EAGAIN { return }
        // snd_pcm_recover handles EPIPE (xrun) and ESTRPIPE (suspend) and returns the error otherwise.
        if code == -EPIPE { overruns += 1 }
        let r = snd_pcm_recover(pcm, code, 1)
        if r < 0 { throw ALSAError(device: device, call: call, code: code) }
    }

    private static func check(_ device: String, _ call: String, _ result: Int32) throws(ALSAError) {
        if result < 0 { throw ALSAError(device: device, call: call, code: result) }
    }
}
