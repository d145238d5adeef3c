"""Our gateway against Theengs Gateway, whole programs on the same kernel, air and broker: boots the
real-kernel guest of scripts/system-test (Debian's kernel under qemu TCG, one vCPU) and runs
tools/bench/theengs/guest.py in it; Theengs Gateway comes from the venv scripts/bench made in
.cache (the guest sees the host's root, read-only, over 9p)."""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def run(binary, top, work, quick):
    python = os.environ.get("NEARBY_THEENGS_PYTHON")
    if not python:
        raise RuntimeError("NEARBY_THEENGS_PYTHON is not set (scripts/bench makes the Theengs venv)")
    results = os.path.join(top, ".cache", "theengs-bench", "last-run")
    subprocess.run(["rm", "-rf", results], check=True)
    os.makedirs(results)
    rates = os.environ.get("NEARBY_THEENGS_RATES", "100,1000" if quick else "100,1000,5000")
    seconds = "5" if quick else "10"
    env = dict(os.environ, SYSTEM_TEST_SMP="1")
    load = os.getloadavg()
    status = subprocess.run(
        [os.path.join(top, "tools", "system-test", "boot"), "--quiet", "--timeout", "3600", results, "--",
         python, os.path.join(HERE, "theengs", "guest.py"), "--gateway", binary, "--theengs-python", python,
         "--rates", rates, "--seconds", seconds, "--devices", "100", "--out", "/results/theengs.json"],
        env=env).returncode
    out = os.path.join(results, "theengs.json")
    if not os.path.exists(out):
        raise RuntimeError(f"the guest wrote no results (boot status {status}; console: {results}/console.log)")
    with open(out) as f:
        data = json.load(f)
    data["host_load"] = [load, os.getloadavg()]
    data["qemu_nice"] = os.environ.get("SYSTEM_TEST_NICE", "0")
    if not any("points" in d for d in data["sides"].values()):
        raise RuntimeError(f"no side measured: {data['sides']} (console: {results}/console.log)")
    # A side that failed is reported in the details; the other side's figures are still rows.
    return data


def rows(d):
    from report import row
    out = []
    none = {"reached": 0, "cpu": None, "rss_mb": None, "p50_ms": None, "p99_ms": None, "lost": None, "expected": 0}
    ours = {p["rate"]: p for p in d["sides"].get("ours", {}).get("points", [])}
    theirs = {p["rate"]: p for p in d["sides"].get("theengs", {}).get("points", [])}
    for rate in d["rates"]:
        o, t = ours.get(rate, none), theirs.get(rate, none)
        air = f"{rate:,}/s asked; reached {o['reached']:,.0f} (ours), {t['reached']:,.0f} (theirs)"
        name = "Theengs Gateway 1.8.0 + bluetoothd"
        out.append(row("theengs", f"CPU at {rate:,} adverts/s (1 vCPU = 100 %)", o["cpu"], t["cpu"],
                       name, "%", "lower", air))
        # The air reaches different rates beside each gateway (they share its vCPU): CPU per advert sent
        # compares the work, whatever rate was reached.
        def per_advert(p):
            return None if not p.get("sent") or p["cpu"] is None else p["cpu"] * p["window_s"] / p["sent"] * 1000
        out.append(row("theengs", f"CPU time per advert sent at {rate:,} adverts/s", per_advert(o), per_advert(t),
                       name, "ms", "lower", "CPU over the window ÷ adverts sent"))
        out.append(row("theengs", f"RSS at {rate:,} adverts/s", o["rss_mb"], t["rss_mb"], name, "MB", "lower"))
        for p in ("p50", "p99"):
            if o[f"{p}_ms"] is not None or t[f"{p}_ms"] is not None:
                out.append(row("theengs", f"advert → MQTT latency {p} at {rate:,} adverts/s", o[f"{p}_ms"],
                               t[f"{p}_ms"], name, "ms", "lower"))
        def lost(p):
            return None if not p["expected"] else p["lost"] / p["expected"]
        out.append(row("theengs", f"beacon adverts lost (no MQTT message) at {rate:,} adverts/s", lost(o), lost(t),
                       name, "%", "lower", f"{o['lost'] or 0:,} of {o['expected']:,} (ours), "
                                           f"{t['lost'] or 0:,} of {t['expected']:,} (theirs)"))
    return out


def kernel_view(p):
    """Where a point's adverts went on the way in: the events the kernel took from the controller, the
    largest HCI socket queue seen, and (ours) what the gateway counted as seen and dropped."""
    parts = []
    if p.get("hci_events") is not None:
        parts.append(f"{p['hci_events']:,} HCI events into the kernel")
    if p.get("hci_socket_max_bytes") is not None:
        parts.append(f"largest HCI socket queue {p['hci_socket_max_bytes'] / 1024:,.0f} KiB")
    stats = p.get("gateway_stats") or {}
    if stats:
        dropped = {k: v for k, v in stats.get("radio_dropped", {}).items() if v}
        parts.append(f"adverts_seen {stats.get('adverts_seen', 0):,} since start, radio_dropped {dropped or 'none'}")
    return f" ({'; '.join(parts)})" if parts else ""


def details(d):
    lines = []
    for side, s in d["sides"].items():
        if "error" in s:
            lines.append(f"{side} FAILED: {s['error']}")
        for p in s.get("points", []):
            lines.append(f"{side} at {p['rate']:,}/s: {p['sent']:,} adverts in {p['send_seconds']:.1f} s "
                         f"({p['reached']:,.0f}/s), {p['received']:,} of {p['expected']:,} beacon adverts published, "
                         f"{p['other_messages']:,} other messages, window {p['window_s']:.1f} s"
                         + kernel_view(p))
    (l0, l1) = d["host_load"]
    speed = d.get("sysbench_cpu_events_per_s")
    speed = f", `sysbench cpu` {speed:,.0f} events/s on its vCPU" if speed else ""
    return (f"**Theengs run.** In the real-kernel guest ({d['kernel']}, qemu TCG, {d['cpus']} vCPU, qemu at nice "
            f"{d['qemu_nice']}; host load average {l0[0]:.1f} before, {l1[0]:.1f} after{speed}), {d['devices']} device "
            f"addresses, {d['seconds']:g} s per rate. " + "; ".join(lines) + ".")
