#if canImport(Glibc)
import Glibc
#endif
import SystemCall

/// The kernel's answers about an adapter: a seam, so the decision below is tested without a kernel.
protocol AdapterKernel: Sendable {
    /// Whether hciN is up (HCIGETDEVINFO's HCI_UP flag; no privilege needed).
    func isUp(index: Int) throws(Errno) -> Bool
    /// HCIDEVUP, what `hciconfig hciN up` does: the kernel powers hciN on and initialises it. Needs
    /// CAP_NET_ADMIN; fails with ERFKILL while rfkill blocks the adapter.
    func bringUp(index: Int) throws(Errno)
}

/// A kernel adapter shared with the kernel's stack comes up down whenever bluetoothd is not running,
/// is masked or was stopped (what an owner of a single-purpose box does), and `hciconfig hciN down`
/// takes it down. The gateway brings it up itself before each connection (docs/radio.md, "An adapter
/// that is down"); the exclusive user channel is left alone, since it needs the adapter down.
enum AdapterPower {
    enum Outcome: Equatable {
        case wasUp
        /// It was down and HCIDEVUP brought it up: the caller says so in the log.
        case broughtUp
    }

    /// Brings hciN up when it is down. Errors are `.unavailable` (so `$SYS/error/bluetooth-power`), even
    /// for EPERM: the adapter being off is the problem, and the message names what turns it on.
    static func ensureUp(index: Int, device: String, kernel: some AdapterKernel) throws(RadioError) -> Outcome {
        let up: Bool
        do {
            up = try kernel.isUp(index: index)
        } catch {
            throw RadioError.system("HCIGETDEVINFO", device: device, errno: error)
        }
        if up { return .wasUp }
        do {
            try kernel.bringUp(index: index)
            return .broughtUp
        } catch {
            switch error.rawValue {
            case EALREADY:
                return .wasUp   // brought up by someone else meanwhile
            case ERFKILL:
                let remedy = "rfkill unblock bluetooth"
                throw RadioError(kind: .unavailable, device: device, operation: "HCIDEVUP", errno: error,
                                 message: "\(device) is down and rfkill blocks it: `\(remedy)` unblocks it, then the gateway brings it up (\(error))",
                                 remedy: remedy)
            case EPERM, EACCES:
                let remedy = "hciconfig \(device) up"
                throw RadioError(kind: .unavailable, device: device, operation: "HCIDEVUP", errno: error,
                                 message: "\(device) is down and the gateway may not bring it up (that needs CAP_NET_ADMIN): `\(remedy)` or `btmgmt --index \(index) power on` does (\(error))",
                                 remedy: remedy)
            default:
                throw RadioError.system("HCIDEVUP", device: device, errno: error)
            }
        }
    }
}
