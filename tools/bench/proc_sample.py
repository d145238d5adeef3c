"""What a process costs over a window, from /proc (the load bench, tools/bench/load.py):

- CPU: utime+stime of /proc/PID/stat (every thread, the exited ones included; 10 ms ticks), and the
  sum of the tasks' run time in /proc/PID/task/*/schedstat (nanoseconds; a thread that exits inside
  the window takes its share with it, so the window says whether any did);
- context switches: voluntary + nonvoluntary over /proc/PID/task/*/status. The tasks are sampled every
  SAMPLE_S: a thread first seen after the window opened counts from zero, one that exits keeps its
  last sample; a thread born and gone between two samples is missed (`exited` counts the
  threads that exited in the window);
- threads: the most tasks seen at one sample, and how many are left at the end.
"""
import os
import threading

TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.1


def stat_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


def tasks(pid):
    """{tid: (context switches, run time ns, name)} of every task alive now."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            switches = 0
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        switches += int(line.split()[1])
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                runtime = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except (FileNotFoundError, ProcessLookupError):
            continue   # exited between the listing and the read
        out[tid] = (switches, runtime, name)
    return out


class Window:
    """Open with `Window(pid)`, close with `close()`, which returns the window's figures."""

    def __init__(self, pid):
        self.pid = pid
        self.first = tasks(pid)
        self.last = dict(self.first)
        self.threads = self.now = len(self.first)
        self.alive = set(self.first)
        self.exited = 0
        self.stat0 = stat_cpu_seconds(pid)
        self.t0 = os.times().elapsed
        self.done = threading.Event()
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def _take(self):
        now = tasks(self.pid)
        self.now = len(now)
        self.exited += len(self.alive - set(now))
        self.alive = set(now)
        self.last.update(now)
        self.threads = max(self.threads, len(now))

    def _sample(self):
        while not self.done.wait(SAMPLE_S):
            self._take()

    def close(self):
        self.done.set()
        self.sampler.join()
        self._take()
        wall = os.times().elapsed - self.t0
        by_thread = {}   # by name (Dispatch's workers share theirs): switches, CPU seconds
        for t, v in self.last.items():
            base = self.first.get(t, (0, 0, ""))
            switches, cpu = by_thread.get(v[2], (0, 0.0))
            by_thread[v[2]] = (switches + v[0] - base[0], cpu + (v[1] - base[1]) / 1e9)
        switches = sum(v[0] for v in by_thread.values())
        runtime = sum(v[1] for v in by_thread.values())
        return {"wall_s": wall, "stat_cpu_s": stat_cpu_seconds(self.pid) - self.stat0, "schedstat_cpu_s": runtime,
                "switches": switches, "by_thread": by_thread, "threads": self.threads, "threads_end": self.now,
                "exited": self.exited, "rss_mb": rss_mb(self.pid),
                "load1": os.getloadavg()[0]}
