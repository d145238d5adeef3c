"""The one table (terminal and Markdown) and BENCHMARKS.md, from run.py's results."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def row(section, metric, ours, peer, peer_name, unit, better, note=""):
    return {"section": section, "metric": metric, "ours": ours, "peer": peer, "peer_name": peer_name,
            "unit": unit, "better": better, "note": note}


def rows(results, modules):
    """The table's rows of every measured section, made by its module's `rows` (modules: section →
    module, given by run.py: this module imports no bench, so none imports it back)."""
    out = []
    for section, data in results["sections"].items():
        if section in modules:
            out += modules[section].rows(data)
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


def markdown(results, rs, modules):
    m = results["machine"]
    with open(os.path.join(HERE, "BENCHMARKS.in.md")) as f:
        template = f.read()
    busy = ", ".join(results["busy_before"]) or "none above 20 %"
    errors = "\n".join(f"- **{s} failed**: `{e}`" for s, e in results["errors"].items()) or ""
    details = []
    for section, data in results["sections"].items():
        if section in modules and hasattr(modules[section], "details"):
            details.append(modules[section].details(data))
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
                   "theengs": "**Theengs run.**", "load": "**Load run.**", "identity": "**Identity run.**",
                   "rooms": "**Rooms run.**"}


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
