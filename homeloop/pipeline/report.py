"""``report.html``: one static page per build — stage counts, diversity plots,
device and camera statistics, task applicability (per robot body, and the share
of homes each task applies to), screened against verified pairs (per robot body,
per task, and the commonest reasons a screened pair fails, docs/pipeline.md),
and a gallery of homes linked to their files, led by a contact sheet of what the agent's cameras
see in the first homes (:data:`SHEET_HOMES`; ``homes/<home>/cameras.png``, drawn by
:mod:`homeloop.sim.render.sheet` and written atomically beside the home's preview)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from homeloop.core.io import write_bytes, write_text

#: Homes shown in the gallery (the first of the selection order).
GALLERY_HOMES = 48
#: Homes of the gallery, from its first (the house), that show a contact sheet of their agent cameras:
#: each sheet sets up a renderer for its home, so the report draws only the house's.
SHEET_HOMES = 1
#: A contact sheet's file in its home's folder.
SHEET_FILE = "cameras.png"
#: Width at which the page shows a contact sheet (pixels; the link opens it at full size).
SHEET_WIDTH_PX = 960
#: Reasons listed among the commonest a screened pair fails for.
TOP_REASONS = 12
DIVERSITY_PLOTS = ("selection_groups.png", "selection_nn_distance.png", "selection_site_share.png")


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _stage_rows(results: dict[str, dict[str, Any]]) -> list[list[Any]]:
    rows = []
    labels = {"ingest": "rows (ingest)", "audit": "plans (audit)", "select": "plans (selection)",
              "homes": "plans (furnish, equip, check)", "usd": "homes (USD export)",
              "verify": "pairs played (verify: kept = passed)"}
    for stage, result in results.items():
        counts = result.get("counts")
        if stage == "ingest":
            rows.append(["plans (ingest)", result["plans"]["in"], result["plans"]["kept"], result["plans"]["rejected"], ""])
        if counts:
            reasons = ", ".join(f"{k}: {v:,}" for k, v in counts.get("by_reason", {}).items())
            rows.append([labels.get(stage, stage), counts["in"], counts["kept"], counts["rejected"], reasons])
    return rows


def _stats(series: pd.Series) -> list[Any]:
    if series.empty:
        return [0, 0, 0, 0.0]
    return [int(series.min()), float(series.median()), int(series.max()), float(series.mean())]


def _verify_sections(build: Path, result: dict[str, Any]) -> list[str]:
    """Screened against verified pairs: per robot body, per task, and the commonest reasons
    a screened pair fails (the verify stage, docs/pipeline.md)."""
    from homeloop.pipeline.verify_pairs import played_pairs

    path = build / "applicability.parquet"
    if not path.exists():
        return []
    table = pd.read_parquet(path)
    if "verified" not in table.columns:
        return []
    out = ["<h2>Verified pairs: screened, and passed by the scripted reference agent</h2>"]
    settings = result.get("settings")
    if not settings:
        return out + ["<p>Not verified: this build was made with <code>--no-verify</code>.</p>"]
    played = played_pairs(table)
    homes = "every home" if settings["homes"] is None else f"the house and a sample of {settings['homes']:,} homes"
    out.append(f"<p>The scripted reference agent played every pair screened applicable for "
               f"{html.escape(', '.join(settings['robots']))} at seed(s) {', '.join(map(str, settings['seeds']))}, in "
               f"{homes} ({played['home'].nunique():,} played); a pair counts for evaluation only where it passed "
               "at every seed.</p>")
    rows = []
    for robot, group in table.groupby("robot", sort=True):
        mine = played[played["robot"] == robot]
        rows.append([robot, int(group["applicable"].sum()), len(mine), int(mine["verified"].sum()),
                     _share(mine["verified"])])
    out.append(_table(["robot", "screened (all homes)", "played", "verified", "verified share of played"], rows))
    out.extend(_gap_section(table))
    out.extend(_reason_section(played[~played["verified"]]))
    return out


def _gap_section(table: pd.DataFrame) -> list[str]:
    """Per task, the pairs screened and those verified, and the gap: screening should predict the
    verify stage; a task whose gap passes the goal shows its commonest reason."""
    from homeloop.pipeline.verify_pairs import GAP_GOAL, task_gaps

    gaps = task_gaps(table)
    rows = [[g.task, g.family, g.screened, g.verified, g.gap, f"{g.gap_share:.1%}",
             g.reason if g.over_goal else ""] for g in gaps.itertuples()]
    over = int(gaps["over_goal"].sum())
    note = (f"<p>Every task's gap is within {GAP_GOAL:.0%} of its screened pairs.</p>" if not over else
            f"<p>{over} task(s) fail more than {GAP_GOAL:.0%} of their screened pairs: the reason column says "
            "why (the commonest).</p>")
    return ["<h3>Screened against verified, per task</h3>",
            _table(["task", "family", "screened", "verified", "gap", "gap share", f"why (gap over {GAP_GOAL:.0%})"],
                   rows), note]


def _task_share_section(build: Path) -> list[str]:
    """Per task, the share of generated homes (the house left out) it applies to, per robot
    body: what the homes have (rooms, devices, furniture, objects) sets them apart."""
    path = build / "applicability.parquet"
    if not path.exists():
        return []
    table = pd.read_parquet(path, columns=["home", "task", "family", "extension", "robot", "applicable"])
    table = table[table["home"] != "house"]
    if table.empty:
        return []
    robots = sorted(table["robot"].unique())
    shares = table.groupby(["task", "robot"], sort=False)["applicable"].mean()
    rows = [[task, group["family"].iloc[0] + (" (extension)" if group["extension"].iloc[0] else ""),
             *(f"{shares[(task, r)]:.0%}" for r in robots)]
            for task, group in table.groupby("task", sort=False)]
    homes = table["home"].nunique()
    return [f"<h3>Share of the {homes:,} homes each task applies to</h3>", _table(["task", "family", *robots], rows)]


def _share(flags: pd.Series) -> str:
    """The share of true flags as a percentage to a tenth, rounded down: a share short of all never
    reads 100 %."""
    if not len(flags):
        return ""
    tenths = 1000 * int(flags.sum()) // len(flags)  # in whole numbers: a float product may fall short
    return f"{tenths // 10}.{tenths % 10}%"


def _reason_section(failed: pd.DataFrame) -> list[str]:
    from homeloop.pipeline.verify_pairs import reason_key

    if failed.empty:
        return ["<p>Every pair played passed.</p>"]
    keyed = failed.assign(key=[reason_key(r, h) for r, h in zip(failed["verify_reason"], failed["home"])])
    rows = []
    for key, group in sorted(keyed.groupby("key"), key=lambda kv: (-len(kv[1]), kv[0]))[:TOP_REASONS]:
        tasks = group["task"].value_counts()
        first = group.iloc[0]
        rows.append([key, len(group), ", ".join(f"{t} ({n})" for t, n in tasks.head(3).items()),
                     f"{first['home']}, {first['task']}: {first['verify_reason']}"])
    return [f"<h3>Why screened pairs fail (the {len(rows)} commonest of {keyed['key'].nunique():,} reasons)</h3>",
            _table(["reason", "pairs", "tasks", "for example"], rows)]


def write_report(build_dir: Path, name: str, results: dict[str, dict[str, Any]]) -> list[Path]:
    """Write ``report.html`` and the gallery's contact sheets; the files written, the page first."""
    build = Path(build_dir)
    sheets: list[Path] = []
    sections = [f"<h1>HomeLoop build <code>{html.escape(name)}</code></h1>"]

    sections.append("<h2>Stages</h2><p>Every stage reconciles: in = kept + rejected.</p>")
    sections.append(_table(["stage", "in", "kept", "rejected", "rejected by reason"], _stage_rows(results)))

    report_json = build / "selection_report.json"
    if report_json.exists():
        diversity = json.loads(report_json.read_text())
        sections.append("<h2>Diversity: selection vs a random sample of the same size</h2>")
        rows = []
        for label in ("selected", "random"):
            d = diversity["sets"].get(label, {})
            nn = d.get("nn_distance", {})
            rows.append([label, d.get("size", ""), d.get("groups_covered", ""), d.get("max_site_share", ""),
                         d.get("distinct_hash_share", ""), nn.get("median", "")])
        sections.append(_table(["set", "plans", "groups", "max site share", "distinct WL hashes", "median NN L1"], rows))
        sections.append("".join(f'<img src="{p}" width="480">' for p in DIVERSITY_PLOTS if (build / p).exists()))

    homes_path = build / "homes.parquet"
    if homes_path.exists():
        homes = pd.read_parquet(homes_path)
        kept = homes[homes["kept"]]
        sections.append("<h2>Devices and cameras per home</h2>")
        rows = [[label, *_stats(kept[col])] for label, col in (
            ("rooms", "rooms"), ("indoor area m²", "indoor_area_m2"), ("devices", "devices"),
            ("devices the agent can query", "agent_devices"), ("cameras", "cameras"),
            ("agent cameras", "agent_cameras"), ("furniture", "furniture"), ("objects", "objects"))]
        sections.append(_table(["per home", "min", "median", "max", "mean"], rows))

        usd = pd.read_parquet(build / "usd.parquet") if (build / "usd.parquet").exists() else None
        summary_path = build / "applicability_summary.parquet"
        if summary_path.exists():
            summary = pd.read_parquet(summary_path)
            others = summary[summary["home"] != "house"]
            sections.append("<h2>Task applicability per robot body (20 core tasks)</h2>")
            rows = [[robot, float(g["applicable_count"].median()), float(g["applicable_count"].mean() / 20)]
                    for robot, g in others.groupby("robot", sort=True)]
            sections.append(_table(["robot", "median applicable tasks per home", "applicable share"], rows))
        sections.extend(_task_share_section(build))

        sections.extend(_verify_sections(build, results.get("verify", {})))
        gallery, sheets = _gallery(build, list(kept["plan"].head(GALLERY_HOMES)), len(kept), usd)
        sections.extend(gallery)

    page = (
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>HomeLoop build "
        f"{html.escape(name)}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1400px}}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}figure{display:inline-block;width:300px;margin:6px;"
        "vertical-align:top;font-size:12px}figure.sheet{display:block;width:auto}</style></head><body>\n"
        + "\n".join(sections)
        + "\n</body></html>\n"
    )
    return [write_text(build / "report.html", page), *sheets]


