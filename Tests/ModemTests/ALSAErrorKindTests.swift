import Glibc
@testable import Modem
import Testing

/// Issue 41: every capture fault is `$SYS/error/microphone-permission` (the seed's name), and its
/// `reason` is `ALSAError.Kind`'s raw value, so a client tells the faults apart (docs/socket-protocol.md).
@Suite struct ALSAErrorKindTests {
    @Test(arguments: [
        (EACCES, "permission"), (EPERM, "permission"),
        (ENOENT, "missing"), (ENODEV, "missing"), (ENXIO, "missing"),
        (EBUSY, "busy"), (EAGAIN, "busy"),
        (ETIMEDOUT, "stalled"),
        (EIO, "failed"), (EINVAL, "failed"),
    ])
    func reasonFromErrno(errno: Int32, reason: String) {
        // alsa-lib returns -errno; the error keeps it positive either way.
        for code in [-errno, errno] {
            let error = ALSAError(device: "hw:0", call: "snd_pcm_open", code: code)
            #expect(error.kind.rawValue == reason, "errno \(code)")
        }
    }
}
