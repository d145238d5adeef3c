#ifndef NEARBY_CBLUETOOTH_SHIM_H
#define NEARBY_CBLUETOOTH_SHIM_H
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

// The exclusive HCI user channel: the kernel hands the whole controller to this socket (the device
// must be down). Returns the fd, or -1 with errno set, like the libbluetooth calls beside it.
static inline int nearby_hci_open_user_channel(int index) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) return -1;
    struct sockaddr_hci addr;
    memset(&addr, 0, sizeof(addr));
    addr.hci_family = AF_BLUETOOTH;
    addr.hci_dev = (unsigned short)index;
    addr.hci_channel = HCI_CHANNEL_USER;
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

// A raw HCI socket only delivers what its filter lets through: we want every event (and nothing
// else), the filter helpers are macros/inline bit twiddling Swift should not reimplement.
static inline int nearby_hci_filter_events(int fd) {
    struct hci_filter filter;
    hci_filter_clear(&filter);
    hci_filter_set_ptype(HCI_EVENT_PKT, &filter);
    hci_filter_all_events(&filter);
    return setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, sizeof(filter));
}

// Whether hciN is up: 1 up, 0 down, -1 with errno set (HCIGETDEVINFO, which needs no privilege).
static inline int nearby_hci_is_up(int index) {
    struct hci_dev_info info;
    if (hci_devinfo(index, &info) < 0) return -1;
    return hci_test_bit(HCI_UP, &info.flags) ? 1 : 0;
}

// HCIDEVUP on a control socket, what `hciconfig hciN up` does: 0, or -1 with errno set (EPERM without
// CAP_NET_ADMIN, ERFKILL while rfkill blocks it, EALREADY when it is up). HCIDEVUP is a macro of
// _IOW, which Swift does not import.
static inline int nearby_hci_dev_up(int index) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) return -1;
    int result = ioctl(fd, HCIDEVUP, index);
    int saved = errno;
    close(fd);
    errno = saved;
    return result;
}
#endif
