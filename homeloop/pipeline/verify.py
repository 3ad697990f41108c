"""``homeloop verify BUILD_DIR``: does a build folder still hold what its manifest says?

Checks, each problem one line:

* every file ``manifest.json`` lists is there with the sha256 it lists, and
  every other file in the folder is one a recorded stage wrote (``.stages/``)
  or the build's bookkeeping: a file no stage of the build wrote is stale (left
  by older code) or someone else's, and is reported;
* the counts of every stage reconcile (in = kept + rejected; rejections by
  reason add up) and agree with the tables (homes.parquet, usd.parquet,
  selection.parquet, plans.parquet, audit.parquet);
* every kept home, and the house, has its home.json, preview.png and USD file;
* applicability.parquet has one row for every home × task × robot body (the
  homes exported to valid USD, the tasks and bodies of this installation).

A folder without a readable manifest is unusable (:class:`UnusableBuild`). See
docs/pipeline.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from homeloop.core.errors import HomeLoopError
from homeloop.core.io import sha256_file
from homeloop.core.house import HOUSE_ID
from homeloop.pipeline.build_folder import MANIFEST

RUN_FILE = "run.json"
#: Tables whose row counts the manifest's counts must match.
TABLES = ("homes.parquet", "usd.parquet", "selection.parquet", "plans.parquet", "audit.parquet",
          "applicability.parquet")


class UnusableBuild(HomeLoopError):
    """Not a build folder, or one whose manifest cannot be read."""


@dataclass
class Verification:
    """What was checked and what is wrong, one line per problem."""

    build: Path
    files_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def load_manifest(build: Path) -> dict[str, Any]:
    build = Path(build)
    if not build.is_dir():
        raise UnusableBuild(f"{build} is not a folder; give a build folder (the --out of `homeloop build`)")
    path = build / MANIFEST
    if not path.is_file():
        raise UnusableBuild(f"{build} has no {MANIFEST}: not a finished build; run `homeloop build --out {build}`")
    try:
        manifest = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnusableBuild(f"{path} cannot be read ({exc.__class__.__name__}); rebuild to write it again") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("outputs"), dict):
        raise UnusableBuild(f"{path} lists no outputs; rebuild to write it again")
    return manifest


def up_to_date(config: Any) -> dict[str, Any] | None:
    """The manifest of the finished build in ``config``'s folder when running it again would change
    nothing, else None: same parameters, code (:func:`homeloop.pipeline.cache.build_code_hash`),
    library versions and source bytes, and every output on disk with the bytes the manifest lists
    and no other. Every stage key is then what it was, so ``homeloop build`` can say so and stop
    without starting Prefect, a Dask cluster or any stage (docs/pipeline.md). Partial files a killed
    write left behind are removed, as a run would."""
    from homeloop.pipeline.cache import build_code_hash
    from homeloop.pipeline.build_folder import remove_partial_files
    from homeloop.pipeline.stages import generated_source, package_versions

    build = Path(config.out_dir)
    try:
        manifest = load_manifest(build)
    except UnusableBuild:
        return None
    source = Path(config.source) if config.source is not None else generated_source(build)
    recorded = manifest.get("inputs", {}).get("source", {})
    same = (manifest.get("parameters") == json.loads(json.dumps(config.parameters()))
            and manifest.get("code") == build_code_hash() and manifest.get("versions") == package_versions()
            and source.is_file() and recorded == {"path": source.name, "sha256": sha256_file(source)})
    if not same:
        return None
    remove_partial_files(build)
    result = Verification(build)
    check_files(result, manifest)
    return manifest if result.ok and _stage_records_intact(build, manifest) else None


def _stage_records_intact(build: Path, manifest: dict[str, Any]) -> bool:
    """Whether the files each stage recorded (``.stages/``) and the manifest does not list (the
    generated source and its defects) are there with their bytes."""
    from homeloop.pipeline.cache import RECORDS

    for path in sorted((build / RECORDS).glob("*.json")):
        try:
            outputs = json.loads(path.read_text()).get("outputs", {})
        except (OSError, json.JSONDecodeError, AttributeError):
            return False
        for rel, digest in outputs.items():
            if rel not in manifest["outputs"] and (not (build / rel).is_file() or sha256_file(build / rel) != digest):
                return False
    return True


def bookkeeping(rel: str) -> bool:
    """Whether a path of a build folder is the build's bookkeeping, not an output: its marker and
    lock, the manifest and run log, the records of the stages, the homes work and the verify
    work (each ``<folder>/<name>.json``), and the camera views the verify stage keeps
    (``cache/visibility/<home>/<view>.vis``)."""
    from homeloop.core.io import OWNER_FILE
    from homeloop.pipeline.cache import RECORDS
    from homeloop.pipeline.homes import OUTCOMES
    from homeloop.pipeline.lock import LOCK_FILE
    from homeloop.pipeline.verify_pairs import OUTCOMES as VERIFY_RECORDS
    from homeloop.sim.static_visibility import BUILD_FOLDER as VISIBILITY_CACHE, SUFFIX as VIEW_SUFFIX

    parts = Path(rel).parts
    if rel in (OWNER_FILE, LOCK_FILE, MANIFEST, RUN_FILE):
        return True
    records = {(RECORDS,), (VERIFY_RECORDS,), ("homes", OUTCOMES)}
    if parts[:-2] == VISIBILITY_CACHE.parts and parts[-1].endswith(VIEW_SUFFIX):  # kept camera views
        return not parts[-1].startswith(".")
    return parts[:-1] in records and parts[-1].endswith(".json") and not parts[-1].startswith(".")


def recorded_files(build: Path) -> set[str]:
    """Every file the stage records of ``build`` (``.stages/``) list."""
    from homeloop.pipeline.cache import RECORDS, StageCache

    cache = StageCache(Path(build))
    return {rel for path in sorted((Path(build) / RECORDS).glob("*.json")) for rel in cache.recorded_outputs(path.stem)}


def foreign_files(build: Path, listed: set[str]) -> list[str]:
    """Files in ``build`` that neither the manifest (``listed``) nor a stage record names and that
    are no bookkeeping, as paths relative to it: stale outputs of older code, or someone else's."""
    known = recorded_files(build) | listed
    found = []
    for path in sorted(p for p in Path(build).rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(build).as_posix()
        if rel not in known and not bookkeeping(rel):
            found.append(rel)
    return found


def check_files(result: Verification, manifest: dict[str, Any]) -> None:
    listed: dict[str, str] = manifest["outputs"]
    for rel, digest in sorted(listed.items()):
        path = result.build / rel
        result.files_checked += 1
        if not path.is_file():
            result.problems.append(f"missing: {rel}")
        elif sha256_file(path) != digest:
            result.problems.append(f"changed: {rel} (its sha256 differs from {MANIFEST})")
    for rel in foreign_files(result.build, set(listed)):
        result.problems.append(f"extra: {rel} (not in {MANIFEST})")


def read_tables(result: Verification) -> dict[str, pd.DataFrame]:
    """The tables that can be read; an unreadable one is a problem."""
    tables = {}
    for name in TABLES:
        path = result.build / name
        if not path.is_file():
            continue  # reported as missing, if listed
        try:
            tables[name] = pd.read_parquet(path)
        except Exception as exc:  # any reader error means the same thing: the file is damaged
            result.problems.append(f"unreadable: {name} ({exc.__class__.__name__}: {str(exc)[:120]})")
    return tables


def check_counts(result: Verification, manifest: dict[str, Any], tables: dict[str, pd.DataFrame]) -> None:
    counts: dict[str, dict[str, Any]] = manifest.get("counts", {})
    for stage, c in sorted(counts.items()):
        if c["in"] != c["kept"] + c["rejected"]:
            result.problems.append(f"counts: {stage}: {c['in']} in != {c['kept']} kept + {c['rejected']} rejected")
        if "by_reason" in c and stage in ("rows", "homes") and sum(c["by_reason"].values()) != c["rejected"]:
            result.problems.append(f"counts: {stage}: rejections by reason add up to "
                                   f"{sum(c['by_reason'].values())}, not {c['rejected']}")
    expected = {
        ("homes", "in"): ("homes.parquet", lambda t: len(t)),
        ("homes", "kept"): ("homes.parquet", lambda t: int(t["kept"].sum()) if len(t) else 0),
        ("usd", "in"): ("usd.parquet", lambda t: len(t)),
        ("usd", "kept"): ("usd.parquet", lambda t: int(t["valid"].sum()) if len(t) else 0),
        ("select", "kept"): ("selection.parquet", lambda t: len(t)),
        ("plans", "kept"): ("plans.parquet", lambda t: len(t)),
        ("audit", "in"): ("audit.parquet", lambda t: t["plan"].nunique() if len(t) else 0),
    }
    for (stage, key), (table, measure) in expected.items():
        if stage in counts and table in tables:
            found = measure(tables[table])
            if found != counts[stage][key]:
                result.problems.append(f"counts: {stage} {key} is {counts[stage][key]} in {MANIFEST}, "
                                       f"but {table} has {found}")


def kept_homes(tables: dict[str, pd.DataFrame]) -> list[str]:
    homes = tables.get("homes.parquet")
    if homes is None or not len(homes):
        return [HOUSE_ID]
    return [HOUSE_ID, *homes.loc[homes["kept"], "plan"]]


def check_homes(result: Verification, manifest: dict[str, Any], tables: dict[str, pd.DataFrame]) -> None:
    usd_name = "home.usda" if manifest.get("parameters", {}).get("usda") else "home.usdc"
    for home in kept_homes(tables):
        for name in ("home.json", "preview.png", usd_name):
            rel = f"homes/{home}/{name}"
            if rel not in manifest["outputs"] and not (result.build / rel).is_file():
                result.problems.append(f"missing: {rel} (kept home {home} has no {name})")


def check_applicability(result: Verification, tables: dict[str, pd.DataFrame]) -> None:
    from homeloop.sim.task import load_tasks
    from homeloop.core.catalog import load_catalog

    table = tables.get("applicability.parquet")
    if table is None:
        return
    usd = tables.get("usd.parquet")
    homes = set(usd.loc[usd["valid"], "home"]) if usd is not None and len(usd) else set(kept_homes(tables))
    tasks, robots = list(load_tasks()), list(load_catalog().robots)
    expected = {(h, t, r) for h in homes for t in tasks for r in robots}
    rows = list(zip(table["home"], table["task"], table["robot"]))
    found = set(rows)
    if len(rows) != len(found):
        result.problems.append(f"applicability: applicability.parquet repeats {len(rows) - len(found)} rows")
    for label, pairs in (("lacks", expected - found), ("has unexpected", found - expected)):
        if pairs:
            home, task, robot = sorted(pairs)[0]
            result.problems.append(
                f"applicability: applicability.parquet {label} {len(pairs)} of {len(expected)} home × task × robot "
                f"rows (e.g. home {home}, task {task}, robot {robot})")


def verify_build(build: Path) -> Verification:
    """Check build folder ``build`` against its manifest; raises UnusableBuild."""
    build = Path(build)
    manifest = load_manifest(build)
    result = Verification(build)
    check_files(result, manifest)
    tables = read_tables(result)
    check_counts(result, manifest, tables)
    check_homes(result, manifest, tables)
    check_applicability(result, tables)
    return result
