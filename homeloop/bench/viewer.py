"""A static HTML page for a run's episodes (docs/agents.md: the viewer).

``homeloop bench view RUN_DIR`` writes ``RUN_DIR/index.html``: a table of
episodes (pass or fail per check), and for each episode a timeline of calls,
results, events and images, with each check's witness or violation marked at
its time, beside a top-down drawing of the home with the robot's route — its
position at the end of each call, joined by straight lines, drawn solid while
it holds an object and dashed otherwise. The page needs no server and no
script from elsewhere; images are the files beside the records.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from homeloop.bench.records import read_records
from homeloop.io import write_text

#: Drawing size of the floor plan (px).
PLAN_PX = 420

STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
.pass{background:#dff3df}.fail{background:#f8dcdc}.ep{margin:2em 0;border-top:2px solid #888;padding-top:1em}
.cols{display:flex;gap:1.5em;align-items:flex-start}.timeline td{font-size:12px}.err{color:#b00}
.mark{font-weight:bold}code{font-size:12px;white-space:pre-wrap;word-break:break-all}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def _home_polygons(run_dir: Path, home_id: str) -> dict[str, list]:
    path = run_dir / "homes" / f"{home_id}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {"rooms": [r["polygon"][0] for r in data.get("rooms", [])],
            "walls": [w["polygon"][0] for w in data.get("walls", [])],
            "furniture": [f["footprint"][0] for f in data.get("furniture", []) if f.get("footprint")]}


def plan_svg(polygons: dict[str, list], route: list[list[float]]) -> str:
    """The home from above with the robot's route (see the module docstring)."""
    points = [p for ring in polygons.get("rooms", []) for p in ring] + [(r[1], r[2]) for r in route]
    if not points:
        return "<p>(no floor plan)</p>"
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, y0, span = min(xs) - 0.5, min(ys) - 0.5, max(max(xs) - min(xs), max(ys) - min(ys)) + 1.0
    scale = PLAN_PX / span

    def pt(x: float, y: float) -> str:
        return f"{(x - x0) * scale:.1f},{PLAN_PX - (y - y0) * scale:.1f}"

    def poly(ring: list, style: str) -> str:
        return f'<polygon points="{" ".join(pt(*p) for p in ring)}" style="{style}"/>'

    parts = [poly(r, "fill:#f4f1ea;stroke:#bbb;stroke-width:0.5") for r in polygons.get("rooms", [])]
    parts += [poly(r, "fill:#555;stroke:none") for r in polygons.get("walls", [])]
    parts += [poly(r, "fill:#d9cbb0;stroke:#a08d6a;stroke-width:0.5") for r in polygons.get("furniture", [])]
    for a, b in zip(route, route[1:]):
        dash = "" if b[3] else "stroke-dasharray:4 3;"
        parts.append(f'<line x1="{pt(a[1], a[2]).split(",")[0]}" y1="{pt(a[1], a[2]).split(",")[1]}" '
                     f'x2="{pt(b[1], b[2]).split(",")[0]}" y2="{pt(b[1], b[2]).split(",")[1]}" '
                     f'style="stroke:#1565c0;stroke-width:2.5;{dash}"/>')
    for i, r in enumerate(route):
        x, y = pt(r[1], r[2]).split(",")
        parts.append(f'<circle cx="{x}" cy="{y}" r="{4 if i == 0 else 2.5}" '
                     f'style="fill:{"#2e7d32" if i == 0 else "#1565c0"}"><title>t={r[0]:.1f} s</title></circle>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{PLAN_PX}" height="{PLAN_PX}" '
            f'class="plan">{"".join(parts)}</svg>')


def _timeline(record: dict[str, Any], run_dir: Path) -> str:
    marks: dict[int, list[str]] = {}
    calls = record["calls"]
    for c in record["checks"]:
        if c.get("at") is None or c["kind"] == "final":
            continue
        idx = next((i for i, call in enumerate(calls) if call["t_end"] >= c["at"] - 1e-6), len(calls) - 1)
        word = "witness" if c["passed"] else "violation"
        marks.setdefault(idx, []).append(f"{c['id']} {word} at {c['at']:.1f} s")
    rows = []
    for i, call in enumerate(calls):
        result = f'<span class="err">{_e(call["error"])}</span>' if call.get("error") else _e(_short(call.get("data")))
        events = "; ".join(f"{e['kind']} ({e['source']})" for e in call.get("events", []))
        images = "".join(f'<img src="{_e(img)}" width="160">' for img in _images(call, run_dir, record))
        mark = "".join(f'<div class="mark">▶ {_e(m)}</div>' for m in marks.get(i, []))
        rows.append(f"<tr><td>{call['t_start']:.1f}–{call['t_end']:.1f}</td><td><code>{_e(call['tool'])}"
                    f"({_e(_short(call['arguments'], 160))})</code>{mark}</td><td><code>{result}</code>{images}</td>"
                    f"<td>{_e(events)}</td><td>{call['units']}</td></tr>")
    return ('<table class="timeline"><tr><th>t (s)</th><th>call</th><th>result</th><th>events</th><th>units</th></tr>'
            + "".join(rows) + "</table>")


