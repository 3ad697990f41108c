"""Homes from ranked plans: furnish, equip with devices and cameras, verify.

The work unit is one plan. :func:`build_home` turns it into a home or into the
findings that say why not; :func:`build_homes_partition` does that for a
partition of plans on a Dask worker, writing each kept home's ``home.json``
and ``preview.png`` and an outcome record, so that a build killed half-way
picks up where it stopped. The stage itself (in :mod:`homeloop.pipeline.stages`) walks
the selection in rank order until it has the homes it needs.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.check import check_home
from homeloop.core.home import Home
from homeloop.core.ids import safe_id
from homeloop.core.io import sha256_file, write_json
from homeloop.core.plan import Plan

#: Outcome records (one per attempted plan) live here, under the homes folder.
OUTCOMES = ".outcomes"
#: Home previews are drawn smaller than plan previews: thousands of them are
#: drawn per build, and 640 px wide still shows every device and camera cone.
PREVIEW_DPI, PREVIEW_WIDTH_IN = 80, 8.0
FURNISH_FAILED = "furnish_failed"
EQUIP_FAILED = "equip_failed"
CHECK_FAILED = "home_check_failed"


def stage_rng(seed: int, key: str, stage: str) -> np.random.Generator:
    """The generator for one plan and one stage, from (build seed, plan key, stage) only."""
    digest = hashlib.blake2b(f"{seed}:{key}:{stage}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


@dataclass
class HomeOutcome:
    """What became of one plan: kept as a home, or the findings that rejected it."""

    plan: str
    kept: bool
    reason: str = ""
    findings: list[dict[str, str]] = field(default_factory=list)
    rooms: int = 0
    furniture: int = 0
    objects: int = 0
    devices: int = 0
    agent_devices: int = 0
    cameras: int = 0
    agent_cameras: int = 0
    indoor_area_m2: float = 0.0
    seconds: float = 0.0

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def home_dir(homes_dir: Path, home_id: str) -> Path:
    """A home's folder: ``homes_dir/<home id>``, the id checked to name one folder (docs/episodes.md)."""
    return Path(homes_dir) / safe_id(home_id, "home")


def build_home(plan: Plan, catalog: Catalog, seed: int) -> tuple[Home | None, HomeOutcome]:
    """Furnish, equip and verify one plan. Never raises for a plan that cannot be
    a home: that is an outcome with findings."""
    from homeloop.pipeline.devices import equip
    from homeloop.pipeline.furnish import furnish

    t = time.perf_counter()
    outcome = HomeOutcome(plan=plan.key, kept=False)
    try:
        furnished = furnish(plan, catalog, stage_rng(seed, plan.key, "furnish"))
    except Exception as exc:  # a plan the furnisher cannot handle is a finding, not a crash
        furnished = None
        outcome.reason = FURNISH_FAILED
        outcome.findings = [_finding(FURNISH_FAILED, "", f"furnishing raised {exc.__class__.__name__}: {exc}")]
    if furnished is not None and not furnished.ok:
        outcome.reason = FURNISH_FAILED
        outcome.findings = [
            _finding(FURNISH_FAILED, f.room, f"{f.room_type} {f.room}: cannot place {f.item}: {f.reason}")
            for f in furnished.failures
        ]
    home = None
    if furnished is not None and furnished.ok:
        equipped = equip(furnished.home, catalog, stage_rng(seed, plan.key, "devices"))
        if not equipped.ok:
            outcome.reason = EQUIP_FAILED
            outcome.findings = [_finding(EQUIP_FAILED, "", message) for message in equipped.failures]
        else:
            problems = check_home(equipped.home, catalog)
            if problems:
                outcome.reason = CHECK_FAILED
                outcome.findings = [_finding(CHECK_FAILED, ",".join(p.elements), f"{p.rule}: {p.message}") for p in problems]
            else:
                home = equipped.home
                outcome.kept = True
    if home is not None:
        _describe(home, outcome)
    outcome.seconds = round(time.perf_counter() - t, 4)
    return home, outcome


def _finding(rule: str, element: str, message: str) -> dict[str, str]:
    return {"rule": rule, "element": element, "message": message}


