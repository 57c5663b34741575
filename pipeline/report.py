"""What ``rebalproof verify`` leaves behind: results.json, junit.xml, report.html and the traces.

Everything is written under one output directory, each file atomically:

- ``results.json`` — the whole run as data (format ``rebalproof-verify/1``): every check's
  verdicts with their expectation and outcome, measures, exploration figures, and the
  per-rebalance section;
- ``junit.xml`` — one ``<testsuite>`` per check (a ``<testcase>`` per property: a failure when
  the outcome is unexpected, skipped when not promised) and one for the per-rebalance section,
  for CI systems;
- ``traces/<check>--<property>.json`` (a ``rebalproof-trace/1`` trace, replayable with
  ``rebalproof replay``), ``.html`` (its viewer page) and ``.txt`` (the seeds' text form);
- ``report.html`` — self-contained (inline CSS and SVG, no script, no network): the verdict
  matrix, charts from the run (rebalances to converge per check against the KIP-441 bound,
  distinct states, time), each counterexample linked to its trace files, and the
  per-rebalance matrix.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

from rebalproof.model.codec import write_json_atomic, write_text_atomic
from rebalproof.pipeline.suite import UNEXPECTED
from rebalproof.pipeline.svg import bar_chart

__all__ = ["FORMAT", "trace_stem", "write_traces", "junit_xml", "html_report", "write_report"]

FORMAT = "rebalproof-verify/1"
_COLOR = {
    "pass": "pass",
    "expected finding": "finding",
    "regression": "bad",
    "fixed": "bad",
    "promise changed": "bad",
    "inconclusive": "bad",
    "error": "bad",
}


def trace_stem(check: str, prop: str) -> str:
    """``<check>--<property>`` with characters unsafe in file names replaced."""
    return re.sub(r"[^A-Za-z0-9_.+=-]+", "_", f"{check}--{prop}")[:180]


def write_traces(out_dir: Path, checks: list[dict]) -> None:
    """Write every check's traces; record their relative paths in ``check["trace_files"]``."""
    from rebalproof.traces.format import decode_trace, write_trace

    for check in checks:
        files = {}
        for prop, trace in sorted((check.get("traces") or {}).items()):
            stem = trace_stem(check["name"], prop)
            entry = {"json": f"traces/{stem}.json"}
            write_trace(out_dir / entry["json"], trace)
            try:
                from rebalproof.traces.render_html import render_html
                from rebalproof.traces.render_text import render_text

                decoded = decode_trace(trace)
                write_text_atomic(out_dir / f"traces/{stem}.html", render_html(decoded))
                entry["html"] = f"traces/{stem}.html"
                entry["text"] = render_text(decoded)
                write_text_atomic(out_dir / f"traces/{stem}.txt", entry["text"])
                entry["txt"] = f"traces/{stem}.txt"
            except Exception as exc:  # a renderer's bug must not lose the trace itself
                entry["render_error"] = f"{type(exc).__name__}: {exc}"
            files[prop] = entry
        check["trace_files"] = files


# ------------------------------------------------------------------------------------ JUnit