def _images(call: dict[str, Any], run_dir: Path, record: dict[str, Any]) -> list[str]:
    data = call.get("data")
    names = []
    if isinstance(data, dict) and data.get("image_file"):
        names.append(f"episodes/{data['image_file']}")
    return [n for n in names if (run_dir / n).exists()]


def _check_row(c: dict[str, Any]) -> str:
    at = "" if c.get("at") is None else f"{c['at']:.1f}"
    verdict = "pass" if c["passed"] else "FAIL"
    return (f'<tr class="{"pass" if c["passed"] else "fail"}"><td>{_e(c["id"])}</td><td>{_e(c["kind"])}</td>'
            f'<td>{verdict}</td><td>{at}</td><td>{_e(_short(c.get("evidence"), 160))}</td></tr>')


def _episode_section(record: dict[str, Any], run_dir: Path) -> str:
    w = record["world"]
    checks = "".join(_check_row(c) for c in record["checks"])
    return (f'<div class="ep" id="{_e(record["episode_id"])}"><h2>{_e(w["task"])} — {_e(w["home"])}, '
            f'{_e(w["robot"])}, seed {w["seed"]}: {"passed" if record["passed"] else "failed"}</h2>'
            f'<p>agent {_e(record["agent"].get("model") or record["agent"]["name"])}; ended by '
            f'<b>{_e(record["ended_by"])}</b>; {record["units_spent"]}/{record["budget"]} units; '
            f'failures: {_e(", ".join(record.get("failures", [])) or "none")}</p>'
            f'<div class="cols"><div>{plan_svg(_home_polygons(run_dir, w["home"]), record.get("route", []))}'
            f'<table><tr><th>check</th><th>kind</th><th>result</th><th>at (s)</th><th>evidence</th></tr>{checks}</table>'
            f'</div><div>{_timeline(record, run_dir)}</div></div></div>')


def write_viewer(run_dir: Path) -> Path:
    """Write ``run_dir/index.html`` for every record in the run; returns its path."""
    run_dir = Path(run_dir)
    result = read_records([run_dir])
    records = sorted(result.records, key=lambda r: r["episode_id"])
    check_ids = sorted({c["id"] for r in records for c in r["checks"]})
    head = "".join(f"<th>{_e(c)}</th>" for c in check_ids)
    rows = []
    for r in records:
        by_id = {c["id"]: c["passed"] for c in r["checks"]}
        cells = "".join("<td></td>" if c not in by_id else
                        f'<td class="{"pass" if by_id[c] else "fail"}">{"✓" if by_id[c] else "✗"}</td>' for c in check_ids)
        w = r["world"]
        rows.append(f'<tr class="episode-row"><td><a href="#{_e(r["episode_id"])}">{_e(w["task"])}</a></td>'
                    f'<td>{_e(w["home"])}</td><td>{w["seed"]}</td><td class="{"pass" if r["passed"] else "fail"}">'
                    f'{"pass" if r["passed"] else "fail"}</td><td>{_e(r["ended_by"])}</td>{cells}</tr>')
    skipped = "".join(f"<li>{_e(why)}</li>" for _, why in result.rejected)
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>HomeLoop run {_e(run_dir.name)}</title>"
            f"<style>{STYLE}</style></head><body><h1>HomeLoop run: {_e(run_dir.name)}</h1>"
            f"<p>{len(records)} episodes, {sum(r['passed'] for r in records)} passed.</p>"
            + (f"<p>Records not shown:</p><ul>{skipped}</ul>" if skipped else "")
            + f"<table id='episodes'><tr><th>task</th><th>home</th><th>seed</th><th>result</th><th>ended by</th>{head}</tr>"
            + "".join(rows) + "</table>" + "".join(_episode_section(r, run_dir) for r in records) + "</body></html>")
    return write_text(run_dir / "index.html", page)
