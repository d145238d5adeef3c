#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemCall

/// A failed GPIO operation: which chip, which line, which libgpiod call and the errno it left.
///
/// `kind` is the errno read in context (ENOENT while opening a chip means the chip is missing,
/// EBUSY while requesting a line means another consumer holds it) so callers can decide without
/// re-deriving errno meanings; `description` is the sentence a person reads in the log.
public struct GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// No chip with that label or path (ENOENT at open).
        case chipMissing = "chip-missing"
        /// The path exists but is not a GPIO character device (ENOTTY/ENODEV at open).
        case notAChip = "not-a-chip"
        /// The chip has no line with that offset (offset ≥ lines, or EINVAL from the request).
        case noSuchLine = "no-such-line"
        /// Another consumer (kernel driver or process) holds the line (EBUSY).
        case lineBusy = "line-busy"
        /// Not allowed to open the chip or request the line (EACCES/EPERM).
        case permission
        /// The chip went away while in use (ENODEV/ENXIO/EIO after open, e.g. a USB GPIO expander unplugged).
        case chipGone = "chip-gone"
        /// The line was already released by us.
        case released
        case other
    }

    public var kind: Kind
    /// The chip's label (or path) as configured.
    public var chip: String
    /// The line offset, when the failure concerns one line.
    public var line: UInt32?
    /// The libgpiod function that failed.
    public var call: String
    /// Errno 0 when the failure has none (a line already released).
    public var errno: Errno
    /// Extra context when errno alone does not say it (e.g. "chip has 54 lines").
    public var detail: String?

    public init(kind: Kind, chip: String, line: UInt32? = nil, call: String, errno: Errno, detail: String? = nil) {
        self.kind = kind
        self.chip = chip
        self.line = line
        self.call = call
        self.errno = errno
        self.detail = detail
    }

    public var description: String {
        var text = "gpiochip '\(chip)'"
        if let line { text += " line \(line)" }
        text += ": \(call) failed"
        if errno.rawValue != 0 { text += ": " + (Self.errnoName(errno.rawValue).map { "\($0), " } ?? "") + "\(errno)" }
        if let hint = hint { text += "; \(hint)" }
        if let detail { text += "; \(detail)" }
        return text
    }

    /// What the person reading the log should check.
    private var hint: String? {
        switch kind {
        case .chipMissing: "no GPIO chip with this label/path exists on this machine (see `gpiodetect`)"
        case .notAChip: "this path is not a GPIO character device"
        case .noSuchLine: "the chip has no line with this offset"
        case .lineBusy: "the line is used by another consumer (see `gpioinfo`)"
        case .permission: "no permission (run as root or give the service user access to /dev/gpiochip*)"
        case .chipGone: "the chip disappeared while in use"
        case .released: "the line was already released"
        case .other: nil
        }
    }

    /// The symbolic name, because "EBUSY" is what people search for.
    static func errnoName(_ code: Int32) -> String? {
        switch code {
        case ENOENT: "ENOENT"
        case EBUSY: "EBUSY"
        case EINVAL: "EINVAL"
        case EACCES: "EACCES"
        case EPERM: "EPERM"
        case ENODEV: "ENODEV"
        case ENXIO: "ENXIO"
        case ENOTTY: "ENOTTY"
        case EIO: "EIO"
        case EINTR: "EINTR"
        case ENOMEM: "ENOMEM"
        case EMFILE: "EMFILE"
        default: nil
        }
    }
}
