"""The one table (terminal and Markdown) and BENCHMARKS.md, from run.py's results."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def row(section, metric, ours, peer, peer_name, unit, better, note=""):
    return {"section": section, "metric": metric, "ours": ours, "peer": peer, "peer_name": peer_name,
            "unit": unit, "better": better, "note": note}


def pipeline_rows(d):
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
    out.append(row("pipeline", "FULL pipeline, lazy path (HCI→AD→frame+auth→reassembly→found/lost)",
                   rate(ours["pipeline_fast"]), rate(peer["ha_parse_cached"]), ha + " (AD parse only)", "reports/s", "higher",
                   "target ≥ 1,000,000/s"))
    out.append(row("pipeline", "FULL pipeline, Sighting path (what the gateway runs today)", rate(ours["pipeline_sightings"]),
                   rate(peer["ha_parse_cached"]), ha + " (AD parse only)", "reports/s", "higher", "target ≥ 1,000,000/s"))
    alloc = d.get("allocations")
    if alloc:
        pairs = [("ad_walk", "ha_parse_uncached", hau), ("ad_values", "ha_parse_uncached", hau),
                 ("pipeline_fast", "ha_parse_cached", ha), ("pipeline_sightings", "ha_parse_cached", ha)]
        names = {"ad_walk": "lazy AD walk", "ad_values": "AD parse to values", "pipeline_fast": "full pipeline, lazy path",
                 "pipeline_sightings": "full pipeline, Sighting path"}
        for mine, theirs, peer_name in pairs:
            out.append(row("pipeline", f"allocations per report: {names[mine]}", alloc["ours"].get(mine),
                           alloc["peer"].get(theirs), peer_name, "allocs", "lower"))
    return out


def fanout_rows(data):
    out = []
    for d in data["points"]:
        out += fanout_point_rows(d, full=d is data["points"][0])
    return out


def fanout_point_rows(d, full):
    o, m = d["ours"], d["mosquitto"]
    peer = "Mosquitto 2 (UNIX socket)"
    label = f"{d['clients']} clients × {d['rate']:,} ev/s × {d['seconds']} s"
    if not full:
        return [
            row("fanout", f"delivered ({label})", o["received"] / o["expected"], m["received"] / m["expected"], peer, "%", "higher"),
            row("fanout", f"latency p99 at {d['rate']:,} ev/s", o["p99_us"] / 1000, m["p99_us"] / 1000, peer, "ms", "lower"),
            row("fanout", f"broker CPU at {d['rate']:,} ev/s", o["broker_cpu_fraction"], m["broker_cpu_fraction"], peer, "%", "lower"),
        ]
    out = [
        row("fanout", f"delivered ({label})", o["received"] / o["expected"], m["received"] / m["expected"], peer, "%", "higher"),
        row("fanout", "publishing took (10k/s must take the nominal time)", o["publish_seconds"], m["publish_seconds"], peer, "s",
            "lower", f"nominal {d['seconds']} s; Mosquitto slows its publisher down instead of dropping"),
        row("fanout", "latency p50", o["p50_us"] / 1000, m["p50_us"] / 1000, peer, "ms", "lower"),
        row("fanout", "latency p99 (target < 5 ms)", o["p99_us"] / 1000, m["p99_us"] / 1000, peer, "ms", "lower"),
        row("fanout", "latency max", o["max_us"] / 1000, m["max_us"] / 1000, peer, "ms", "lower"),
        row("fanout", "broker CPU (one core = 100 %)", o["broker_cpu_fraction"], m["broker_cpu_fraction"], peer, "%", "lower",
            "SocketBroker thread vs mosquitto process"),
        row("fanout", "broker CPU per delivered event", o["broker_cpu_fraction"] * o["wall_seconds"] / max(1, o["received"]) * 1e6,
            m["broker_cpu_fraction"] * m["wall_seconds"] / max(1, m["received"]) * 1e6, peer, "µs", "lower"),
        row("fanout", "receiving clients' CPU (same code, line vs MQTT framing)", o["clients_cpu_fraction"],
            m["clients_cpu_fraction"], peer, "%", "lower"),
    ]
    return out


def rows(results):
    out = []
    builders = {"pipeline": pipeline_rows, "fanout": fanout_rows}
    try:
        import modem
        builders["modem"] = modem.rows
    except ImportError:
        pass
    try:
        import process
        builders["process"] = process.rows
    except ImportError:
        pass
    for section, data in results["sections"].items():
        if section in builders:
            out += builders[section](data)
    return out


def fmt(value, unit):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if unit == "reports/s":
        return f"{value / 1e6:.2f} M/s"
    if unit == "%":
        return f"{value * 100:.1f} %"
    if unit == "allocs":
        return f"{value:.2f}"
    if unit == "x RT":
        return f"{value:.4f}"
    if unit in ("ms", "s", "MB"):
        return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{value:.3g} {unit}"


def ratio(r):
    o, p = r["ours"], r["peer"]
    if not isinstance(o, (int, float)) or not isinstance(p, (int, float)) or isinstance(o, bool):
        return None, "-"
    if p == 0:
        return None, ("same" if o == 0 else "-")
    q = o / p
    ahead = q >= 1 if r["better"] == "higher" else q <= 1
    return q, "ahead" if ahead else "BEHIND"


def cells(r):
    q, verdict = ratio(r)
    return [r["section"], r["metric"], fmt(r["ours"], r["unit"]), fmt(r["peer"], r["unit"]), r["peer_name"],
            "-" if q is None else f"{q:.3g}", f"{verdict} ({r['better']} is better)" if q is not None else verdict, r["note"]]


HEADER = ["bench", "metric", "ours", "peer", "peer is", "ours/peer", "verdict", "note"]


def text_table(rs):
    table = [HEADER] + [cells(r) for r in rs]
    widths = [min(60, max(len(line[i]) for line in table)) for i in range(len(HEADER))]
    lines = []
    for n, line in enumerate(table):
        lines.append("  ".join(c[:widths[i]].ljust(widths[i]) for i, c in enumerate(line)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def md_table(rs):
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rs:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |")
    return "\n".join(out)


def markdown(results, rs):
    m = results["machine"]
    with open(os.path.join(HERE, "BENCHMARKS.in.md")) as f:
        template = f.read()
    busy = ", ".join(results["busy_before"]) or "none above 20 %"
    errors = "\n".join(f"- **{s} failed**: `{e}`" for s, e in results["errors"].items()) or ""
    details = []
    for section, data in results["sections"].items():
        if section == "pipeline":
            details.append(pipeline_details(data))
        elif section == "fanout":
            details.append(fanout_details(data))
        else:
            try:
                module = __import__(section)
                details.append(module.details(data))
            except (ImportError, AttributeError):
                pass
    mode = "quick (`scripts/bench --quick`)" if results["quick"] else "full (`scripts/bench`)"
    only = results.get("only") or []
    run = f"{mode}, started {results['started']}, {results['seconds']:.0f} s of measuring"
    if results.get("section_started"):
        earlier = {}
        for section, started in results["section_started"].items():
            if section not in only:
                earlier.setdefault(started, []).append(section)
        run = "merged. " + "; ".join(f"{', '.join(ss)}: from the run started {st}" for st, ss in sorted(earlier.items())) + \
            f"; {', '.join(only)}: rerun with `scripts/bench --only {','.join(only)}`, started {results['started']}, " \
            f"{results['seconds']:.0f} s of measuring (machine and load below are this rerun's)"
    elif only and set(only) != {"pipeline", "fanout", "modem", "process"}:
        run = f"{mode} with `--only {','.join(only)}`, started {results['started']}, {results['seconds']:.0f} s of measuring"
    values = {
        "RUN": run,
        "CPU": m["cpu"], "CPUS": m["cpus"], "KERNEL": m["kernel"], "HYPERVISOR": m["hypervisor"], "OS": m["os"],
        "SWIFT": m["swift"], "MOSQUITTO": m["mosquitto"],
        "LOAD": f"{results['load_before'][0]:.2f} before, {results['load_after'][0]:.2f} after", "BUSY": busy,
        "TABLE": md_table(rs), "ANALYSIS": open(os.path.join(HERE, "analysis.md")).read().strip(), "ERRORS": errors, "DETAILS": "\n\n".join(details),
    }
    for key, value in values.items():
        template = template.replace("@" + key + "@", str(value))
    return template


def pipeline_details(d):
    o = d["ours"]
    return (f"**Advert pipeline run.** Corpus: {d['corpus']['reports']:,} reports in {d['corpus']['events']:,} events "
            f"(seed 1); best of {d['repetitions']} passes. Outcomes of our full pipeline (both paths agree: "
            f"{o['outcomes_agree']}): `{o['outcomes_fast']}`. bluetooth-data-tools {d['peer']['bluetooth_data_tools']} "
            f"on Python {d['peer']['python']}.")


def fanout_details(data):
    return "\n\n".join(fanout_point_details(d) for d in data["points"])


def fanout_point_details(d):
    o, m = d["ours"], d["mosquitto"]
    return (f"**Fan-out run.** {d['clients']} clients, {d['rate']:,} events/s for {d['seconds']} s, "
            f"{d['payload_bytes']}-byte JSON per event. Ours: {o['received']:,} of {o['expected']:,} delivered, broker "
            f"dropped {o.get('broker_dropped')} (per-client queue bound), per client {o['min_per_client']:,}…"
            f"{o['max_per_client']:,}, {o['unparsable']} other lines ($SYS/dropped notices). Mosquitto: "
            f"{m['received']:,} of {m['expected']:,}, per client {m['min_per_client']:,}…{m['max_per_client']:,}; its "
            f"publisher needed {m['publish_seconds']:.1f} s for {m['published']:,} events (back-pressure).")
