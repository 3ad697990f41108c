"""Static HTML pages for a run's episodes (docs/agents.md: the episode viewer).

``homeloop bench view RUN_DIR`` writes ``RUN_DIR/index.html`` — every episode
in a table with each of its checks passed or failed and the failure classes
of those that failed, and each check's results over the run — and one page
per episode, ``RUN_DIR/view/<episode id>.html``: the episode's checks, a
top-down drawing of the home with the robot's route, and a timeline of its
calls, results, events and frames, with each check's witness or violation
marked at the call it happened in (final checks, and checks that never got
their witness, at the end).

The route joins the robot's positions — at the wake, then at the end of each
call — by straight lines, one per call: solid when the robot held an object
as the call began (it carried it), dashed otherwise. Frames are thumbnails of
the capture images beside the records; a click enlarges one (CSS ``:target``,
no script).

A home-control episode's page (docs/tasks.md, "Home control") also shows
the request: its query type, whether it is feasible (and what makes it not),
the goal over time, the schedules and automations the agent made with
their firings (agent time), and its reports that the request is infeasible
with the rule's verdict and, where a model judge was asked, the judge's.

The pages load nothing from elsewhere and run no script. Everything a record
holds is escaped: what a model sent is shown as text. The same records give
the same bytes. One page per episode keeps each page small however large
the run; pages of episodes whose records are gone are removed.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import quote

import shapely

from homeloop.bench.control.goals import REPORTED_CHECK
from homeloop.bench.control.model import QUERY_CODES
from homeloop.bench.records import home_copy_path, iter_records
from homeloop.core.io import write_text

#: Folder of the episode pages inside a run folder.
PAGES_DIR = "view"
#: Width of the floor-plan drawing (px); its height follows the home's proportions.
PLAN_PX = 460
#: Colour of the robot's route (the viewer test looks for it in a screenshot).
ROUTE_COLOUR = "#1565c0"
#: Characters of a call's arguments or result shown in the row; the rest folds out, up to the second.
SHORT_CHARS, LONG_CHARS = 240, 20_000

#: A polygon's outline as a home file writes it: points [x, y] (metres).
Ring = list[list[float]]
#: Where a call left the robot, as a record's ``route`` holds it: [t, x, y, holding].
RoutePoint = Sequence[float]
#: A check's result in a record, and whether it is marked as a witness (True) or a violation.
Mark = tuple[dict[str, Any], bool]

STYLE = f"""
body{{font:14px/1.35 system-ui,sans-serif;margin:1.2em 1.5em;color:#222;background:#fff}}
h1{{font-size:1.5em;margin:.2em 0}}h2{{font-size:1.15em;margin:1.2em 0 .4em}}a{{color:#0b57a4}}
table{{border-collapse:collapse}}td,th{{border:1px solid #d0d0d0;padding:3px 6px;text-align:left;vertical-align:top}}
th{{background:#f3f3f3}}.pass{{background:#e2f4e2}}.fail{{background:#fadddd}}.muted{{color:#777}}
.chk{{display:inline-block;margin:1px 2px;padding:0 5px;border-radius:3px;font-size:12px;white-space:nowrap}}
.chk.pass{{border:1px solid #7bbf7b}}.chk.fail{{border:1px solid #d17a7a}}
.cls{{display:inline-block;margin:1px 2px;padding:0 5px;border-radius:3px;font-size:12px;background:#ffe9c7}}
.cols{{display:grid;grid-template-columns:{PLAN_PX + 20}px minmax(0,1fr);gap:1.2em;align-items:start}}
.side{{position:sticky;top:.5em}}.side table{{font-size:12px;margin-top:.6em;width:100%}}
.legend{{font-size:12px;color:#444;margin:.3em 0}}.legend svg{{vertical-align:middle}}
.timeline{{width:100%;font-size:12px;table-layout:fixed}}.timeline td{{word-break:break-word}}
.res{{margin-top:2px;padding-left:.8em;border-left:2px solid #ddd}}
.timeline tr.witness td:first-child{{border-left:4px solid #2e7d32}}
.timeline tr.violation td:first-child{{border-left:4px solid #c62828}}
code{{font-size:12px;white-space:pre-wrap;word-break:break-all}}.err{{color:#b00020}}
.mark{{display:block;font-weight:600;font-size:12px}}.mark.pass{{color:#1b5e20;background:none}}
.mark.fail{{color:#b71c1c;background:none}}details summary{{cursor:pointer;color:#0b57a4}}
.thumb img{{width:130px;height:auto;border:1px solid #999;display:block;margin:2px 0}}
.lightbox{{display:none}}.lightbox:target{{display:flex;position:fixed;inset:0;z-index:9;
background:rgba(0,0,0,.85);align-items:center;justify-content:center}}
.lightbox img{{max-width:96vw;max-height:92vh;border:2px solid #fff}}
.lightbox span{{position:absolute;top:.5em;left:1em;color:#fff}}
svg.plan text{{font:9px system-ui,sans-serif;fill:#666}}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _folded(value: Any, short: int = SHORT_CHARS) -> str:
    """Escaped text of a value: the first ``short`` characters, the rest in a fold."""
    text = _json(value)
    if len(text) <= short:
        return f"<code>{_e(text)}</code>"
    more = text[:LONG_CHARS] + ("…" if len(text) > LONG_CHARS else "")
    return (f"<code>{_e(text[:short])}…</code><details><summary>all {len(text):,} characters</summary>"
            f"<code>{_e(more)}</code></details>")


def _num(value: Any, digits: int = 1) -> str:
    return "" if value is None else f"{float(value):.{digits}f}"


# --- the floor plan and the route ----------------------------------------------------------------


@dataclass
class PlanShapes:
    """The home's outlines for the drawing (metres), read once per home."""

    rooms: list[tuple[Ring, str, str]] = field(default_factory=list)  # (ring, name, space class)
    walls: list[Ring] = field(default_factory=list)
    fixtures: list[Ring] = field(default_factory=list)
    furniture: list[Ring] = field(default_factory=list)
    doors: list[Ring] = field(default_factory=list)
    windows: list[Ring] = field(default_factory=list)


def read_plan(run_dir: Path, home_id: str) -> PlanShapes:
    """The outlines of the home file the run keeps (``homes/<home>.json``); empty when it is gone."""
    path = home_copy_path(run_dir, home_id)
    if not path.is_file():
        return PlanShapes()
    data = json.loads(path.read_text(encoding="utf-8"))
    openings = data.get("openings", [])
    return PlanShapes(
        rooms=[(r["polygon"][0], r.get("name", ""), r.get("space_class", "indoor")) for r in data.get("rooms", [])],
        walls=[w["polygon"][0] for w in data.get("walls", [])],
        fixtures=[f["polygon"][0] for f in data.get("fixtures", []) if f.get("polygon")],
        furniture=[f["footprint"][0] for f in data.get("furniture", []) if f.get("footprint")],
        doors=[o["polygon"][0] for o in openings if o.get("kind") != "window" and o.get("polygon")],
        windows=[o["polygon"][0] for o in openings if o.get("kind") == "window" and o.get("polygon")])


class _Frame:
    """Metres to drawing pixels: the bounding box of the plan and the route, y up."""

    def __init__(self, points: Sequence[Sequence[float]]):
        xs, ys = [float(p[0]) for p in points], [float(p[1]) for p in points]
        self.x0, self.y1 = min(xs) - 0.4, max(ys) + 0.4
        span_x, span_y = max(xs) - min(xs) + 0.8, max(ys) - min(ys) + 0.8
        self.scale = PLAN_PX / max(span_x, 1e-6)
        self.width, self.height = PLAN_PX, round(span_y * self.scale)

    def xy(self, x: float, y: float) -> tuple[str, str]:
        return f"{(float(x) - self.x0) * self.scale:.1f}", f"{(self.y1 - float(y)) * self.scale:.1f}"

    def polygon(self, ring: Ring, css: str) -> str:
        return f'<polygon class="{css}" points="{" ".join(",".join(self.xy(*p[:2])) for p in ring)}"/>'


PLAN_STYLE = (".room{fill:#f6f2ea;stroke:#c9c2b4;stroke-width:.5}.outdoor{fill:#eef3e8;stroke:#c9d2bd;"
              "stroke-width:.5}.wall{fill:#4d4d4d}.door{fill:#d7b98a}.window{fill:#9ccbe8}"
              ".fixture{fill:#dfe3e6;stroke:#b5bcc2;stroke-width:.5}.furn{fill:#e0d2b6;stroke:#ad9a74;stroke-width:.5}"
              f".seg{{stroke:{ROUTE_COLOUR};stroke-linecap:round}}.held{{stroke-width:3.5}}"
              ".empty{stroke-width:2.2;stroke-dasharray:5 4}")


def plan_svg(shapes: PlanShapes, route: Sequence[RoutePoint], call_of_point: int = 0) -> str:
    """The home from above with the robot's route (see the module docstring). Route points are
    ``[t, x, y, holding]``; point ``j`` is where call ``j - call_of_point`` left the robot."""
    points: list[Sequence[float]] = [p for ring, _, _ in shapes.rooms for p in ring]
    points += [(r[1], r[2]) for r in route]
    if not points:
        return '<p class="muted">(no floor plan and no route)</p>'
    f = _Frame(points)
    parts = [f.polygon(ring, "outdoor" if cls == "outdoor" else "room") for ring, _, cls in shapes.rooms]
    parts += [f.polygon(r, "fixture") for r in shapes.fixtures] + [f.polygon(r, "furn") for r in shapes.furniture]
    parts += [f.polygon(r, "wall") for r in shapes.walls] + [f.polygon(r, "door") for r in shapes.doors]
    parts += [f.polygon(r, "window") for r in shapes.windows] + _room_labels(f, shapes)
    parts += _route_lines(f, route, call_of_point) + _route_ends(f, route, "start" if call_of_point else "after call 0")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plan" width="{f.width}" height="{f.height}" '
            f'viewBox="0 0 {f.width} {f.height}"><style>{PLAN_STYLE}</style>{"".join(parts)}</svg>')


def _room_labels(f: _Frame, shapes: PlanShapes) -> list[str]:
    labels = []
    for ring, name, _ in shapes.rooms:
        if len(ring) >= 3 and name:
            spot = shapely.Polygon([p[:2] for p in ring]).representative_point()
            x, y = f.xy(spot.x, spot.y)
            labels.append(f'<text x="{x}" y="{y}" text-anchor="middle">{_e(name)}</text>')
    return labels


def _route_lines(f: _Frame, route: Sequence[RoutePoint], call_of_point: int) -> list[str]:
    """One line per call: from where the robot stood before it to where the call left it."""
    lines = []
    for j in range(1, len(route)):
        a, b = route[j - 1], route[j]
        call = j - call_of_point
        held = bool(a[3])
        (x1, y1), (x2, y2) = f.xy(a[1], a[2]), f.xy(b[1], b[2])
        lines.append(f'<a href="#call-{call}"><line class="seg {"held" if held else "empty"}" data-call="{call}" '
                     f'x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"><title>call {call}, {_num(a[0])}–{_num(b[0])} s'
                     f'{", carrying" if held else ""}</title></line></a>')
    return lines


def _route_ends(f: _Frame, route: Sequence[RoutePoint], first: str) -> list[str]:
    """The first point (the start, or, in a record without the position at the wake, where the
    first call left the robot) and the last."""
    if not route:
        return []
    (sx, sy), (ex, ey) = f.xy(route[0][1], route[0][2]), f.xy(route[-1][1], route[-1][2])
    return [f'<rect class="route-end" x="{float(ex) - 4.5:.1f}" y="{float(ey) - 4.5:.1f}" width="9" height="9" '
            f'style="fill:#fff;stroke:{ROUTE_COLOUR};stroke-width:2"><title>end, {_num(route[-1][0])} s</title></rect>',
            f'<circle class="route-start" cx="{sx}" cy="{sy}" r="6" style="fill:#2e7d32;stroke:#fff;stroke-width:2">'
            f'<title>{first}, {_num(route[0][0])} s</title></circle>',
            f'<text x="{float(sx) + 8:.1f}" y="{float(sy) - 6:.1f}" style="fill:#2e7d32;font-weight:700;font-size:11px;'
            f'paint-order:stroke;stroke:#fff;stroke-width:3px">{first}</text>']


LEGEND = (f'<div class="legend"><svg width="28" height="8"><line x1="1" y1="4" x2="27" y2="4" '
          f'style="stroke:{ROUTE_COLOUR};stroke-width:2.2;stroke-dasharray:5 4"/></svg> moving, hands empty '
          f'&nbsp;<svg width="28" height="8"><line x1="1" y1="4" x2="27" y2="4" style="stroke:{ROUTE_COLOUR};'
          'stroke-width:3.5"/></svg> carrying &nbsp;<svg width="12" height="12"><circle cx="6" cy="6" r="5" '
          'style="fill:#2e7d32"/></svg> start &nbsp;<svg width="12" height="12"><rect x="1.5" y="1.5" width="9" '
          f'height="9" style="fill:#fff;stroke:{ROUTE_COLOUR};stroke-width:2"/></svg> end</div>')


# --- an episode's page ---------------------------------------------------------------------------


def check_marks(record: dict[str, Any]) -> dict[int, list[Mark]]:
    """Where each check shows on the timeline: call index -> [(check, is a witness)]; index
    ``len(calls)`` is the end. An ``ever``, ``always`` or ``never`` check that found its witness
    or violation is marked at the call that was running then; a final check at the end, as is a
    failed check with no time (its witness never came)."""
    calls = record["calls"]
    marks: dict[int, list[Mark]] = {}
    end = len(calls)
    for c in record["checks"]:
        at = c.get("at")
        if c["kind"] == "final" or at is None:
            if c["kind"] == "final" or not c["passed"]:
                marks.setdefault(end, []).append((c, bool(c["passed"])))
            continue
        index = next((i for i, call in enumerate(calls) if call["t_end"] >= at - 1e-6), end)
        marks.setdefault(index, []).append((c, bool(c["passed"])))
    return marks


def _mark_html(check: dict[str, Any], passed: bool) -> str:
    kind, at = check["kind"], check.get("at")
    if passed:
        what = "holds" if kind == "final" else "witness"
    else:
        what = "violated" if kind in ("never", "always") else ("fails" if kind == "final" else "never happened")
    when = f" at {at:.1f} s" if at is not None else ""
    klass = "" if passed else f" ({check.get('failure_class') or '—'})"
    sign = "✓" if passed else "✗"
    return f'<span class="mark {"pass" if passed else "fail"}">{sign} {_e(check["id"])} {what}{when}{_e(klass)}</span>'


def capture_files(value: Any) -> list[str]:
    """The capture images a result names (``image_file``, relative to ``episodes/``), in order."""
    found: list[str] = []
    if isinstance(value, dict):
        if isinstance(value.get("image_file"), str):
            found.append(value["image_file"])
        for item in value.values():
            found.extend(capture_files(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(capture_files(item))
    return found


def _frames(files: list[str], run_dir: Path, back: str, boxes: list[str]) -> str:
    """Thumbnails of the frames, each enlarged by a click (a ``:target`` box appended to ``boxes``,
    which a click closes, back to the row ``back``)."""
    thumbs = []
    for name in files:
        if not (run_dir / "episodes" / name).is_file():
            thumbs.append(f'<span class="muted">{_e(name)} (missing)</span>')
            continue
        anchor = "frame-" + "".join(ch if ch.isalnum() else "-" for ch in name)
        src = _e("../episodes/" + quote(name))
        thumbs.append(f'<a class="thumb" href="#{anchor}"><img loading="lazy" src="{src}" alt="{_e(name)}"></a>')
        boxes.append(f'<a class="lightbox" id="{anchor}" href="#{back}"><span>{_e(name)} — click to close</span>'
                     f'<img loading="lazy" src="{src}" alt="{_e(name)}"></a>')
    return "".join(thumbs)


def _call_row(i: int, call: dict[str, Any], marks: list[Mark], run_dir: Path, boxes: list[str]) -> str:
    result = (f'<span class="err">error: {_e(call["error"])}</span>' if call.get("error")
              else _folded(call.get("data")))
    events = "".join(f"<div>{_num(e.get('t'))} s {_e(e['kind'])} <span class='muted'>({_e(e['source'])})</span>"
                     f"</div>" for e in call.get("events", []))
    row_class = "violation" if any(not ok for _, ok in marks) else ("witness" if marks else "")
    frames = _frames(capture_files(call.get("data")), run_dir, f"call-{i}", boxes)
    return (f'<tr id="call-{i}" class="call {row_class}"><td>{i}</td>'
            f'<td>{_num(call["t_start"])}–{_num(call["t_end"])}</td><td>{_e(call.get("units", ""))}</td>'
            f'<td><div><b>{_e(call["tool"])}</b> '
            f'{_folded(call.get("arguments"), 160)}</div><div class="res">{result}</div></td><td>{frames}</td>'
            f'<td>{"".join(_mark_html(c, ok) for c, ok in marks)}{events}</td></tr>')


def _end_row(record: dict[str, Any], marks: list[Mark]) -> str:
    """The end: how the episode ended, the agent's summary, events after its last call, final checks."""
    lines = []
    for entry in record.get("trace", []):
        if entry["kind"] == "stop":
            lines.append(f"<div>{_num(entry.get('t'))} s <b>stop</b>: {_folded(entry.get('summary') or '')}</div>")
        elif entry["kind"] == "end":
            lines.append(f"<div>{_num(entry.get('t'))} s <b>ended: {_e(entry.get('reason'))}</b> "
                         f"{_folded(entry.get('detail') or '')}</div>")
        elif entry["kind"] == "event":
            lines.append(f"<div>{_num(entry.get('t'))} s {_e(entry.get('kind'))} "
                         f"<span class='muted'>({_e(entry.get('source'))})</span></div>")
    row_class = "violation" if any(not ok for _, ok in marks) else ("witness" if marks else "")
    return (f'<tr id="call-{len(record["calls"])}" class="end {row_class}"><td>end</td><td></td><td></td>'
            f'<td colspan="2">ended by <b>{_e(record["ended_by"])}</b>{"".join(lines)}</td>'
            f'<td>{"".join(_mark_html(c, ok) for c, ok in marks)}</td></tr>')


def timeline_html(record: dict[str, Any], run_dir: Path, boxes: list[str]) -> str:
    marks = check_marks(record)
    rows = [_call_row(i, call, marks.get(i, []), run_dir, boxes) for i, call in enumerate(record["calls"])]
    rows.append(_end_row(record, marks.get(len(record["calls"]), [])))
    return ('<table class="timeline"><colgroup><col style="width:3em"><col style="width:5.6em">'
            '<col style="width:3.2em"><col><col style="width:140px"><col style="width:24%"></colgroup>'
            '<tr><th>#</th><th>t (s)</th><th>units</th><th>call → result</th><th>frames</th><th>checks, events</th>'
            '</tr>' + "".join(rows) + "</table>")


def replies_html(record: dict[str, Any]) -> str:
    """The model's replies in order (agents that talk to a model): its text and the calls it asked for."""
    rows = []
    for entry in record.get("model_calls") or []:
        reply, tokens = entry.get("reply") or {}, entry.get("tokens") or {}
        asked = "".join(f'<div><b>{_e((c.get("function") or {}).get("name"))}</b> '
                        f'{_folded((c.get("function") or {}).get("arguments"), 160)}</div>'
                        for c in reply.get("tool_calls") or [])
        problem = f'<div class="err">malformed: {_e(entry["malformed"])}</div>' if entry.get("malformed") else ""
        rows.append(f'<tr class="reply"><td>{_e(entry.get("request", ""))}</td><td>{_num(entry.get("t"))}</td>'
                    f'<td>{_e(tokens.get("total", ""))}</td><td>{_folded(reply.get("content") or "")}</td>'
                    f'<td>{asked}{problem}</td></tr>')
    if not rows:
        return ""
    return ('<h2>Model replies</h2><table class="timeline"><colgroup><col style="width:3em"><col style="width:5.6em">'
            '<col style="width:5em"><col><col style="width:40%"></colgroup><tr><th>#</th><th>t (s)</th>'
            '<th>tokens</th><th>text</th><th>tool calls</th></tr>' + "".join(rows) + "</table>")


def _checks_table(record: dict[str, Any]) -> str:
    rows = "".join(
        f'<tr class="check {"pass" if c["passed"] else "fail"}"><td><b>{_e(c["id"])}</b><div class="muted">'
        f'{_e(c.get("description", ""))}</div></td><td>{_e(c["kind"])}</td><td>{"pass" if c["passed"] else "FAIL"}'
        f'{"" if c["passed"] else " · " + _e(c.get("failure_class") or "")}</td><td>{_num(c.get("at"))}</td>'
        f'<td>{"—" if c.get("evidence") is None else _folded(c["evidence"], 120)}</td></tr>'
        for c in record["checks"])
    return ('<table class="checks"><tr><th>check</th><th>kind</th><th>result</th><th>at (s)</th><th>witness</th></tr>'
            + rows + "</table>")


def _usage_text(record: dict[str, Any]) -> str:
    tokens, cost = record.get("tokens") or {}, record.get("cost_usd")
    parts = [f"{tokens['total']:,} tokens"] if isinstance(tokens, dict) and tokens.get("total") is not None else []
    if cost is not None:
        parts.append(f"${float(cost):.4f}")
    return "; " + ", ".join(parts) if parts else ""


# --- a home-control episode's request, goal, hub rules and verdicts ----------------------------------


def _condition_text(c: dict[str, Any]) -> str:
    """A goal condition in words: devices, field and value, over its window of agent time."""
    if c.get("at_least") is not None or c.get("at_most") is not None:
        bounds = (("at_least", "≥"), ("at_most", "≤"))
        wanted = " and ".join(f"{op} {c[k]}" for k, op in bounds if c.get(k) is not None)
    else:
        wanted = f"= {_json(c.get('equals'))}"
    who = (" or " if c.get("any") else ", ").join(c.get("devices", []))
    start, end = c.get("start_s"), c.get("end_s")
    until = "the horizon" if end is None else f"{end:g} s"
    when = "at the horizon" if start is None else f"from {start:g} s to {until}"
    return f"{who}.{c.get('field')} {wanted} {when}"


def _goal_html(goal: dict[str, Any]) -> str:
    items = [f"<li>{_e(_condition_text(c))}</li>" for c in goal.get("conditions", [])]
    if goal.get("untouched"):
        items.append("<li>nothing settable changes</li>")
    answer = goal.get("answer")
    if answer:
        number = answer.get("number")
        said = (f"the number {number:g} (± {answer.get('tolerance', 0):g})" if number is not None
                else " or ".join(answer.get("words", [])))
        wrong = f", not {' or '.join(answer['wrong'])}" if answer.get("wrong") else ""
        items.append(f"<li>the reply says {_e(said)}{_e(wrong)}</li>")
    return f"<ul class='goal'>{''.join(items)}</ul>"


def _rules_html(record: dict[str, Any]) -> str:
    """The hub's schedules and automations at the end, with their firings, in agent time."""
    wake = float(record["world"].get("wake_time_s") or 0.0)
    rules = ((record.get("final_state") or {}).get("modules") or {}).get("hub_automation", {}).get("rules", [])
    if not rules:
        return "<p class='muted'>No schedule or automation.</p>"
    rows = []
    for r in rules:
        a = r.get("action", {})
        when = f"at {float(r['at']) - wake:.1f} s" if r.get("at") is not None \
            else f"on {_json(r.get('trigger'))}" + (f", after {r.get('delay_s'):g} s" if r.get("delay_s") else "")
        fired = ", ".join(f"{float(t) - wake:.1f} s" for t in r.get("fired", [])) or "—"
        rows.append(f"<tr class='rule'><td>{_e(r.get('id'))}</td><td>{_e(r.get('kind'))}</td>"
                    f"<td>{_e(a.get('device_id'))}.{_e(a.get('field'))} = {_e(_json(a.get('value')))}</td>"
                    f"<td>{_e(when)}</td><td>{_e(r.get('status'))}{_e(' · ' + r['reason'] if r.get('reason') else '')}"
                    "</td>"
                    f"<td>{_e(fired)}</td></tr>")
    return ("<table class='rules'><tr><th>id</th><th>kind</th><th>sets</th><th>when</th><th>status</th>"
            "<th>fired at</th></tr>" + "".join(rows) + "</table>")


def _reports_html(record: dict[str, Any]) -> str:
    """The agent's reports that the request is infeasible, the rule's verdict and the judge's."""
    check = next((c for c in record["checks"] if c["id"] == REPORTED_CHECK), None)
    made = ((check or {}).get("evidence") or {}).get("reports", [])
    items = [f"<li><b>{_e(r.get('reason'))}</b>: {_e(r.get('detail'))}</li>" for r in made]
    out = f"<ul class='reports'>{''.join(items)}</ul>" if items else "<p class='muted'>No report.</p>"
    if check is not None:
        verdict = "pass" if check["passed"] else "fail"
        out += (f"<p class='verdict'>Rule: <span class='{verdict}'>{verdict}</span>"
                f"{_e(' · ' + check['failure_class']) if check.get('failure_class') else ''}</p>")
    judge = record.get("judge")
    if judge:
        agrees = {True: "agrees with the rule", False: "disagrees with the rule"}.get(judge.get("agrees"), "no verdict")
        out += (f"<p class='judge'>Judge {_e(judge.get('model'))}: <b>{_e(judge.get('verdict'))}</b> "
                f"({_e(agrees)}) — {_e(judge.get('reason'))}</p>")
    return out


def control_html(record: dict[str, Any]) -> str:
    """A home-control episode's request, goal, hub rules and verdicts (empty for any other record)."""
    control = record.get("control")
    if not isinstance(control, dict):
        return ""
    constraint = control.get("constraint") or {}
    feasible = "feasible" if control.get("feasible") else (
        f"infeasible: {constraint.get('kind', '?')} ({', '.join(constraint.get('words', []))})")
    return (f"<div class='control'><h2>Request</h2><table class='request'>"
            f"<tr><th>request</th><td>{_e(control.get('request'))}</td></tr>"
            f"<tr><th>query type</th><td>{_e(control.get('query_type'))} "
            f"({_e(QUERY_CODES.get(str(control.get('query_type')), '?'))})</td></tr>"
            f"<tr><th>feasible</th><td>{_e(feasible)}</td></tr>"
            f"<tr><th>goal</th><td>{_goal_html(control.get('goal') or {})}</td></tr></table>"
            f"<h2>Schedules and automations</h2>{_rules_html(record)}"
            f"<h2>Reported infeasible</h2>{_reports_html(record)}</div>")


def episode_page(record: dict[str, Any], run_dir: Path, shapes: PlanShapes) -> str:
    w, agent = record["world"], record["agent"]
    title = f'{w["task"]} — {w["home"]}, seed {w["seed"]}'
    verdict = "passed" if record["passed"] else "failed"
    failures = "".join(f'<span class="cls">{_e(c)}</span>' for c in record.get("failures", []))
    route = record.get("route", [])
    boxes: list[str] = []
    timeline = timeline_html(record, run_dir, boxes)
    head = (f'<p><a href="../index.html">← all episodes</a></p><h1>{_e(title)}: <span class="'
            f'{"pass" if record["passed"] else "fail"}">{verdict}</span></h1>'
            f'<p>{_e(record["task"].get("description", ""))}</p>'
            f'<p>agent <b>{_e(agent.get("model") or agent.get("name"))}</b>; robot {_e(w["robot"])}; '
            f'flags {_e(w.get("flags_label") or "none")}; ended by <b>{_e(record["ended_by"])}</b>; '
            f'{_e(record["units_spent"])}/{_e(record["budget"])} units; {len(record["calls"])} calls'
            f'{_e(_usage_text(record))} {failures}</p>')
    side = (f'<div class="side">{plan_svg(shapes, route, len(route) - len(record["calls"]))}{LEGEND}'
            f'{_checks_table(record)}</div>')
    return _page(title, head + control_html(record) + f'<div class="cols">{side}<div>{timeline}'
                 f'{replies_html(record)}</div></div>' + "".join(boxes))


def _page(title: str, body: str) -> str:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n")


# --- the index -----------------------------------------------------------------------------------


def _check_pills(record: dict[str, Any]) -> str:
    return "".join(f'<span class="chk {"pass" if c["passed"] else "fail"}" data-check="{_e(c["id"])}">'
                   f'{"✓" if c["passed"] else "✗"} {_e(c["id"])}</span>' for c in record["checks"])


def index_row(record: dict[str, Any]) -> str:
    w, agent = record["world"], record["agent"]
    href = _e(f"{PAGES_DIR}/{quote(record['episode_id'])}.html")
    verdict = "pass" if record["passed"] else "fail"
    failures = "".join(f'<span class="cls">{_e(c)}</span>' for c in record.get("failures", []))
    return (f'<tr class="episode-row" id="{_e(record["episode_id"])}"><td><a href="{href}">{_e(w["task"])}</a></td>'
            f'<td>{_e(w["home"])}</td><td>{_e(w["robot"])}</td><td>{_e(w["seed"])}</td>'
            f'<td>{_e(w.get("flags_label") or "")}</td><td>{_e(agent.get("model") or agent.get("name"))}</td>'
            f'<td class="{verdict}">{verdict}</td><td>{_e(record["ended_by"])}</td>'
            f'<td>{_e(record["units_spent"])}/{_e(record["budget"])}</td><td>{_check_pills(record)}</td>'
            f'<td>{failures}</td></tr>')


@dataclass
class _CheckTally:
    failure_class: str
    runs: int = 0
    passed: int = 0
    failed_in: list[tuple[str, str]] = field(default_factory=list)  # (episode id, label)


def _tally_checks(tallies: dict[str, _CheckTally], record: dict[str, Any]) -> None:
    w = record["world"]
    for c in record["checks"]:
        t = tallies.setdefault(c["id"], _CheckTally(c.get("failure_class") or ""))
        t.runs += 1
        t.passed += bool(c["passed"])
        if not c["passed"]:
            t.failed_in.append((record["episode_id"], f'{w["task"]} s{w["seed"]}'))


def _checks_summary(tallies: dict[str, _CheckTally]) -> str:
    rows = []
    for check_id in sorted(tallies):
        t = tallies[check_id]
        links = ", ".join(f'<a href="{_e(PAGES_DIR + "/" + quote(eid) + ".html")}">{_e(label)}</a>'
                          for eid, label in t.failed_in)
        rows.append(f'<tr class="check-row"><td>{_e(check_id)}</td><td>{_e(t.failure_class)}</td><td>{t.runs}</td>'
                    f'<td class="{"pass" if t.passed == t.runs else "fail"}">{t.passed}</td><td>{links}</td></tr>')
    return ('<h2>Checks</h2><table id="checks"><tr><th>check</th><th>class when failed</th><th>runs</th>'
            '<th>passed</th><th>failed in</th></tr>' + "".join(rows) + "</table>")


def index_page(run_dir: Path, rows: list[str], tallies: dict[str, _CheckTally], endings: dict[str, int],
               passed: int, rejected: list[tuple[Path, str]]) -> str:
    ended = ", ".join(f"{_e(ending)} {n}" for ending, n in sorted(endings.items()))
    skipped = "".join(f"<li>{_e(why)}</li>" for _, why in rejected)
    body = (f"<h1>HomeLoop run: {_e(run_dir.resolve().name)}</h1><p>{len(rows)} episodes, "
            f"{passed} passed; ended by: {ended or '—'}.</p>"
            + (f"<p>Records not shown:</p><ul>{skipped}</ul>" if skipped else "")
            + "<table id='episodes'><tr><th>task</th><th>home</th><th>robot</th><th>seed</th><th>flags</th>"
              "<th>agent</th><th>result</th><th>ended by</th><th>units</th><th>checks</th><th>failure classes</th>"
              "</tr>" + "".join(rows) + "</table>" + _checks_summary(tallies))
    return _page(f"HomeLoop run {run_dir.resolve().name}", body)


def write_viewer(run_dir: Path) -> Path:
    """Write ``run_dir/index.html`` and a page per readable record under ``run_dir/view/``;
    returns the index's path. Records are read one at a time, so memory stays flat."""
    run_dir = Path(run_dir)
    pages = run_dir / PAGES_DIR
    pages.mkdir(exist_ok=True)
    plans: dict[str, PlanShapes] = {}
    rows: list[str] = []
    tallies: dict[str, _CheckTally] = {}
    endings: dict[str, int] = {}
    rejected: list[tuple[Path, str]] = []
    written: set[str] = set()
    passed = 0
    for path, record, why in iter_records([run_dir]):
        if record is None:
            rejected.append((path, why))
            continue
        home = record["world"]["home"]
        if home not in plans:
            plans[home] = read_plan(run_dir, home)
        name = f"{record['episode_id']}.html"
        write_text(pages / name, episode_page(record, run_dir, plans[home]))
        written.add(name)
        rows.append(index_row(record))
        _tally_checks(tallies, record)
        passed += bool(record["passed"])
        endings[record["ended_by"]] = endings.get(record["ended_by"], 0) + 1
    _remove_stale(pages, written)
    return write_text(run_dir / "index.html", index_page(run_dir, rows, tallies, endings, passed, rejected))


def _remove_stale(pages: Path, keep: Iterable[str]) -> None:
    """Pages of episodes whose records are gone (this folder holds only the viewer's pages)."""
    keep = set(keep)
    for page in pages.glob("*.html"):
        if page.name not in keep:
            page.unlink()
