"""Advert pipeline: ours (bench pipeline) vs Home Assistant's bluetooth-data-tools (ha_parse.py) on the
same corpus, plus allocation counts from both under the malloc-counting preload."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def sh_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(binary, python, work, quick, malloc_shim):
    os.makedirs(work, exist_ok=True)
    corpus = os.path.join(work, "corpus.bin")
    reports = 1_000_000
    meta = sh_json([binary, "corpus", "--reports", str(reports), "--seed", "1", "--out", corpus])
    reps = 2 if quick else 5
    ours = sh_json([binary, "pipeline", "--corpus", corpus, "--repetitions", str(reps)])
    peer = sh_json([python, os.path.join(HERE, "ha_parse.py"), corpus, "--repetitions", str(reps)])
    result = {"corpus": meta, "repetitions": reps, "ours": ours, "peer": peer, "allocations": None}
    if malloc_shim and os.path.exists(malloc_shim):
        env = dict(os.environ, LD_PRELOAD=malloc_shim)
        ours_a = sh_json([binary, "pipeline", "--corpus", corpus, "--repetitions", "0"], env=env)
        env["PYTHONMALLOC"] = "malloc"
        peer_a = sh_json([python, os.path.join(HERE, "ha_parse.py"), corpus, "--repetitions", "0"], env=env)
        result["allocations"] = {
            "ours": {s["name"]: s.get("allocs_per_report") for s in ours_a["stages"]},
            "peer": {s["name"]: s.get("allocs_per_report") for s in peer_a["stages"]},
        }
    return result


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2], sys.argv[3], "--quick" in sys.argv, None), indent=1))
