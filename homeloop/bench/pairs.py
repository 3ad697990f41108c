"""The home–task pairs of a build that a run evaluates (docs/scores.md, docs/pipeline.md).

A build's ``applicability.parquet`` holds one row per home × task × robot
body: ``applicable`` (screened from the task's requirements) and ``verified``
(the scripted reference agent passed the task there, at every seed it was
verified at). A pair counts for evaluation only when the scripted reference
agent passes it there (docs/tasks.md), so :func:`select_pairs` takes the
verified pairs of the run's robot and tasks; with ``verified_only=False`` it
takes every pair screened applicable instead.

:func:`sample_homes` draws a fixed, reproducible sample of homes, stratified
by task or by task family: the strata, rarest first, take turns picking the
next home that has a pair in them, homes in an order given by a hash of
(seed, home id). So every task (or family) the homes offer is covered as
evenly as the sample size allows, and the same seed draws the same homes
whatever order the table lists them in. The house is never drawn: a run over
a sample evaluates the house's pairs too, the reference of the further-homes
comparison (docs/scores.md). The build's verify stage draws the homes it
verifies with the same function.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from homeloop.core.errors import HomeLoopError
from homeloop.core.house import HOUSE_ID

HOUSE = HOUSE_ID
APPLICABILITY_FILE = "applicability.parquet"
#: What a sample can be stratified by: a column of the applicability table.
STRATA = ("task", "family")

#: ``verify_reason`` of a screened pair the verify stage did not run, by why not.
NOT_RUN_NO_VERIFY = "not run: the build was made with --no-verify"
NOT_RUN_ROBOT = "not run: robot body not among --verify-robots"
NOT_RUN_HOME = "not run: home outside the verified sample (--verify-homes)"
NOT_RUN_PREFIX = "not run: "


@dataclass
class PairSelection:
    """The pairs a run evaluates: (home, task) in order, each home's file, and lines worth saying."""

    pairs: list[tuple[str, str]]
    home_files: dict[str, Path]
    notes: list[str] = field(default_factory=list)


def not_run(table: pd.DataFrame) -> pd.Series:
    """Which rows of an applicability table the verify stage did not play (``not run: ...``)."""
    return table["verify_reason"].str.startswith(NOT_RUN_PREFIX)


def read_applicability(build_dir: str | Path) -> pd.DataFrame:
    """The build's applicability table, or one line saying how to get it."""
    path = Path(build_dir) / APPLICABILITY_FILE
    if not path.is_file():
        raise HomeLoopError(f"{build_dir}: no {APPLICABILITY_FILE}; run `homeloop build --out {build_dir}` first")
    return pd.read_parquet(path)


def home_order(homes: Iterable[str], seed: int) -> list[str]:
    """The homes in a seeded order that depends on nothing but (seed, home id)."""
    def rank(home: str) -> bytes:
        return hashlib.blake2b(f"{seed}:{home}".encode(), digest_size=8).digest()

    return sorted(set(homes), key=lambda h: (rank(h), h))


def sample_homes(pairs: pd.DataFrame, n: int, stratify: str = "task", seed: int = 0) -> list[str]:
    """``n`` homes other than the house from ``pairs`` (columns home and ``stratify``),
    stratified as the module docstring says; sorted by id. All of them when there are
    no more than ``n``."""
    if stratify not in STRATA:
        raise HomeLoopError(f"--stratify {stratify!r}: use one of {', '.join(STRATA)}")
    if n < 1:
        raise HomeLoopError(f"--sample takes a positive number of homes, got {n}")
    pairs = pairs[pairs["home"] != HOUSE]
    order = home_order(pairs["home"], seed)
    if len(order) <= n:
        return sorted(order)
    position = {h: i for i, h in enumerate(order)}
    members = {s: sorted(set(g["home"]), key=position.__getitem__) for s, g in pairs.groupby(stratify)}
    turns = sorted(members, key=lambda s: (len(members[s]), s))  # rarest stratum first
    chosen: set[str] = set()
    cursor = dict.fromkeys(turns, 0)
    while len(chosen) < n:
        for stratum in turns:
            homes = members[stratum]
            while cursor[stratum] < len(homes) and homes[cursor[stratum]] in chosen:
                cursor[stratum] += 1
            if cursor[stratum] < len(homes):
                chosen.add(homes[cursor[stratum]])
                if len(chosen) == n:
                    break
    return sorted(chosen)