def _describe(home: Home, outcome: HomeOutcome) -> None:
    outcome.rooms = len(home.rooms)
    outcome.furniture = len(home.furniture)
    outcome.objects = len(home.objects)
    outcome.devices = sum(home.device_counts().values())
    outcome.agent_devices = sum(home.device_counts(agent_visible_only=True).values())
    outcome.cameras = len(home.cameras)
    outcome.agent_cameras = home.agent_camera_count
    outcome.indoor_area_m2 = round(home.indoor_area, 2)


def build_homes_partition(keys: list[str], build_dir: str, seed: int, stage_key: str,
                          catalog_dir: str | None = None, previews: bool = True,
                          optional: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Build the homes of some plans (in the given order), with the catalog and its ``optional`` parts;
    return their outcome records.

    A plan whose outcome was recorded under the same ``stage_key``, with its files
    still as written, is not built again: its record is returned as it stands (the
    resume after a crash)."""
    from homeloop.pipeline.ingest import load_plans
    from homeloop.pipeline.previews.home import render_home

    build = Path(build_dir)
    homes_dir = build / "homes"
    records: dict[str, dict[str, Any]] = {}
    todo = []
    for key in keys:
        record = read_outcome(homes_dir, key, stage_key)
        if record is not None:
            records[key] = record
        else:
            todo.append(key)
    if todo:
        catalog = load_catalog(catalog_dir, optional)
        plans = {p.key: p for p in load_plans(build, keys=todo, hold=True)}
        for key in todo:
            t = time.perf_counter()
            home, outcome = build_home(plans[key], catalog, seed)
            written = []
            if home is not None:
                folder = home_dir(homes_dir, home.home_id)
                written.append(home.write(folder / "home.json"))
                if previews:
                    render_home(home, folder / "preview.png", dpi=PREVIEW_DPI, width_in=PREVIEW_WIDTH_IN)
                    written.append(folder / "preview.png")
            # The whole work of the plan, files included (build_home timed only its part).
            outcome.seconds = round(time.perf_counter() - t, 4)
            record = outcome.to_record()
            files = {path.name: sha256_file(path) for path in written}
            write_json(homes_dir / OUTCOMES / f"{key}.json",
                       {"stage_key": stage_key, "outcome": record, "files": files})
            records[key] = record
    return [records[k] for k in keys]


def read_outcome(homes_dir: Path, key: str, stage_key: str) -> dict[str, Any] | None:
    path = Path(homes_dir) / OUTCOMES / f"{key}.json"
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if stored.get("stage_key") != stage_key:
        return None
    try:
        # Rebuilt as a HomeOutcome so the record has the fields, in the order, of a
        # fresh one (the JSON file keeps them sorted): a resumed build writes the same table.
        outcome = HomeOutcome(**stored["outcome"]).to_record()
    except (KeyError, TypeError):
        return None
    if outcome["kept"] and not files_as_written(Path(homes_dir) / key, stored.get("files")):
        return None
    return outcome


def files_as_written(folder: Path, files: Any) -> bool:
    """Whether a kept home's files are all there with the hashes its record gives
    (a deleted or edited home.json means building the plan again)."""
    if not isinstance(files, dict) or "home.json" not in files:
        return False
    return all((folder / name).is_file() and sha256_file(folder / name) == digest for name, digest in files.items())


def export_homes_partition(home_ids: list[str], build_dir: str, usda: bool = False,
                           catalog_dir: str | None = None, optional: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Export the homes to USD next to their home.json, with the catalog and its ``optional`` parts; one
    record per home with its size and validation result. The catalog assets must already be written."""
    from homeloop.pipeline.usd import assets_held_open, catalog_asset_paths, export_home

    build = Path(build_dir)
    catalog = load_catalog(catalog_dir, optional)
    assets = catalog_asset_paths(catalog, build / "assets")
    records = []
    with assets_held_open(assets.values()):
        for home_id in home_ids:
            t = time.perf_counter()
            folder = home_dir(build / "homes", home_id)
            home = Home.read(folder / "home.json")
            result = export_home(home, catalog, folder / ("home.usda" if usda else "home.usdc"), assets=assets,
                                 usda=usda)
            records.append({
                "home": home_id,
                "file": result.path.relative_to(build).as_posix(),
                "bytes": int(result.bytes),
                "valid": bool(result.valid),
                "errors": "; ".join(result.errors or []),
                "warnings": len(result.warnings or []),
                "prims": int(sum(result.prim_counts.values())),
                # The whole work of the home: reading, export and validation.
                "seconds": round(time.perf_counter() - t, 4),
            })
    return records
