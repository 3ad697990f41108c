"""The build, stage by stage.

    source → ingest → audit → features → select → homes → usd → applicability → verify → report

Each stage is a function of a :class:`Build` (the folder, the parameters: a
:class:`homeloop.pipeline.config.BuildConfig`, the Dask client, the cache); it writes its tables under the build folder
atomically and returns a small JSON-able result (its counts). Stages are
cached by inputs and code (:mod:`homeloop.pipeline.cache`). The Prefect flow in
``homeloop/flows/`` runs the same functions as tasks; ``homeloop build`` runs that flow.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from homeloop.core.errors import HomeLoopError, user_error
from homeloop.core.ids import safe_id
from homeloop.core.io import partial_file_pattern, write_json, write_parquet
from homeloop.core.progress import console, stage_progress
from homeloop.pipeline import build_folder
from homeloop.pipeline.cache import StageCache, build_code_hash, stage_code_hash
from homeloop.pipeline.config import BuildConfig
from homeloop.core.house import HOUSE_ID

if TYPE_CHECKING:
    from homeloop.core.visuals.library import PreparedLibrary

#: Plans drawn on the preview sheet of a build (the first of the selection).
PREVIEW_SHEET_PLANS = 24
STAGES = ("source", "ingest", "audit", "features", "select", "homes", "house", "usd", "applicability", "verify",
          "report")
#: The screening the applicability stage writes and the verify stage completes into
#: applicability.parquet (hidden: the build's table is the verified one).
SCREENING_FILE = ".screening.parquet"


@dataclass
class Build:
    """A build in progress: where it writes, its cache, its Dask client, what it logged."""

    config: BuildConfig
    out: Path
    client: Any = None
    log: Callable[[str], None] = lambda msg: console.print(msg, highlight=False)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: Time spent on the work items of a stage (plans furnished, homes exported):
    #: count, total, median and 90th percentile. Timings vary from run to run,
    #: so they go to run.json, never to a table.
    work: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The files each stage wrote (its record's outputs: path → sha256), this build's outputs.
    written: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Warning lines of the build (fewer homes than asked for), also kept in the manifest.
    warnings: list[str] = field(default_factory=list)

    def warn(self, line: str) -> None:
        self.warnings.append(line)
        self.log(line)

    @cached_property
    def cache(self) -> StageCache:
        return StageCache(self.out)

    def path(self, *parts: str) -> Path:
        return self.out.joinpath(*parts)


def work_summary(seconds: list[float]) -> dict[str, float]:
    """Count, total (s), median and 90th percentile (ms) of per-item times."""
    import numpy as np

    if not seconds:
        return {"items": 0, "total_s": 0.0, "median_ms": 0.0, "p90_ms": 0.0}
    arr = np.asarray(seconds, dtype=float)
    return {"items": int(arr.size), "total_s": round(float(arr.sum()), 3),
            "median_ms": round(float(np.median(arr)) * 1000, 1), "p90_ms": round(float(np.percentile(arr, 90)) * 1000, 1)}


def ensure_writable(folder: Path) -> Path:
    """Create ``folder`` or stop with one line saying why it cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HomeLoopError(f"cannot create output folder {folder}: {exc.strerror}; choose another --out") from exc
    if not os.access(folder, os.W_OK):
        raise HomeLoopError(f"output folder {folder} is not writable; fix its permissions or choose another --out")
    return folder


def require_file(path: Path, what: str) -> Path:
    if Path(path).is_dir():
        raise HomeLoopError(f"{what} {path} is a folder; give a file")
    if not Path(path).is_file():
        raise HomeLoopError(f"{what} {path} does not exist or is not a file")
    return Path(path)


def cached_stage(build: Build, stage: str, params: dict[str, Any], inputs: list[Path],
                 run: Callable[[], tuple[list[Path], dict[str, Any]]]) -> dict[str, Any]:
    """Run ``run`` unless the cache holds this stage with the same key; record it after."""
    t = time.perf_counter()
    key = build.cache.key(stage, params, inputs, stage_code_hash(run))
    result = build.cache.lookup(stage, key)
    if result is not None:
        build.written[stage] = build.cache.recorded_outputs(stage)
        build.log(f"{stage}: unchanged, reused ({_counts_line(result)})")
    else:
        before = build.cache.recorded_outputs(stage)
        outputs, result = run()
        written = build.written[stage] = build.cache.store(stage, key, outputs, result)
        # What the stage wrote last time and no longer writes (another seed's audit pictures).
        build_folder.remove_written(build.out, {rel: h for rel, h in before.items() if rel not in written},
                                    build.cache.digest)
        build.log(f"{stage}: {_counts_line(result)}")
    build.results[stage] = result
    build.timings[stage] = time.perf_counter() - t
    return result


