"""Advert pipeline: ours (bench pipeline) vs Home Assistant's bluetooth-data-tools (ha_parse.py) on the
same corpus, plus allocation counts from both under the malloc-counting preload."""
import json
import os
import subprocess
import sys

from report import row

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


# Its rows and paragraph of BENCHMARKS.md (tools/bench/report.py lays them out).
def rows(d):
    out = []
    ours = {s["name"]: s for s in d["ours"]["stages"]}
    peer = {s["name"]: s for s in d["peer"]["stages"]}
    ha, hau = "HA parse_advertisement_data", "HA parse, no cache"
    rate = lambda s: s["reports_per_s"]
    out.append(row("pipeline", "AD parse alone, lazy walk (ADStructures)", rate(ours["ad_walk"]), rate(peer["ha_parse_uncached"]),
                   hau, "reports/s", "higher"))
    out.append(row("pipeline", "AD parse alone, to values (ADStructure.parse)", rate(ours["ad_values"]),
                   rate(peer["ha_parse_uncached"]), hau, "reports/s", "higher"))
    out.append(row("pipeline", "AD parse alone, lazy walk vs HA's public API", rate(ours["ad_walk"]), rate(peer["ha_parse_cached"]),
                   ha, "reports/s", "higher", f"HA cache hit rate {peer['ha_parse_cached'].get('cache_hit_rate', 0):.0%}"))
    out.append(row("pipeline", "HCI parse alone (no peer: HA gets reports from BlueZ)", rate(ours["hci_parse"]), None, "-",
                   "reports/s", "higher"))
    out.append(row("pipeline", "FULL pipeline, the gateway's code (HCI→Sighting→AirIngest: AD→frame+auth→reassembly→found/lost)",
                   rate(ours["pipeline"]), rate(peer["ha_parse_cached"]), ha + " (AD parse only)", "reports/s", "higher",
                   "target ≥ 1,000,000/s"))
    alloc = d.get("allocations")
    if alloc:
        pairs = [("ad_walk", "ha_parse_uncached", hau), ("ad_values", "ha_parse_uncached", hau),
                 ("pipeline", "ha_parse_cached", ha)]
        names = {"ad_walk": "lazy AD walk", "ad_values": "AD parse to values", "pipeline": "full pipeline, the gateway's code"}
        for mine, theirs, peer_name in pairs:
            out.append(row("pipeline", f"allocations per report: {names[mine]}", alloc["ours"].get(mine),
                           alloc["peer"].get(theirs), peer_name, "allocs", "lower"))
    return out


def details(d):
    o = d["ours"]
    return (f"**Advert pipeline run.** Corpus: {d['corpus']['reports']:,} reports in {d['corpus']['events']:,} events "
            f"(seed 1); best of {d['repetitions']} passes. Outcomes of our full pipeline (the gateway's `AirIngest`, "
            f"one subscription to the corpus's namespace and every beacon family, lost_after_s = 2): `{o['outcomes']}`. bluetooth-data-tools {d['peer']['bluetooth_data_tools']} "
            f"on Python {d['peer']['python']}.")


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2], sys.argv[3], "--quick" in sys.argv, None), indent=1))