def select_pairs(build_dir: str | Path, robot: str, tasks: Iterable[str], *, verified_only: bool = True,
                 homes: Iterable[str] | None = None, sample: int | None = None, stratify: str = "task",
                 seed: int = 0) -> PairSelection:
    """The (home, task) pairs of a build for one robot body and some tasks (module docstring).

    ``homes`` limits them to those home ids; ``sample`` draws that many homes
    besides the house (:func:`sample_homes`). Raises :class:`HomeLoopError` with one
    line when nothing is left to run, saying why."""
    build = Path(build_dir)
    table = read_applicability(build)
    task_list = list(tasks)
    rows = table[(table["robot"] == robot) & table["task"].isin(task_list) & table["applicable"]]
    if homes is not None:
        wanted = list(homes)
        missing = sorted(set(wanted) - set(table["home"]))
        if missing:
            raise HomeLoopError(f"{build}: no home(s) {', '.join(missing)} in {APPLICABILITY_FILE} "
                                f"(it has {table['home'].nunique():,} homes)")
        rows = rows[rows["home"].isin(wanted)]
    notes: list[str] = []
    if verified_only:
        rows, notes = _verified(rows, build, robot)
    if sample is not None:
        drawn = set(sample_homes(rows, sample, stratify, seed))
        rows = rows[rows["home"].isin(drawn | {HOUSE})]
        notes.append(f"sample of {len(drawn)} homes (stratified by {stratify}, seed {seed})"
                     + (" and the house" if (rows["home"] == HOUSE).any() else ""))
    if rows.empty:
        kind = "verified" if verified_only else "screened applicable"
        raise HomeLoopError(f"{build}: no {kind} pair for robot {robot} and the tasks asked for"
                            + "".join(f"; {n}" for n in notes))
    pairs = sorted(zip(rows["home"], rows["task"]))
    files = {h: build / "homes" / h / "home.json" for h in sorted({h for h, _ in pairs})}
    absent = [str(p) for p in files.values() if not p.is_file()]
    if absent:
        raise HomeLoopError(f"{absent[0]} is missing ({len(absent)} home files in all); rebuild {build}")
    return PairSelection(pairs, files, notes)


def _verified(rows: pd.DataFrame, build: Path, robot: str) -> tuple[pd.DataFrame, list[str]]:
    """The verified rows among the screened ones, and a line on those skipped."""
    if "verified" not in rows.columns:
        raise HomeLoopError(f"{build}: {APPLICABILITY_FILE} has no verified column (a build from before the "
                            "verify stage); rebuild it, or pass --no-verified-only to run the screened pairs")
    reasons = rows["verify_reason"]
    if len(rows) and (reasons == NOT_RUN_NO_VERIFY).all():
        raise HomeLoopError(f"{build} was built with --no-verify, so no pair is verified; rebuild without it, "
                            "or pass --no-verified-only to run the screened pairs")
    if len(rows) and (reasons == NOT_RUN_ROBOT).all():
        verified = _manifest_parameters(build).get("verify", {}) or {}
        raise HomeLoopError(f"{build}: robot {robot} was not verified (verified: "
                            f"{', '.join(verified.get('robots', [])) or 'none'}); rebuild with "
                            f"--verify-robots {robot}, or pass --no-verified-only")
    kept = rows[rows["verified"]]
    notes = []
    skipped = rows[~rows["verified"]]
    if len(skipped):
        unplayed = int(not_run(skipped).sum())
        notes.append(f"{len(skipped):,} screened pairs skipped as not verified ({len(skipped) - unplayed:,} "
                     f"failed the scripted reference agent, {unplayed:,} not run by the build; see verify_reason "
                     f"in {APPLICABILITY_FILE})")
    return kept, notes


def _manifest_parameters(build: Path) -> dict[str, Any]:
    try:
        parameters: dict[str, Any] = json.loads((build / "manifest.json").read_text()).get("parameters", {})
    except (OSError, ValueError):
        return {}
    return parameters