def _counts_line(result: dict[str, Any]) -> str:
    counts = result.get("counts")
    if not counts:
        return "done"
    line = f"{counts['in']:,} in = {counts['kept']:,} kept + {counts['rejected']:,} rejected"
    if counts.get("by_reason"):
        line += " (" + ", ".join(f"{k} {v:,}" for k, v in counts["by_reason"].items()) + ")"
    return line


def reconciled(n_in: int, kept: int, rejected: int, by_reason: dict[str, int] | None = None) -> dict[str, Any]:
    if n_in != kept + rejected:
        raise AssertionError(f"counts do not reconcile: {n_in} in != {kept} kept + {rejected} rejected")
    counts: dict[str, Any] = {"in": int(n_in), "kept": int(kept), "rejected": int(rejected)}
    if by_reason:
        counts["by_reason"] = {k: int(v) for k, v in sorted(by_reason.items())}
    return counts


# --- stand-alone jobs ------------------------------------------------------------


def run_generate(path: Path, *, plans: int, sites: int, seed: int, progress: bool = True, **kwargs):
    from homeloop.pipeline.sources import synthetic

    ensure_writable(Path(path).parent)
    with stage_progress("generate", plans, enabled=progress) as advance:
        return synthetic.generate(path, plans=plans, sites=sites, seed=seed, progress=advance, **kwargs)


#: What a source the ingest refuses should be instead.
SOURCE_HINT = "pass a Swiss Dwellings geometries.csv, or write one with `homeloop generate`"


def run_ingest(source: Path, out: Path, *, all_usages: bool = False, keep_all_floors: bool = False, progress: bool = True):
    from homeloop.pipeline import ingest as ingest_stage

    require_file(source, "source file")
    ensure_writable(Path(out))
    usages = None if all_usages else ("RESIDENTIAL",)
    try:
        total = ingest_stage.count_rows(source)
        with stage_progress("ingest", total, enabled=progress) as advance:
            return ingest_stage.ingest(source, out, usages=usages, keep_all_floors=keep_all_floors, progress=advance)
    except ingest_stage.SourceError as exc:
        raise HomeLoopError(f"{exc}; {SOURCE_HINT}") from exc


def check_source(source: Path) -> Path:
    """What would stop the ingest of ``source`` at its start, found before a build starts Prefect or
    Dask (seconds): the file is there and readable, has the columns of a geometries.csv (the
    ingest's own header check) and a row under its header. One line each."""
    from homeloop.pipeline import ingest as ingest_stage

    source = require_file(Path(source), "source file")
    try:
        ingest_stage.read_layout(source)
        if not _has_row(source):
            raise ingest_stage.SourceError(f"no plans in {source}: 0 rows read, only a header")
    except ingest_stage.SourceError as exc:
        raise HomeLoopError(f"{exc}; {SOURCE_HINT}") from exc
    return source


def _has_row(path: Path, block: int = 1 << 16) -> bool:
    """Whether anything but blank lines follows the header line (read as the ingest reads it,
    compressed or not), reading no further than the first row."""
    import pyarrow as pa

    header_done = False
    with pa.input_stream(str(path), compression="detect") as stream:
        while chunk := stream.read(block):
            if not header_done:
                newline = chunk.find(b"\n")
                if newline < 0:
                    continue
                header_done, chunk = True, chunk[newline + 1:]
            if chunk.strip():
                return True
    return False


def show_plan(plan_key: str, from_dir: Path, out: Path) -> Path:
    from homeloop.pipeline.ingest import load_plans
    from homeloop.pipeline.previews.plan import render_plan

    elements = Path(from_dir) / "elements.parquet"
    require_file(elements, "plan table")
    plans = load_plans(from_dir, keys=[plan_key])
    if not plans:
        raise HomeLoopError(f"plan {plan_key} is not in {elements}; the plan ids are in plans.parquet, column 'plan'")
    return render_plan(plans[0], out)


