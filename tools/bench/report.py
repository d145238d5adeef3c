"""The one table (terminal and Markdown) and BENCHMARKS.md, from run.py's results."""
import json
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


def fanout_rows(data):
    out = []
    for d in data["points"]:
        out += fanout_point_rows(d, full=d is data["points"][0])
    return out


def fanout_memory_row(d, peer):
    """Peak RSS of each broker's process in the same run (absent in results from before it was measured)."""
    o, m = d["ours"], d["mosquitto"]
    if "broker_hwm_bytes" not in o:
        return []
    mb = lambda b: b / (1024 * 1024)   # MB as the process bench writes it (kB from /proc ÷ 1024)
    return [row("fanout", f"peak RSS (VmHWM) at {d['rate']:,} ev/s", mb(o["broker_hwm_bytes"]), mb(m["broker_hwm_bytes"]),
                peer, "MB", "lower",
                f"ours: `nearby-gateway-bench fanout-server` (SocketBroker + in-process publisher, not the gateway); with every client "
                f"subscribed, before the load: {mb(o['broker_hwm_before_bytes']):.1f} vs {mb(m['broker_hwm_before_bytes']):.1f} MB")]


def fanout_point_rows(d, full):
    o, m = d["ours"], d["mosquitto"]
    peer = "Mosquitto 2 (UNIX socket)"
    label = f"{d['clients']} clients × {d['rate']:,} ev/s × {d['seconds']} s"
    if not full:
        return [
            row("fanout", f"delivered ({label})", o["received"] / o["expected"], m["received"] / m["expected"], peer, "%", "higher"),
            row("fanout", f"latency p99 at {d['rate']:,} ev/s", o["p99_us"] / 1000, m["p99_us"] / 1000, peer, "ms", "lower"),
            row("fanout", f"broker CPU at {d['rate']:,} ev/s", o["broker_cpu_fraction"], m["broker_cpu_fraction"], peer, "%", "lower"),
        ] + fanout_memory_row(d, peer)
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
    ] + fanout_memory_row(d, peer)
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
    try:
        import mqtt
        builders["mqtt"] = mqtt.rows
    except ImportError:
        pass
    try:
        import identity
        builders["identity"] = identity.rows
        import rooms
        builders["rooms"] = rooms.rows
    except ImportError:
        pass
    try:
        import theengs
        builders["theengs"] = theengs.rows
    except ImportError:
        pass
    try:
        import load
        builders["load"] = lambda d: load.rows(d, row)
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
    if unit == "ev/s":
        return f"{value:,.0f} ev/s"
    if unit == "allocs":
        return f"{value:.2f}"
    if unit == "x RT":
        return f"{value:.4f}"
    if unit == "B":
        return f"{value:,.0f} B"
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
    run = f"{mode}, started {results['started']}, {results['seconds']:.0f} s of measuring"
    carry = results.get("carried") or {}
    table = md_table(rs)
    if carry:
        measured = [s for s in results["sections"]] + [s for s in results["errors"]]
        mode = f"{mode} of {', '.join(measured)} only"
        table += "\n" + "\n".join(line for section in carry for line in carry[section]["rows"])
        details += [carry[section]["details"] for section in carry if carry[section]["details"]]
        provenance = {section: run for section in measured}
        provenance.update({section: carry[section]["run"] for section in carry})
        table += "\n\nRows of " + "; ".join(
            f"**{section}**: {how}" for section, how in provenance.items()) + (
            ". Rows carried over from an earlier run are unchanged; the machine and load figures above are this "
            "run's.\n<!-- provenance: " + json.dumps(provenance, ensure_ascii=False) + " -->")
    values = {
        "MODE": mode,
        "STARTED": results["started"], "SECONDS": f"{results['seconds']:.0f}",
        "CPU": m["cpu"], "CPUS": m["cpus"], "KERNEL": m["kernel"], "HYPERVISOR": m["hypervisor"], "OS": m["os"],
        "SWIFT": m["swift"], "MOSQUITTO": m["mosquitto"],
        "LOAD": f"{results['load_before'][0]:.2f} before, {results['load_after'][0]:.2f} after", "BUSY": busy,
        "TABLE": table, "ANALYSIS": open(os.path.join(HERE, "analysis.md")).read().strip(), "ERRORS": errors, "DETAILS": "\n\n".join(details),
    }
    for key, value in values.items():
        template = template.replace("@" + key + "@", str(value))
    return template


DETAIL_PREFIXES = {"pipeline": "**Advert pipeline run.**", "fanout": "**Fan-out run.**", "modem": "**Modem run.**",
                   "process": "**Gateway process run**", "mqtt": "**MQTT bridge run.**",
                   "theengs": "**Theengs run.**", "load": "**Load run.**",
                   "identity": "**Identity run.**", "rooms": "**Rooms run.**"}


def carried(path, rerun):
    """The rows and detail paragraphs of the sections *not* rerun, from an earlier BENCHMARKS.md, each
    with the run that measured it: `--only` rewrites the file without losing (or re-dating) the rest."""
    if not os.path.exists(path):
        return {}
    text = open(path).read()
    provenance = {}
    for line in text.splitlines():
        if line.startswith("<!-- provenance: "):
            provenance = json.loads(line[len("<!-- provenance: "):-len(" -->")])
            break
        if line.startswith("Run: "):
            run = line[len("Run: "):].rstrip(".")
            provenance = {section: run for section in DETAIL_PREFIXES}
    out = {}
    for section in DETAIL_PREFIXES:
        if section in rerun or section not in provenance:
            continue
        rows = [line for line in text.splitlines() if line.startswith(f"| {section} |")]
        details = "\n\n".join(p for p in text.split("\n\n") if p.startswith(DETAIL_PREFIXES[section]))
        if rows:
            out[section] = {"run": provenance[section], "rows": rows, "details": details}
    return out


def pipeline_details(d):
    o = d["ours"]
    return (f"**Advert pipeline run.** Corpus: {d['corpus']['reports']:,} reports in {d['corpus']['events']:,} events "
            f"(seed 1); best of {d['repetitions']} passes. Outcomes of our full pipeline (the gateway's `AirIngest`, "
            f"one subscription to the corpus's namespace and every beacon family, lost_after_s = 2): `{o['outcomes']}`. bluetooth-data-tools {d['peer']['bluetooth_data_tools']} "
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
