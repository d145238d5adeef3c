import CBluetooth
import SystemCall

#if canImport(Glibc)
import Glibc
#endif

/// The kernel's HCI devices through libbluetooth: the only file that touches CBluetooth.
///
/// On a kernel without Bluetooth (this development machine) `socket(AF_BLUETOOTH, …)` fails with
/// EAFNOSUPPORT; that becomes a `RadioError` naming `hciN` and the errno, never a crash.
enum HCISocket {
    static func open(index: Int, exclusive: Bool, device: String) throws(RadioError) -> Int32 {
        if exclusive {
            // socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI) + bind to HCI_CHANNEL_USER.
            let fd = try syscall("open user channel (socket + bind HCI_CHANNEL_USER)", device: device) {
                nearby_hci_open_user_channel(Int32(index))
            }
            _ = Descriptor.growReceiveBuffer(fd, to: receiveBuffer)
            return fd
        }
        // socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI) + bind to the device's raw channel.
        let fd = try syscall("hci_open_dev", device: device) { hci_open_dev(Int32(index)) }
        do throws(RadioError) {
            try syscall("setsockopt(HCI_FILTER)", device: device) { nearby_hci_filter_events(fd) }
        } catch {
            hci_close_dev(fd)
            throw error
        }
        _ = Descriptor.growReceiveBuffer(fd, to: receiveBuffer)
        return fd
    }

    /// The receive queue asked for (best effort: without CAP_NET_ADMIN the kernel caps it at
    /// net.core.rmem_max). Every report is one datagram, ~1 KiB of the queue's accounting
    /// (skb and all); the default 208 KiB held ~200, and a loaded 1-vCPU guest (the Theengs bench)
    /// lost reports at the socket at 360 a second (`radio_dropped.socket`) whenever the loop fell
    /// behind for half a second. 4 MiB holds ~4,000: seconds of a busy home, paid in kernel memory
    /// only while they wait.
    static let receiveBuffer: Int32 = 4 << 20

    /// The real kernel behind `AdapterPower`: both calls through `SystemCall.retrying`.
    struct Kernel: AdapterKernel {
        func isUp(index: Int) throws(Errno) -> Bool {
            try SystemCall.retrying { nearby_hci_is_up(Int32(index)) } == 1
        }

        func bringUp(index: Int) throws(Errno) {
            try SystemCall.retrying { nearby_hci_dev_up(Int32(index)) }
        }
    }
}
