#if canImport(Glibc)
import Glibc
#endif
import SystemCall

/// Everything that can go wrong with a radio, named after the device and what failed.
///
/// `kind` is what the gateway acts on (`.permission` becomes `$SYS/error/bluetooth-permission`,
/// everything else `$SYS/error/bluetooth-power`); the rest is for the person reading the log.
public struct RadioError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The process may not use the device (EPERM, EACCES): missing CAP_NET_ADMIN/CAP_NET_RAW.
        case permission
        /// The device is not there or went away: no Bluetooth in the kernel, socket closed, btvirt gone.
        case unavailable
        /// The controller answered, but with an error status, or not at all in time.
        case controller
        /// The controller (or our caller) broke the protocol: malformed packets, over-long data.
        case protocolViolation
        /// The controller still answers but has delivered no advertising report for the quiet
        /// timeout, after delivering some: it is reset (`RadioEvent.quiet`).
        case quiet
    }

    public var kind: Kind
    /// "h4:/tmp/bt-server-le", "hci0".
    public var device: String
    /// The call or HCI command that failed: "connect", "hci_open_dev", "LE Set Advertising Enable".
    public var operation: String
    public var errno: Errno?
    /// The controller's status code when the controller refused a command.
    public var status: HCIStatus?
    public var message: String
    /// What would fix it, when we know (also in `message`): "rfkill unblock bluetooth". A failure with
    /// a remedy is reported even after the outage was (`Radio.run`), so the error says what to do.
    public var remedy: String?

    public init(
        kind: Kind, device: String, operation: String, errno: Errno? = nil, status: HCIStatus? = nil,
        message: String, remedy: String? = nil
    ) {
        self.kind = kind
        self.device = device
        self.operation = operation
        self.errno = errno
        self.status = status
        self.message = message
        self.remedy = remedy
    }

    /// A failed system call: the kind follows from the errno.
    public static func system(_ operation: String, device: String, errno code: Errno) -> RadioError {
        RadioError(
            kind: Kind(errno: code.rawValue), device: device, operation: operation, errno: code,
            message: "\(code)")
    }

    public var description: String {
        "\(device): \(operation): \(message)"
    }
}

extension RadioError.Kind {
    /// Which errnos mean "not allowed" rather than "not there".
    public init(errno code: Int32) {
        switch code {
        case EPERM, EACCES: self = .permission
        default: self = .unavailable
        }
    }
}
