"""What the bench's guest (guest.py) reads besides the gateways: the kernel's view of the HCI device and its
sockets, the CPU and memory of processes, and the speed of the vCPU itself."""
import os
import subprocess

TICK = os.sysconf("SC_CLK_TCK")


def hci_events(hci):
    """Events the kernel has taken from the controller on `hci` so far (hciconfig's `events:`, the
    device's evt_rx): an advert counted here reached the kernel, whatever a socket did with it."""
    out = subprocess.run(["hciconfig", hci], capture_output=True, text=True).stdout
    for word in out.split():
        if word.startswith("events:"):
            return int(word[len("events:"):])
    return None


def hci_socket_bytes():
    """The most bytes waiting in any HCI socket's receive queue now (/proc/net/hci's Rmem column):
    a gateway behind its reports shows here before the kernel drops any."""
    try:
        with open("/proc/net/hci") as f:
            rows = [line.split() for line in f.readlines()[1:]]
        return max((int(r[2]) for r in rows if len(r) > 2), default=0)
    except (OSError, ValueError):
        return None


class QueueWatch:
    """The largest HCI socket receive queue seen while a point runs (sampled as the driver waits)."""

    def __init__(self):
        self.most = 0

    def sample(self):
        now = hci_socket_bytes()
        if now is not None:
            self.most = max(self.most, now)


def vcpu_speed(seconds=10):
    """A known workload on this vCPU: `sysbench cpu` (1 thread, primes to 10,000), events/s, to set
    against published figures for a Raspberry Pi (analysis.md); None without sysbench."""
    try:
        out = subprocess.run(["sysbench", "cpu", "--threads=1", f"--time={seconds}", "run"],
                             capture_output=True, text=True, timeout=seconds + 60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if "events per second:" in line:
            return float(line.split(":")[1])
    return None


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def vcpu_seconds():
    """The guest's CPU time so far, busy and idle (one vCPU: their sum is the wall time)."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) / TICK - idle / TICK, idle / TICK


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0