def _gallery(build: Path, shown: list[str], kept: int, usd: pd.DataFrame | None) -> tuple[list[str], list[Path]]:
    """The gallery of the house and the ``shown`` homes (of ``kept``): the contact sheets of the first
    :data:`SHEET_HOMES`, then each home's preview linked to its files; and the sheets written."""
    out, home_ids = [f"<h2>Homes (first {len(shown)} of {kept:,})</h2>"], ["house", *shown]
    sheets = [sheet for home_id in home_ids[:SHEET_HOMES] if (sheet := write_camera_sheet(build, home_id))]
    for sheet in sheets:
        rel = sheet.relative_to(build).as_posix()
        home_id = sheet.parent.name
        out.append(f'<figure class="sheet"><a href="{html.escape(rel)}"><img src="{html.escape(rel)}" '
                   f'width="{SHEET_WIDTH_PX}"></a><figcaption>{html.escape(home_id)}: every camera the agent may '
                   "use, the home as built</figcaption></figure>")
    out.append("<div>")
    for home_id in home_ids:
        folder = f"homes/{home_id}"
        if not (build / folder / "preview.png").exists():
            continue
        usd_link = ""
        if usd is not None:
            match = usd[usd["home"] == home_id]
            if len(match):
                usd_link = f' · <a href="{html.escape(match["file"].iloc[0])}">USD</a>'
        out.append(
            f'<figure><a href="{folder}/preview.png"><img src="{folder}/preview.png" width="300"></a>'
            f'<figcaption>{html.escape(home_id[:40])}<br><a href="{folder}/home.json">home.json</a>{usd_link}'
            "</figcaption></figure>"
        )
    out.append("</div>")
    return out, sheets


def write_camera_sheet(build: Path, home_id: str) -> Path | None:
    """Write the contact sheet of ``home_id``'s agent cameras (the home as built) into its folder; None
    when the folder holds no home file or the home has no camera the agent may use."""
    from homeloop.core.home import Home
    from homeloop.sim.render.sheet import NoCameras, render_sheet

    folder = build / "homes" / home_id
    if not (folder / "home.json").is_file():
        return None
    try:
        sheet = render_sheet(Home.read(folder / "home.json"))
    except NoCameras:
        return None
    return write_bytes(folder / SHEET_FILE, sheet.png())
