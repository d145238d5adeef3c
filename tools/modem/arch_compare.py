"""The modem's decisions on two architectures, file by file (scripts/arm64-test modem).

usage: arch_compare.py REFERENCE_BENCH OTHER_BENCH WORK_DIR [--trials N] [--jobs J]

Both binaries are nearby-gateway-bench builds (the shipped nearby-gateway has no bench commands).

Makes the three corpora docs/modem.md measures the receiver on, in WORK_DIR:
  snr      tools/modem/robustness.py: 8 SNRs (+20 ... -20 dB) x 3 [U] protocols x N trials, 32 bytes, seed 1
  channel  `REFERENCE_BENCH modem-channel`: 13 channel cells x 3 protocols x N trials, 16 bytes, seed 1
  ppm      tools/modem/resample_ppm.py: the SNR files at +5 ... -10 dB resampled by +1000, -1000, +600 ppm
(N = 20 gives the 480, 780 and 720 files of docs/modem.md.) The SNR and ppm corpora are kept while the
generators and N are unchanged; the channel corpus is made again (it is the gateway's own simulator).
Every file is decoded by both binaries with `modem-decode` (all protocols, 1024-sample blocks);
OTHER_BENCH's files are split over J processes (it runs under emulation). Prints each file whose payload
lists differ and a summary; exits 1 on any difference.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SNRS = "20,10,5,0,-5,-10,-15,-20"


def manifest(folder):
    with open(os.path.join(folder, "manifest.tsv")) as f:
        return [line.rstrip("\n").split("\t")[0] for line in f if line.strip()]


def make_corpora(reference, work, trials):
    key = hashlib.sha256()
    for name in ("robustness.py", "resample_ppm.py", "ggwave_peer.py", "wavio.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            key.update(f.read())
    key.update(f"{trials} {SNRS}".encode())
    stamp = os.path.join(work, "snr-ppm.key")
    snr, ppm, channel = (os.path.join(work, name) for name in ("snr", "ppm", "channel"))
    if not os.path.exists(stamp) or open(stamp).read() != key.hexdigest():
        for folder in (snr, ppm):
            shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(HERE, "robustness.py"), "generate", snr, "--snr", SNRS,
                        "--lengths", "32", "--trials", str(trials), "--seed", "1"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(HERE, "resample_ppm.py"), snr, ppm], check=True, stdout=subprocess.DEVNULL)
        with open(stamp, "w") as f:
            f.write(key.hexdigest())
    shutil.rmtree(channel, ignore_errors=True)
    subprocess.run([reference, "modem-channel", "--out", channel, "--trials", str(trials), "--seed", "1",
                    "--length", "16"], check=True, stdout=subprocess.DEVNULL)
    return {name: [os.path.join(folder, f) for f in manifest(folder)]
            for name, folder in (("snr", snr), ("channel", channel), ("ppm", ppm))}


def decode(binary, paths, jobs):
    chunks = [paths[i::jobs] for i in range(jobs) if paths[i::jobs]]

    def one(chunk):
        out = subprocess.run([binary, "modem-decode"] + chunk, check=True, stdout=subprocess.PIPE, text=True).stdout
        return json.loads(out)["files"]

    found = {}
    with ThreadPoolExecutor(len(chunks)) as pool:
        for files in pool.map(one, chunks):
            found.update(files)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("other")
    ap.add_argument("work")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    corpora = make_corpora(args.reference, args.work, args.trials)
    differences = 0
    for name, paths in corpora.items():
        ours = decode(args.reference, paths, 1)
        theirs = decode(args.other, paths, args.jobs)
        different = [os.path.basename(p) for p in paths
                     if ours.get(os.path.basename(p)) != theirs.get(os.path.basename(p))]
        for file in different:
            print(f"{name}/{file}: {os.path.basename(args.reference)} {ours.get(file)}, "
                  f"{os.path.basename(args.other)} {theirs.get(file)}")
        found = sum(1 for p in paths if ours.get(os.path.basename(p)))
        print(f"{name}: {len(paths)} files, {len(paths) - len(different)} decided the same, "
              f"{len(different)} differ (payloads found in {found} files by the reference)")
        differences += len(different)
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