@dataclass
class AuditOutcome:
    table: pd.DataFrame
    per_rule: pd.DataFrame
    plans_checked: int
    plans_passed: int
    html: Path | None = None
    #: The pictures of failing plans the report drew (and no other file of its folder).
    pictures: list[Path] = field(default_factory=list)


#: Plans per partition of the audit and features stages: a partition reads its plans from the
#: plan table once, a fixed cost that many plans share, then audits them one by one.
PLANS_PER_PARTITION = 250


def run_audit(out: Path, rejected: pd.DataFrame | None, *, progress: bool = True, client: Any = None) -> AuditOutcome:
    """Audit every plan of ``out/elements.parquet`` (on the client's workers, if any)."""
    from homeloop.audits import REGISTRY
    from homeloop.pipeline import audit as audit_stage
    from homeloop.pipeline.ingest import load_plans, plan_keys
    from homeloop.pipeline.parallel import map_partitions

    keys = plan_keys(out)
    with stage_progress("audit", len(keys), enabled=progress) as advance:
        records = map_partitions(audit_stage.audit_partition, keys, str(out), REGISTRY.checked_rule_ids,
                                 client=client, partition_size=PLANS_PER_PARTITION, progress=advance)
    table = audit_stage.audit_table(records, rejected)
    audit_stage.write_audit_table(table, Path(out) / "audit.parquet")
    per_rule = audit_stage.per_rule_summary(table)
    drawn = load_plans(out, keys=audit_stage.example_plan_keys(table, set(keys)))
    html = audit_stage.write_audit_report(table, per_rule, drawn, Path(out))
    pictures = [Path(out) / audit_stage.picture_name(rule, plan.key)
                for rule, plan, _, _ in audit_stage.failing_examples(table, {p.key: p for p in drawn})]
    status = audit_stage.plan_status(table)
    return AuditOutcome(table, per_rule, len(status), int(status.sum()), html, sorted(pictures))


def run_audit_source(source: Path, out: Path, *, all_usages: bool = False, progress: bool = True) -> AuditOutcome:
    run_ingest(source, out, all_usages=all_usages, progress=progress)
    rejected = pd.read_parquet(Path(out) / "rejected.parquet")
    return run_audit(out, rejected, progress=progress)


# --- build stages -------------------------------------------------------------------


def generated_source(out: Path) -> Path:
    """Where a build without ``--source`` writes the plans it generates."""
    return Path(out) / "source" / "geometries.csv"


def stage_source(build: Build) -> Path:
    cfg = build.config
    if cfg.source is not None:
        source = require_file(Path(cfg.source), "source file")
        build.results["source"] = {"path": str(source)}
        return source
    target = generated_source(build.out)

    def run():
        report = run_generate(target, plans=cfg.plans, sites=cfg.sites, seed=cfg.seed, progress=cfg.progress)
        sidecar = target.with_name(target.stem + ".defects.csv")
        outputs = [target] + ([sidecar] if sidecar.exists() else [])
        return outputs, {"path": str(target), "rows": report.rows, "plans": report.plans, "defects": dict(report.defects)}

    cached_stage(build, "source", {"plans": cfg.plans, "sites": cfg.sites, "seed": cfg.seed}, [], run)
    return target


#: How a build reads its source (``homeloop ingest`` defaults): residential units,
#: the lowest floor of a repeated layout.
BUILD_INGEST_OPTIONS = {"all_usages": False, "keep_all_floors": False}


def stage_ingest(build: Build, source: Path) -> dict[str, Any]:
    def run():
        summary = run_ingest(source, build.out, progress=build.config.progress, **BUILD_INGEST_OPTIONS)
        counts = reconciled(summary.rows_in, summary.rows_used, summary.rows_rejected, summary.rejected_by_reason)
        plans = reconciled(summary.plans + summary.plans_rejected, summary.plans, summary.plans_rejected)
        outputs = [build.path(n) for n in ("plans.parquet", "elements.parquet", "rejected.parquet")]
        return outputs, {"counts": counts, "plans": plans}

    result = cached_stage(build, "ingest", dict(BUILD_INGEST_OPTIONS), [source], run)
    if not result["plans"]["kept"]:
        rows = result["counts"]
        reasons = ", ".join(f"{k} {v:,}" for k, v in rows.get("by_reason", {}).items())
        raise HomeLoopError(
            f"no plans in {source}: {rows['in']:,} rows read, {rows['rejected']:,} rejected"
            + (f" ({reasons}; see {build.path('rejected.parquet')})" if reasons else "")
            + "; pass a Swiss Dwellings geometries.csv with residential apartments"
        )
    return result