def junit_xml(report: dict) -> str:
    """The run as JUnit XML: one testsuite per check and one for the per-rebalance section."""
    root = ET.Element("testsuites", name=f"rebalproof verify: {report['suite']['name']}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for check in report["checks"]:
        suite = ET.SubElement(root, "testsuite", name=f"check {check['name']}")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        classname = f"verify.{check['name']}"
        if check.get("error"):
            case = ET.SubElement(suite, "testcase", classname=classname, name="run", time=f"{check.get('seconds', 0):.3f}")
            ET.SubElement(case, "error", message=check["error"], type="error").text = check["error"]
            counts["tests"] += 1
            counts["errors"] += 1
        for entry in check.get("properties", []):
            case = ET.SubElement(suite, "testcase", classname=classname, name=entry["property"], time="0")
            counts["tests"] += 1
            outcome = entry["outcome"]
            trace = (check.get("trace_files") or {}).get(entry["property"], {}).get("json")
            if outcome in UNEXPECTED:
                text = f"{outcome}: expected {entry['expected']}, got {entry['status']}: {entry['message']}"
                if trace:
                    text += f"\ntrace: {trace}"
                ET.SubElement(case, "failure", message=f"{outcome}: expected {entry['expected']}, got {entry['status']}", type=outcome).text = text
                counts["failures"] += 1
            elif entry["status"] == "not promised":
                ET.SubElement(case, "skipped", message=entry["message"])
                counts["skipped"] += 1
            elif outcome == "expected finding":
                ET.SubElement(case, "system-out").text = f"expected finding: {entry['why']}\n{entry['message']}" + (f"\ntrace: {trace}" if trace else "")
        suite.set("time", f"{check.get('seconds', 0):.3f}")
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    section = report.get("rebalances")
    if section:
        suite = ET.SubElement(root, "testsuite", name="rebalances")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for row in section["rows"]:
            classname = f"rebalances.{row['assignor']}"
            for prop, cell in row["properties"].items():
                case = ET.SubElement(suite, "testcase", classname=classname, name=prop, time="0")
                counts["tests"] += 1
                outcome = row["judgement"]["outcomes"].get(prop, "pass")
                tally = cell["counts"]
                if outcome in UNEXPECTED:
                    example = (cell.get("violations") or [{}])[0]
                    message = f"{outcome}: violated on {tally['violated']} views" if outcome == "regression" else f"{outcome}: a known violation no longer shows"
                    ET.SubElement(case, "failure", message=message, type=outcome).text = f"{message}\n{example.get('label', '')}: {example.get('message', '')}"
                    counts["failures"] += 1
                elif tally.get("not promised") and not tally.get("holds") and not tally.get("violated"):
                    ET.SubElement(case, "skipped", message="not promised by its rule set")
                    counts["skipped"] += 1
            if row["findings"]:
                case = ET.SubElement(suite, "testcase", classname=classname, name="findings", time="0")
                example = (row.get("finding_examples") or [{}])[0]
                ET.SubElement(case, "failure", message=f"{row['findings']} findings", type="finding").text = str(example.get("message", ""))
                counts["tests"] += 1
                counts["failures"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ------------------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,sans-serif;margin:24px;color:#1b1b1b;max-width:1400px}
h1{margin-bottom:4px} .sub{color:#555;margin-top:0}
.ok{color:#2e7d32} .failed{color:#c62828}
table{border-collapse:collapse;margin:12px 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3;position:sticky;top:0}
td.pass{background:#e8f5e9} td.finding{background:#fff3e0} td.bad{background:#ffebee;font-weight:bold}
td.np{background:repeating-linear-gradient(135deg,#fafafa 0 6px,#f0f0f0 6px 12px);color:#777;font-style:italic}
.badge{display:inline-block;font-size:11px;font-weight:normal;padding:0 4px;border-radius:3px;background:rgba(0,0,0,.08)}
table.matrix{font-size:13px} table.matrix td{text-align:center;white-space:nowrap;padding:2px 4px}
table.matrix .check{position:sticky;left:0;z-index:1;background:#f3f3f3;white-space:nowrap;text-align:left;font-weight:bold}
table.matrix th.check{z-index:2}
table.matrix th.prop{vertical-align:bottom;padding:4px 2px}
table.matrix th.prop span{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;display:inline-block}
.legend .np{padding:0 4px}
.summary span{display:inline-block;margin-right:18px}
pre{background:#f7f7f7;padding:8px;overflow-x:auto;font-size:12px}
details{margin:4px 0} .charts svg{display:block;margin:12px 0}
a{color:#1565c0} .wide{overflow-x:auto}
"""


def _cell_class(entry: dict) -> str:
    if entry["status"] == "not promised" and entry["outcome"] == "pass":
        return "np"
    return _COLOR.get(entry["outcome"], "bad")


def _converge_rows(checks: list[dict]):
    rows, markers, colors = [], {}, {}
    for check in checks:
        entry = next((e for e in check.get("properties", []) if e["property"] == "converges"), None)
        if entry is None:
            continue
        measure = entry.get("measure", {})
        worst = measure.get("worst_rebalances_after_join")
        if worst is None and measure.get("fair_cycles"):
            worst = "unbounded"  # a fair run that never settles
        if worst is None:
            continue
        value = math.inf if worst == "unbounded" else float(worst)
        rows.append((check["name"], value))
        bound = entry.get("measure", {}).get("rebalance_bound")
        if bound is not None:
            markers[check["name"]] = float(bound)
        colors[check["name"]] = _COLOR.get(entry["outcome"], "bad")
    return rows, markers, colors


def _charts(report: dict) -> str:
    checks = [c for c in report["checks"] if not c.get("error")]
    parts = []
    rows, markers, colors = _converge_rows(checks)
    if rows:
        parts.append(bar_chart(rows, title="Decisive rebalances to converge after one added instance (worst run)",
                               unit="rebalances", markers=markers, marker_label="KIP-441 bound", colors=colors))
    else:
        parts.append("<p>No check measured rebalances to converge (no instance joins a settled group within its bounds).</p>")
    colors = {c["name"]: ("bad" if c["unexpected"] else "finding" if c["expected_findings"] else "pass") for c in checks}
    parts.append(bar_chart([(c["name"], c["states"]) for c in checks], title="Distinct states explored per check",
                           unit="states", colors=colors, log=True))
    parts.append(bar_chart([(c["name"], c.get("seconds", 0.0)) for c in checks], title="Seconds per check (one Spark task each)",
                           unit="s", colors=colors))
    return "\n".join(parts)


def _trace_links(check: dict, prop: str) -> str:
    files = (check.get("trace_files") or {}).get(prop)
    if not files:
        return ""
    links = [f'<a href="{escape(files[k])}">{k}</a>' for k in ("html", "json", "txt") if k in files]
    return " trace: " + " ".join(links)


#: What a matrix cell shows, by the property's status; the words are in the legend and the tooltip.
_SYMBOL = {"holds": "\u2713", "violated": "\u2717", "inconclusive": "?", "not promised": "\u2013"}


def _matrix_cell(check: dict, name: str, entry: dict | None) -> str:
    """One cell: the status as a symbol, a badge for an outcome other than pass, a finding's trace link.

    A property the pair does not promise is greyed and hatched, with no link: what was observed
    there is in the cell's tooltip and in the check's details, never dressed as a failure.
    """
    if entry is None:
        return "<td></td>"
    css = _cell_class(entry)
    symbol = escape(_SYMBOL.get(entry["status"], entry["status"]))
    files = (check.get("trace_files") or {}).get(name)
    if files and css != "np":
        symbol = f'<a href="{escape(files.get("html", files["json"]))}">{symbol}</a>'
    if entry["outcome"] not in ("pass", "expected finding"):  # a known finding says so by its colour
        symbol += f' <span class="badge">{escape(entry["outcome"])}</span>'
    title = f"{name}: {entry['status']} ({entry['outcome']}): {entry['message']}"
    return f'<td class="{css}" title="{escape(title)}">{symbol}</td>'


def _matrix(report: dict) -> str:
    """Checks as rows, properties as columns (their names written upwards), so a suite of any
    length fits a laptop's width; the check column stays in view when the table scrolls.
    """
    checks = [c for c in report["checks"] if not c.get("error")]
    if not checks:
        return ""
    names = []
    for check in checks:
        for entry in check["properties"]:
            if entry["property"] not in names:
                names.append(entry["property"])
    head = "".join(f'<th class="prop"><span>{escape(name)}</span></th>' for name in names)
    out = [
        '<p class="legend">\u2713 holds \u00b7 \u2717 violated (links to its trace) \u00b7 ? inconclusive \u00b7 '
        '<span class="np">\u2013 not promised</span>; orange: a known finding seen again, red: unexpected (its outcome said in a badge); '
        "hover a cell for its verdict in words.</p>",
        f'<div class="wide"><table class="matrix"><tr><th class="check">check</th>{head}</tr>',
    ]
    for check in checks:
        by_name = {e["property"]: e for e in check["properties"]}
        cells = "".join(_matrix_cell(check, name, by_name.get(name)) for name in names)
        out.append(f'<tr><td class="check">{escape(check["name"])}</td>{cells}</tr>')
    out.append("</table></div>")
    return "\n".join(out)


def _reproduce(check: dict) -> str:
    spec = check["spec"]
    words = ["rebalproof check", f"--protocol {spec['protocol']}", f"--assignor {spec['assignor']}"]
    if spec.get("rules"):
        words.append(f"--rules {spec['rules']}")
    for key, value in sorted(spec.get("bounds", {}).items()):
        flag = key.replace("_", "-")
        if isinstance(value, bool):
            words.append(f"--{flag}" if value else f"--no-{flag}")
        elif isinstance(value, (list, tuple)):
            words.append(f"--{flag} {','.join(str(v) for v in value)}")
        else:
            words.append(f"--{flag} {value}")
    return " ".join(words)


def _check_details(check: dict) -> str:
    out = [f'<h3 id="{escape(trace_stem(check["name"], "check"))}">{escape(check["name"])}</h3>']
    if check.get("error"):
        out.append(f'<p class="failed">error: {escape(check["error"])}</p>')
        return "\n".join(out)
    out.append(
        f"<p>{escape(check['protocol'])} + {escape(check['assignor'])} (rules: {escape(check['rules'] or 'none')}), "
        f"{check['states']:,} states, {check['edges']:,} transitions, depth {check['depth']}, "
        f"{'complete' if check['complete'] else 'INCOMPLETE: ' + escape(str(check['bound']))}, "
        f"{check['seconds']:.1f} s. Reproduce: <code>{escape(_reproduce(check))}</code></p>"
    )
    notable = [e for e in check["properties"] if e["outcome"] != "pass" or e["status"] == "violated" or "observed: violated" in e["message"]]
    if not notable:
        out.append("<p>Every property as expected.</p>")
    for entry in notable:
        why = f" — known: {escape(entry['why'])}" if entry.get("why") else ""
        out.append(
            f'<p><b>{escape(entry["property"])}</b>: {escape(entry["status"])} '
            f'(expected {escape(entry["expected"])}, <span class="{"failed" if entry["outcome"] in UNEXPECTED else ""}">'
            f'{escape(entry["outcome"])}</span>){why}<br>{escape(entry["message"])}{_trace_links(check, entry["property"])}</p>'
        )
        text = (check.get("trace_files") or {}).get(entry["property"], {}).get("text")
        if text:
            out.append(f"<details><summary>counterexample, in the seeds' text form</summary><pre>{escape(text)}</pre></details>")
    return "\n".join(out)


def _rebalances(section: dict | None) -> str:
    if not section:
        return ""
    rows = section["rows"]
    names = []
    for row in rows:
        for name in row["properties"]:
            if name not in names:
                names.append(name)
    corpus = section["corpus"]
    out = [
        "<h2>One rebalance at a time</h2>",
        f"<p>{corpus['views']} leader views: the seeds' scenarios and {corpus['generated']} generated with seed {corpus['seed']}. "
        "Each assignor's answer to each view is judged by the per-assignment properties.</p>",
        "<table><tr><th>property</th>" + "".join(f"<th>{escape(r['assignor'])}</th>" for r in rows) + "</tr>",
        "<tr><th>rules</th>" + "".join(f"<td>{escape(r['rules'])}</td>" for r in rows) + "</tr>",
    ]
    for name in names:
        cells = []
        for row in rows:
            cell = row["properties"].get(name)
            if cell is None:
                cells.append("<td></td>")
                continue
            outcome = row["judgement"]["outcomes"].get(name, "pass")
            counts = cell["counts"]
            only_np = counts.get("not promised") and not counts.get("holds") and not counts.get("violated")
            css = "np" if only_np else _COLOR.get(outcome, "bad")
            text = cell.get("cell") or ", ".join(f"{k} {v}" for k, v in counts.items() if v)
            title = ""
            if cell.get("violations"):
                first = cell["violations"][0]
                title = f' title="{escape(first.get("label", "") + ": " + first.get("message", ""))}"'
            cells.append(f'<td class="{css}"{title}>{escape(text)}</td>')
        out.append(f"<tr><th>{escape(name)}</th>{''.join(cells)}</tr>")
    out.append("<tr><th>findings</th>" + "".join(f'<td class="{"bad" if r["findings"] else "pass"}">{r["findings"]}</td>' for r in rows) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def html_report(report: dict) -> str:
    """The self-contained HTML page of a run."""
    summary = report["summary"]
    status = '<span class="ok">OK</span>' if report["ok"] else '<span class="failed">FAILED</span>'
    engine = report.get("engine", {})
    checks = report["checks"]
    unexpected = [(c, e) for c in checks for e in c.get("properties", []) if e["outcome"] in UNEXPECTED]
    errors = [c for c in checks if c.get("error")]
    body = [
        f"<h1>rebalproof verify: {escape(report['suite']['name'])} — {status}</h1>",
        f'<p class="sub">{escape(report["suite"].get("description", ""))}</p>',
        '<p class="summary">'
        f"<span>{summary['checks']} checks</span><span>{summary['states']:,} states explored</span>"
        f"<span>{summary['unexpected']} unexpected</span><span>{summary['expected_findings']} expected findings</span>"
        f"<span>engine: {escape(str(engine.get('kind', '')))} {escape(str(engine.get('master') or ''))}</span></p>",
    ]
    if unexpected or errors:
        body.append("<h2>Unexpected</h2><ul>")
        for check in errors:
            body.append(f"<li><b>{escape(check['name'])}</b>: error: {escape(check['error'])}</li>")
        for check, entry in unexpected:
            body.append(
                f"<li><b>{escape(check['name'])}</b>: {escape(entry['property'])} is {escape(entry['status'])}, "
                f"expected {escape(entry['expected'])} ({escape(entry['outcome'])}): {escape(entry['message'])}"
                f"{_trace_links(check, entry['property'])}</li>"
            )
        body.append("</ul>")
    body += [
        "<h2>Model checks</h2>",
        "<p>Each row is one check (a protocol with an assignor, explored breadth-first within its bounds, "
        "one Spark task); each cell a run property's verdict. Green: as promised; orange, marked known: a known finding seen again; "
        "red: unexpected; grey and hatched: not promised by the pair (the check still ran; what it observed is in the tooltip and "
        "in the check's details).</p>",
        _matrix(report),
        '<div class="charts">', _charts(report), "</div>",
        "<h2>Checks in detail</h2>",
        *[_check_details(c) for c in checks],
        _rebalances(report.get("rebalances")),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>rebalproof verify: {escape(report['suite']['name'])}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _json_view(report: dict) -> dict:
    """results.json: the report without what the trace files already hold."""
    checks = []
    for check in report["checks"]:
        check = {k: v for k, v in check.items() if k != "traces"}
        if "trace_files" in check:
            check["trace_files"] = {p: {k: v for k, v in f.items() if k != "text"} for p, f in check["trace_files"].items()}
        checks.append(check)
    return {"format": FORMAT, **report, "checks": checks}


def write_report(out_dir: str | Path, report: dict) -> dict[str, Path]:
    """Write the traces, results.json, junit.xml and report.html; their paths by kind."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_traces(out_dir, report["checks"])
    paths = {"json": out_dir / "results.json", "junit": out_dir / "junit.xml", "html": out_dir / "report.html"}
    write_json_atomic(paths["json"], _json_view(report))
    write_text_atomic(paths["junit"], junit_xml(report))
    write_text_atomic(paths["html"], html_report(report))
    return paths
