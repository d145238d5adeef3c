"""What the process benches share (process.py, found_memory.py, mqtt.py, idle_ab.py,
scripted_idle.py): a gateway or Mosquitto started on the private air, its config, its CPU and memory
read from /proc, and the private-air round trip of a bench module (`in_private_air` / `inner_main`).
It imports no bench module: the benches import it (tools/test/import_cycles.py checks).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICKS = os.sysconf("SC_CLK_TCK")


def in_private_air(top, script, flag, binary, quick, python=sys.executable):
    """Runs `python script flag binary STAGE OUT [--quick]` inside scripts/private-air (a btvirt of its
    own) and returns the JSON it wrote to OUT; `inner_main` is the other end."""
    stage = tempfile.mkdtemp(prefix="nearby-bench-air-", dir="/var/tmp")   # /tmp is private in there
    os.chmod(stage, 0o1777)   # a Mosquitto started as root drops to its own user and makes its socket here
    out = os.path.join(stage, "result.json")
    cmd = [os.path.join(top, "scripts", "private-air"), python, script, flag, binary, stage, out] + (["--quick"] if quick else [])
    try:
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        with open(out) as f:
            return json.load(f)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def inner_main(flag, inner_function, doc):
    """The `__main__` of a bench module run by `in_private_air`: `flag BINARY WORK OUT [--quick]`."""
    if len(sys.argv) >= 5 and sys.argv[1] == flag:
        inner_function(sys.argv[2], sys.argv[3], sys.argv[4], "--quick" in sys.argv)
    else:
        print(doc)


def idle_gateways(binary, work, key, lost_after, procs):
    """The idle rows' pair: A has two subscriptions and one publication; B has one publication, and
    its socket takes the rotation rows' PUBs. Returns them, and A's config, once both sockets are there."""
    a_conf = config(work, "a", key, lost_after, subscription("bench", lost_after) + subscription("other", lost_after)
                    + publication("bench-a", "hello", "from-a"))
    b_conf = config(work, "b", key, lost_after, publication("bench-b", "hello", "from-b") + subscription("bench-a", lost_after))
    a, b = gateway(binary, a_conf, procs), gateway(binary, b_conf, procs)
    wait_path(f"{work}/a.sock", a)
    wait_path(f"{work}/b.sock", b)
    return a, b, a_conf


def idle_mosquitto(work, procs):
    """Mosquitto beside the idle gateways: two paho subscribers, one retained publication. Returns the
    broker's process and the (looping) clients; the caller stops and disconnects them."""
    import paho.mqtt.client as mqtt
    msock = os.path.join(work, "mq.sock")
    mconf = os.path.join(work, "mq.conf")
    with open(os.path.join(HERE, "mosquitto.conf")) as f:
        open(mconf, "w").write(f.read().replace("@SOCKET@", msock))
    os.chmod(work, 0o777)
    mq = subprocess.Popen(["mosquitto", "-c", mconf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.append(mq)
    wait_path(msock, mq)
    paho = []
    for n in range(2):
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"idle-{n}", transport="unix")
        c.connect(msock)
        c.subscribe(f"found/topic{n}/#")
        c.loop_start()
        paho.append(c)
    paho[0].publish("found/topic0/hello", b"hello", retain=True).wait_for_publish(5)
    return mq, paho

def config(work, name, api_key, lost_after, body):
    path = os.path.join(work, f"{name}.toml")
    with open(path, "w") as f:
        f.write(f'''api_key = "{api_key}"
board = "sim"
log_level = "warning"
[radio]
device = "h4:/tmp/bt-server-le"
lost_after_s = {lost_after}
[socket]
path = "{work}/{name}.sock"
[state]
path = "{work}/{name}-state.json"
{body}
''')
    return path


def publication(ns, type_, content):
    return f'[[publication]]\nnamespace = "{ns}"\ntype = "{type_}"\ncontent = "{content}"\nmediums = ["ble"]\n'


def subscription(ns, lost_after):
    return f'[[subscription]]\nnamespace = "{ns}"\ntype = "*"\nmediums = ["ble"]\nlost_after_s = {lost_after}\n'


def wait_path(path, proc, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[:3]} exited with {proc.returncode}")
        time.sleep(0.01)
    raise RuntimeError(f"{path} never appeared")


def gateway(binary, config_path, procs):
    """`nearby-gateway run` of a config written by `config`, quiet, listed in `procs` to be stopped."""
    proc = subprocess.Popen([binary, "run", "--config", config_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.append(proc)
    return proc


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def memory(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(value.split()[0]) / 1024
    return values


def rss_by_mapping(pid, top=12):
    """KB of RSS per mapped file (anonymous mappings and [heap]/[stack] as "[anon]") from
    /proc/PID/smaps, largest first: what the RSS is made of (docs/footprint.md)."""
    sizes, name = {}, "[anon]"
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if not fields[0].endswith(":"):   # a mapping's header: range perms offset dev inode [path]
                name = os.path.basename(fields[5]) if len(fields) > 5 and fields[5].startswith("/") else "[anon]"
            elif fields[0] == "Rss:":
                sizes[name] = sizes.get(name, 0) + int(fields[1])
    return dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:top])


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(fraction * len(ordered) + 0.5)) - 1))]


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