def stage_audit(build: Build) -> dict[str, Any]:
    inputs = [build.path("elements.parquet"), build.path("rejected.parquet")]

    def run():
        rejected = pd.read_parquet(build.path("rejected.parquet"))
        outcome = run_audit(build.out, rejected, progress=build.config.progress, client=build.client)
        by_rule = {r.rule: int(r.failed) for r in outcome.per_rule.itertuples(index=False) if r.failed}
        counts = reconciled(outcome.plans_checked, outcome.plans_passed, outcome.plans_checked - outcome.plans_passed, by_rule)
        outputs = [build.path("audit.parquet"), build.path("audit.html"), *outcome.pictures]
        return outputs, {"counts": counts}

    return cached_stage(build, "audit", {}, inputs, run)


def stage_features(build: Build) -> dict[str, Any]:
    from homeloop.pipeline.features import features_frame, features_partition
    from homeloop.pipeline.ingest import plan_keys
    from homeloop.pipeline.parallel import map_partitions

    def run():
        rows = map_partitions(features_partition, plan_keys(build.out), str(build.out),
                              client=build.client, partition_size=PLANS_PER_PARTITION)
        table = features_frame(rows)
        write_parquet(build.path("features.parquet"), table)
        return [build.path("features.parquet")], {"plans": len(table)}

    return cached_stage(build, "features", {}, [build.path("elements.parquet")], run)


def stage_select(build: Build) -> dict[str, Any]:
    from homeloop.pipeline.audit import plan_status
    from homeloop.pipeline.diversity import diversity_report, write_diversity_report
    from homeloop.pipeline.select import select

    cfg = build.config
    # elements.parquet: the plans drawn on the preview sheet.
    inputs = [build.path("features.parquet"), build.path("audit.parquet"), build.path("elements.parquet")]

    def run():
        table = pd.read_parquet(build.path("features.parquet"))
        status = plan_status(pd.read_parquet(build.path("audit.parquet")))
        passing = table[table["plan"].map(status).fillna(False).astype(bool)].reset_index(drop=True)
        with stage_progress("select", len(passing), enabled=cfg.progress) as advance:
            selection = select(passing, seed=cfg.seed)
            advance(len(selection))
        write_parquet(build.path("selection.parquet"), selection)
        report = diversity_report(passing, selection.head(cfg.homes), seed=cfg.seed)
        written = write_diversity_report(report, build.out)
        sheet = []
        if len(selection):
            from homeloop.pipeline.ingest import load_plans
            from homeloop.pipeline.previews.plan import render_sheet

            keys = list(selection["plan"].head(PREVIEW_SHEET_PLANS))
            by_key = {p.key: p for p in load_plans(build.out, keys=keys)}
            sheet = [render_sheet([by_key[k] for k in keys], build.path("previews", "selection_sheet.png"),
                                  title=f"{cfg.name}: first {len(keys)} selected plans")]
        counts = reconciled(len(passing), len(selection), len(passing) - len(selection))
        return [build.path("selection.parquet"), *written, *sheet], {"counts": counts}

    result = cached_stage(build, "select", {"seed": cfg.seed, "homes": cfg.homes}, inputs, run)
    if not result["counts"]["kept"]:
        audited = build.results.get("audit", {}).get("counts", {}).get("in", 0)
        raise HomeLoopError(f"none of the {audited:,} plans passes the audit, so there is nothing to furnish; "
                            f"see {build.path('audit.html')} for why")
    return result


