"""A found-set flood with [mqtt] under a wrapping command, inside `scripts/private-air`: what
tools/footprint/make-link-order profiles after the idle run, so that the functions a flood and the
MQTT bridge run are laid out together too (docs/footprint.md, "Link order"; docs/footprint-found.md).

    scripts/private-air python3 tools/footprint/flood.py BINARY --wrap 'valgrind ...'

The gateway of tools/bench/found_memory.py (its `[mqtt]` measurement, Home Assistant discovery on)
with a set of 512 entries instead of 4,096 (every path runs, at a fraction of the time under
callgrind): found, refreshed, evicted, expired, bridged."""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import found_memory  # noqa: E402
import gateway_process  # noqa: E402


def stop_slowly(proc):
    """As gateway_process.stop, but a gateway under callgrind gets 2 minutes to end (and write its profile)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_listening(path, proc, seconds=120):
    """As gateway_process.wait_path, then until the socket accepts: under callgrind the gateway takes a while
    from bind(2) to listen(2), and a connect in between is refused."""
    deadline = time.monotonic() + seconds
    while True:
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
                return
            except ConnectionRefusedError:
                pass
            finally:
                probe.close()
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[:3]} exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} never accepted a connection")
        time.sleep(0.05)


def wrapped(binary, wrap, work):
    """The gateway to run: `binary` itself, or a script in `work` that runs it under `wrap` (callgrind)."""
    binary = os.path.realpath(binary)
    if not wrap:
        return binary
    wrapper = os.path.join(work, "wrapped-gateway")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec {wrap} {binary} "$@"\n')
    os.chmod(wrapper, 0o755)
    return wrapper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--wrap", default="", help="command to run the gateway under")
    args = parser.parse_args()
    # found_memory.measure takes these from the module when it runs.
    gateway_process.stop, gateway_process.wait_path = stop_slowly, wait_listening
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
        os.chmod(work, 0o1777)   # mosquitto drops to its own user and creates its socket here
        binary = wrapped(args.binary, args.wrap, work)
        try:
            result = found_memory.measure(binary, work, f"footprint-flood-{os.getpid()}", limit=512, batch=256, mqtt=True)
            print(f"flood: {result['sent']} beacons sent, {result['found']} found, {result['evicted']} evicted, all expired")
        except RuntimeError as error:
            # Under callgrind the backlog of adverts can outlast measure's expiry deadline: the profile
            # (written when the gateway is stopped) still holds the flood, its evictions and losts.
            print(f"flood: {error}; the profile is kept")


if __name__ == "__main__":
    main()