def stage_homes(build: Build) -> dict[str, Any]:
    """Furnish, equip and verify plans in selection order until ``homes`` pass."""
    from homeloop.audits import AUDIT_COLUMNS
    from homeloop.pipeline.homes import build_homes_partition
    from homeloop.pipeline.parallel import map_partitions_until

    cfg = build.config
    inputs = [build.path("selection.parquet"), build.path("elements.parquet")]
    params = {"seed": cfg.seed, "homes": cfg.homes} | cfg.catalog_parameters()
    homes_dir = build.path("homes")

    def run():
        # Plan keys name each home's folder and outcome file: each is a safe id first.
        order = [safe_id(plan, "home", build.path("selection.parquet"))
                 for plan in pd.read_parquet(build.path("selection.parquet"))["plan"]]
        key = build.cache.key("homes-work", params, inputs, stage_code_hash(run))
        with stage_progress("homes", cfg.homes, enabled=cfg.progress) as advance:
            built = map_partitions_until(build_homes_partition, order, str(build.out), cfg.seed, key, None, True,
                                         cfg.catalog_parts(), wanted=lambda record: record["kept"], count=cfg.homes,
                                         client=build.client, partition_size=25, progress=advance)
        outcomes: list[dict[str, Any]] = []
        kept = 0
        for record in built:
            if kept >= cfg.homes:
                break
            outcomes.append(record)
            kept += bool(record["kept"])
        kept_ids = [o["plan"] for o in outcomes if o["kept"]]
        # Homes built beyond the last one needed (the tail of the last partition), and those of
        # another seed or of a killed run, are not part of the set.
        remove_unkept_homes(build.out, set(kept_ids))
        build.work["homes"] = work_summary([o["seconds"] for o in outcomes])
        table = pd.DataFrame.from_records(
            [{k: v for k, v in o.items() if k not in ("findings", "seconds")} | {"rank": i + 1}
             for i, o in enumerate(outcomes)]
        )
        write_parquet(build.path("homes.parquet"), table)
        findings = [
            {"plan": o["plan"], "rule": f["rule"], "passed": False, "element": f["element"], "message": f["message"]}
            for o in outcomes for f in o["findings"]
        ]
        findings_table = pd.DataFrame.from_records(findings, columns=list(AUDIT_COLUMNS))
        write_parquet(build.path("home_findings.parquet"), findings_table)
        rejected = table[~table["kept"]] if len(table) else table
        counts = reconciled(len(table), kept, len(rejected),
                            rejected["reason"].value_counts().to_dict() if len(rejected) else {})
        outputs = [build.path("homes.parquet"), build.path("home_findings.parquet")]
        for home_id in kept_ids:
            outputs += [homes_dir / home_id / "home.json", homes_dir / home_id / "preview.png"]
        return outputs, {"counts": counts, "homes": kept_ids}

    result = cached_stage(build, "homes", params, inputs, run)
    if result["counts"]["kept"] < cfg.homes:
        build.warn(short_homes_line(result["counts"], cfg.homes))
    return result


def short_homes_line(counts: dict[str, Any], asked: int) -> str:
    """The warning of a build that made fewer homes than ``--homes`` asked for: the selection ran out."""
    return (f"warning: made {counts['kept']:,} of the {asked:,} homes asked for (--homes): every one of the "
            f"selection's {counts['in']:,} plans was tried ({counts['rejected']:,} could not be furnished or failed "
            "the home check); more plans (--plans, or a larger --source) give more homes")


def remove_unkept_homes(out: Path, keep: set[str]) -> list[str]:
    """Delete the home files the homes work wrote (each named, with its hash, in the plan's outcome
    record under ``homes/.outcomes/``) of plans not in ``keep``; other files in homes/ are not the
    build's and stay."""
    import json

    from homeloop.pipeline.homes import OUTCOMES

    files: dict[str, str] = {}
    for record in sorted((Path(out) / "homes" / OUTCOMES).glob("[!.]*.json")):
        if record.stem in keep:
            continue
        try:
            written = json.loads(record.read_text()).get("files", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(written, dict):
            files.update({f"homes/{record.stem}/{name}": h for name, h in written.items()
                          if isinstance(name, str) and "/" not in name and name not in (".", "..")})
    return build_folder.remove_written(out, files)


def stage_house(build: Build) -> dict[str, Any]:
    """The hand-designed house (docs/pipeline.md), furnished from its own file, equipped and checked."""
    from homeloop.core.catalog import load_catalog
    from homeloop.pipeline.houses import house_home
    from homeloop.pipeline.previews.home import render_home

    def run():
        home = house_home(load_catalog(optional=build.config.catalog_parts()))
        folder = build.path("homes", HOUSE_ID)
        home.write(folder / "home.json")
        render_home(home, folder / "preview.png", title="The house")
        return [folder / "home.json", folder / "preview.png"], {"home": HOUSE_ID}

    return cached_stage(build, "house", build.config.catalog_parameters(), [], run)


def stage_usd(build: Build, home_ids: list[str]) -> dict[str, Any]:
    """One USD asset per catalog entry, then every home (and the house) as USD, validated."""
    from homeloop.core.catalog import load_catalog
    from homeloop.pipeline.homes import export_homes_partition
    from homeloop.pipeline.parallel import map_partitions
    from homeloop.core.visuals.library import library_folder, load_library
    from homeloop.pipeline.usd import write_catalog_assets

    cfg = build.config
    ids = [HOUSE_ID, *home_ids]
    inputs = [build.path("homes", h, "home.json") for h in ids]
    own = check_assets(cfg)
    for line in own.lines() if own is not None else []:
        build.warn(f"warning: {line}; drawn with its built-in visual (--assets-fallback)")

    def run():
        library = write_own_assets(own, build.out)
        catalog = load_catalog(optional=cfg.catalog_parts())
        assets = write_catalog_assets(catalog, build.path("assets"), load_library(library_folder(build.out)))
        with stage_progress("usd", len(ids), enabled=cfg.progress) as advance:
            records = map_partitions(export_homes_partition, ids, str(build.out), cfg.usda, None,
                                     cfg.catalog_parts(), client=build.client, partition_size=50, progress=advance)
        table = pd.DataFrame.from_records(records)
        build.work["usd"] = work_summary(list(table.pop("seconds")) if len(table) else [])
        write_parquet(build.path("usd.parquet"), table)
        invalid = table[~table["valid"]]
        for r in invalid.itertuples(index=False):
            build.log(f"usd: {r.home} fails validation: {r.errors}")
        counts = reconciled(len(table), len(table) - len(invalid), len(invalid),
                            {"validation_errors": len(invalid)} if len(invalid) else None)
        outputs = [build.path("usd.parquet"), *library, *assets.values(), *(build.path(f) for f in table["file"])]
        return outputs, {"counts": counts, "valid": sorted(table.loc[table["valid"], "home"])}

    params = {"usda": cfg.usda, "homes": ids} | ({"assets": cfg.assets_parameters()} if own is not None else {}) \
        | cfg.catalog_parameters()
    return cached_stage(build, "usd", params, inputs, run)


def check_assets(config: BuildConfig) -> PreparedLibrary | None:
    """The ``--assets`` mapping read and fitted (:mod:`homeloop.core.visuals.library`; None without
    one); a rejected mapping stops the build, one line each, unless ``--assets-fallback``."""
    if config.assets is None:
        return None
    from homeloop.core.catalog import load_catalog
    from homeloop.core.visuals.library import prepare_library

    prepared = prepare_library(Path(config.assets), load_catalog())
    if prepared.rejected and not config.assets_fallback:
        raise HomeLoopError("\n".join(prepared.lines()) + "; fix the file or its mapping, or pass --assets-fallback "
                            "to draw the built-in visual where an asset cannot be used")
    return prepared


def write_own_assets(prepared: PreparedLibrary | None, out: Path) -> list[Path]:
    """Write the fitted assets into the build (``assets/external``: read by every episode on it);
    nothing without ``--assets``."""
    from homeloop.core.visuals.library import library_folder, write_library

    return write_library(prepared, library_folder(out)) if prepared is not None else []


def stage_applicability(build: Build, home_ids: list[str]) -> dict[str, Any]:
    """Which tasks apply to which home for which robot body, screened from requirements
    (written to SCREENING_FILE; the verify stage completes it into applicability.parquet)."""
    from homeloop.pipeline.applicability import screen_homes_partition
    from homeloop.pipeline.parallel import map_partitions

    cfg = build.config
    ids = [HOUSE_ID, *home_ids]
    inputs = [build.path("homes", h, "home.json") for h in ids]

    def run():
        with stage_progress("applicability", len(ids), enabled=cfg.progress) as advance:
            rows = map_partitions(screen_homes_partition, ids, str(build.out),
                                  client=build.client, partition_size=100, progress=advance)
        table = pd.DataFrame.from_records(rows)
        written = write_parquet(build.path(SCREENING_FILE), table)
        share = float(table.loc[table["home"] != HOUSE_ID, "applicable"].mean()) if len(table) > 1 else 0.0
        return [written], {"rows": len(table), "applicable_share": round(share, 4)}

    return cached_stage(build, "applicability", {"homes": ids}, inputs, run)


def stage_verify(build: Build, home_ids: list[str]) -> dict[str, Any]:
    """Play every screened-applicable pair of the verified homes and bodies with the scripted
    reference agent; write applicability.parquet with verified and verify_reason (docs/pipeline.md)."""
    from homeloop.pipeline.applicability import write_applicability
    from homeloop.pipeline.parallel import map_partitions
    from homeloop.pipeline.verify_pairs import (HOMES_PER_PARTITION, home_keys, verified_table, verify_counts,
                                                verify_homes_partition, verify_plan)

    cfg = build.config
    settings = cfg.verify_settings()
    screened_at = build.path(SCREENING_FILE)
    inputs = [screened_at, *(build.path("homes", h, "home.json") for h in [HOUSE_ID, *home_ids])]

    def run():
        screened = pd.read_parquet(screened_at)
        work = verify_plan(screened, settings, cfg.seed)
        keys = home_keys(build.out, work, settings.seeds)
        with stage_progress("verify", len(work), enabled=cfg.progress) as advance:
            rows = map_partitions(verify_homes_partition, list(work), str(build.out), work, list(settings.seeds),
                                  keys, client=build.client, partition_size=HOMES_PER_PARTITION, progress=advance)
        build.work["verify"] = work_summary([r["seconds"] for r in rows])
        table = verified_table(screened, rows, settings)
        written = write_applicability(table, build.out)
        played, verified, by_kind = verify_counts(table)
        counts = reconciled(played, verified, played - verified, by_kind)
        return list(written), {"counts": counts, "homes": len(work), "settings": settings.parameters()}

    return cached_stage(build, "verify", {"settings": settings.parameters(), "seed": cfg.seed}, inputs, run)


def stage_report(build: Build) -> dict[str, Any]:
    from homeloop.pipeline.report import write_report

    def run():
        paths = write_report(build.out, build.config.name, {k: v for k, v in build.results.items()})
        return paths, {"report": paths[0].name}

    inputs = [build.path(n) for n in ("homes.parquet", "usd.parquet", "applicability.parquet",
                                      "applicability_summary.parquet", "selection_report.json", "audit.parquet")]
    inputs.append(build.path("homes", HOUSE_ID, "home.json"))  # the gallery draws its cameras
    params = {"name": build.config.name, "results": build.results}
    return cached_stage(build, "report", params, inputs, run)


def run_build(config: BuildConfig, *, runner: Callable[[str, Callable[[], Any]], Any] | None = None,
              log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run every stage of a build; ``runner(name, fn)`` wraps each stage (the Prefect flow
    passes one that makes each a task).

    The build holds its folder's lock throughout (:mod:`homeloop.pipeline.lock`): a
    second build into the same folder stops at once. File-system errors a user can
    fix (a full disk, no permission) stop it with one line naming the folder."""
    from homeloop.pipeline.lock import build_lock
    from homeloop.pipeline.parallel import dask_client

    config.verify_settings().check()  # a bad body or seed list stops the build before any work
    check_inputs(config)
    # Absolute, so that workers of a Dask cluster started elsewhere write to the same folder.
    out = own_folder(config.out_dir).resolve()
    say = log or (lambda msg: console.print(msg, highlight=False))
    runner = runner or (lambda name, fn: fn())

    def run_stage(name: str, fn: Callable[[], Any]) -> Any:
        return runner(name, lambda: as_user_errors(fn, out))

    with build_lock(out, warn=say):
        as_user_errors(lambda: build_folder.claim(out), out)  # the first thing it writes there
        as_user_errors(lambda: build_folder.remove_partial_files(out), out)
        with dask_client(config.dask_address, workers=config.workers) as client:
            build = Build(config, out, client=client)
            build.log = say
            source = run_stage("source", lambda: stage_source(build))
            run_stage("ingest", lambda: stage_ingest(build, source))
            run_stage("audit", lambda: stage_audit(build))
            run_stage("features", lambda: stage_features(build))
            run_stage("select", lambda: stage_select(build))
            homes = [safe_id(h, "home") for h in run_stage("homes", lambda: stage_homes(build))["homes"]]
            run_stage("house", lambda: stage_house(build))
            built = run_stage("usd", lambda: stage_usd(build, homes))["valid"]
            built_homes = [h for h in homes if h in set(built)]
            run_stage("applicability", lambda: stage_applicability(build, built_homes))
            run_stage("verify", lambda: stage_verify(build, built_homes))
            run_stage("report", lambda: stage_report(build))
            return as_user_errors(lambda: write_manifest(build, source), out)


def as_user_errors(fn: Callable[[], Any], out: Path) -> Any:
    """``fn()``, with a file-system error the user can fix (see homeloop.core.errors) raised
    as a one-line :class:`HomeLoopError` about build folder ``out``."""
    try:
        return fn()
    except OSError as exc:
        error = user_error(exc, out)
        if error is None:
            raise
        raise error from None


def check_inputs(config: BuildConfig) -> None:
    """What stops a build on its inputs, before it starts Prefect, Dask or a stage: a ``--source``
    the ingest would refuse at its start, an ``--assets`` file that cannot be used (without
    ``--assets-fallback``), an ``--out`` that is no build folder (one line each)."""
    from homeloop.pipeline.lock import LOCK_FILE

    if config.source is not None:
        check_source(Path(config.source))
    check_assets(config)
    build_folder.check_owned(config.out_dir, ignore=(LOCK_FILE,))


def own_folder(folder: Path) -> Path:
    """Build folder ``folder``, created if missing, once it is known to be empty or a build's
    (:mod:`homeloop.pipeline.build_folder`); the build marks it as its own under the lock."""
    from homeloop.pipeline.lock import LOCK_FILE

    build_folder.check_owned(folder, ignore=(LOCK_FILE,))
    return ensure_writable(folder)


#: Temporary files of any atomic write (homeloop.core.io.atomic_path); a build removes only those
#: named with its folder's token (build_folder.remove_partial_files).
PARTIAL_FILE = partial_file_pattern()


def package_versions() -> dict[str, str]:
    from importlib import metadata

    names = ["homeloop", "shapely", "networkx", "numpy", "pandas", "pyarrow", "geopandas", "scikit-learn",
             "matplotlib", "usd-core", "pydantic", "prefect", "dask"]
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover
            versions[name] = "missing"
    return versions


def build_outputs(build: Build) -> dict[str, str]:
    """The outputs of the build (relative path → sha256, in path order): the files its stages
    recorded writing, less the generated source (an input, hashed under ``inputs``) and hidden
    working files (the screening the verify stage completes). Nothing else in the folder is the
    build's: ``homeloop verify`` reports it."""
    files = {rel: digest for stage, written in build.written.items() if stage != "source"
             for rel, digest in written.items() if not any(part.startswith(".") for part in Path(rel).parts)}
    return dict(sorted(files.items()))


def write_manifest(build: Build, source: Path) -> dict[str, Any]:
    counts = {stage: r["counts"] for stage, r in build.results.items() if "counts" in r}
    if "ingest" in build.results:
        counts = {"rows": build.results["ingest"]["counts"], "plans": build.results["ingest"]["plans"],
                  **{k: v for k, v in counts.items() if k != "ingest"}}
    manifest = {
        "build": build.config.name,
        "out": str(build.out),
        "seed": build.config.seed,
        "parameters": build.config.parameters(),
        "inputs": {"source": {"path": source.name, "sha256": build.cache.digest(source)}},
        "versions": package_versions(),
        "code": build_code_hash(),
        "counts": counts,
        "outputs": build_outputs(build),
        # What was asked for and made (a source can give fewer homes than --homes), and the warnings.
        "homes": {"asked": build.config.homes,
                  "made": build.results.get("homes", {}).get("counts", {}).get("kept", 0)},
        "warnings": list(build.warnings),
    }
    write_json(build.path("manifest.json"), manifest)
    write_json(build.path("run.json"), {"timings_s": {k: round(v, 3) for k, v in build.timings.items()},
                                        "work": build.work,
                                        "finished_unix": round(time.time(), 1)})
    return manifest
