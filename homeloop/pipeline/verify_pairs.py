"""The verify stage: the scripted reference agent on every screened-applicable pair (docs/pipeline.md).

A home–task pair counts for evaluation only if the scripted reference agent
passes it there (docs/tasks.md). Screening (:mod:`homeloop.pipeline.applicability`)
reads requirements only; this stage plays each pair the screen let through:
:func:`verify_pair` runs one episode in process, images off, with the
benchmark's own monitor and pass rule (:func:`homeloop.bench.runner.play`),
and writes no record. A pair is verified when it passes at every seed
verified; otherwise ``verify_reason`` says why, in order:

- ``scenario: ...``: the scenario could not be set up in the home (a role it
  cannot place, a wake event that never comes), the simulator's own message;
- ``checks failed: a, b``: the checks that did not hold, then, when there
  was one, ``failed call: <tool>: <error>`` (the last call refused) and
  ``agent error: ...`` or ``ended by <limit>``;
- ``error: <exception>``: the simulator failed on this pair (the stage goes on).

With several seeds, each failing seed's reason is prefixed ``seed N:``.
Pairs screened applicable but not played say ``not run: ...``
(:mod:`homeloop.bench.pairs`).

Which pairs: those screened applicable for the bodies of ``--verify-robots``
(default: the experiments' body), at the seeds of ``--verify-seeds`` (default
0), in every home, or in the house and a sample of ``--verify-homes N``
further homes drawn as ``homeloop bench run --sample`` draws them (stratified
by task, the build seed).

Work is split by home: a Dask partition takes a few homes, and each home's
results go to ``.verify/<home>.json`` under the build folder with the key
they were made under (the code, the home file's bytes, the pairs, the
seeds), so a build killed in the middle of the stage resumes at the home it
was on, and a changed home is verified again alone. Tables are assembled in
the screening's row order from these results: the same build gives the same
bytes, on one process or a cluster.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from homeloop.bench.pairs import HOUSE, NOT_RUN_HOME, NOT_RUN_NO_VERIFY, NOT_RUN_ROBOT, not_run, sample_homes
from homeloop.core.home import Home
from homeloop.core.io import sha256_file, write_json
from homeloop.core.visuals.library import VisualLibrary, library_folder, load_library
from homeloop.pipeline.verify_settings import VERIFY_AGENT, VerifySettings

#: Per-home results, under the build folder.
OUTCOMES = ".verify"
#: Homes per Dask partition: a home's ~20 episodes take a few seconds.
HOMES_PER_PARTITION = 4
#: Longest error text kept in a reason (characters).
MAX_ERROR_CHARS = 240


# --- one pair -----------------------------------------------------------------------------------


def verify_pair(home: Home, task: str, robot: str, seed: int, visuals: VisualLibrary | None = None) -> dict[str, Any]:
    """Play one pair with the scripted reference agent: passed, the reason when not, seconds taken
    (``visuals``: the build's own assets, as every episode on the build draws them)."""
    # The reference agent, played by name below: imported here so that an edit to it reruns this stage.
    from homeloop.bench.agents import scripted  # noqa: F401
    from homeloop.bench.runner import Flags, play
    from homeloop.sim.episode import EpisodeError
    from homeloop.sim.roles import ScenarioError

    t = time.perf_counter()
    try:
        played = play(home, task, robot, seed, Flags(images=False), VERIFY_AGENT, {}, visuals)
        passed = played.passed
        reason = "" if passed else failure_reason(played)
    except (EpisodeError, ScenarioError) as exc:
        passed, reason = False, f"scenario: {_short(str(exc))}"
    except Exception as exc:  # a simulator failure is this pair's finding; the stage goes on
        passed, reason = False, f"error: {type(exc).__name__}: {_short(str(exc))}"
    return {"task": task, "robot": robot, "seed": seed, "passed": passed, "reason": reason,
            "seconds": round(time.perf_counter() - t, 4)}


def failure_reason(played: Any) -> str:
    """Why a played episode failed: its failing checks, the last refused call, how it ended."""
    ep = played.episode
    parts = []
    failed = [c.id for c in played.checks if not c.passed]
    if failed:
        parts.append(f"checks failed: {', '.join(failed)}")
    refused = [e for e in ep.trace if e.get("kind") == "call" and e.get("error")]
    if refused:
        parts.append(f"failed call: {refused[-1]['tool']}: {_short(str(refused[-1]['error']))}")
    if played.error:
        parts.append(f"agent error: {_short(played.error)}")
    elif ep.ended_by not in ("stop", "horizon"):
        parts.append(f"ended by {ep.ended_by}")
    return "; ".join(parts) or f"ended by {ep.ended_by}"


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def _first_part(reason: str) -> str:
    """The first part of a reason (of its first failing seed), without the seed prefix."""
    first = reason.split("; ")[0]
    return first.split(": ", 1)[-1] if first.startswith("seed ") else first


def reason_kind(reason: str) -> str:
    """The kind of a reason, for counts: ``checks failed``, ``scenario``, ``error``, ``not run``."""
    return _first_part(reason).split(":", 1)[0]


def reason_key(reason: str, home: str) -> str:
    """A reason's first part with its home's id taken out: what pairs of many homes share."""
    return _first_part(reason).replace(home, "<home>")


# --- a partition of homes -----------------------------------------------------------------------


def home_key(home_sha: str, pairs: list[tuple[str, str]], seeds: Iterable[int], code: str) -> str:
    """What a home's results were made under: the code, the home file, its pairs, the seeds."""
    payload = {"agent": VERIFY_AGENT, "code": code, "home": home_sha, "pairs": [list(p) for p in pairs],
               "seeds": list(seeds)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def outcome_path(build_dir: str | Path, home_id: str) -> Path:
    return Path(build_dir) / OUTCOMES / f"{home_id}.json"


def read_home_outcome(build_dir: str | Path, home_id: str, key: str) -> list[dict[str, Any]] | None:
    """A home's recorded results when they were made under ``key``, else None."""
    try:
        stored = json.loads(outcome_path(build_dir, home_id).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key or not isinstance(stored.get("results"), list):
        return None
    return stored["results"]


def verify_homes_partition(home_ids: list[str], build_dir: str, work: dict[str, list[tuple[str, str]]],
                           seeds: list[int], keys: dict[str, str]) -> list[dict[str, Any]]:
    """Verify the (task, robot) pairs of some homes at every seed; one result row per pair and seed.

    A home whose results are recorded under its key is not played again (the resume). The house
    cameras' static views are kept under the build's ``cache/visibility``
    (:mod:`homeloop.sim.static_visibility`), so a home played again reads them."""
    from homeloop.core.keyed_file import kept_on_disk
    from homeloop.sim.static_visibility import BUILD_FOLDER

    rows: list[dict[str, Any]] = []
    visuals: VisualLibrary | None = None
    for home_id in home_ids:
        results = read_home_outcome(build_dir, home_id, keys[home_id])
        if results is None:
            home = Home.read(Path(build_dir) / "homes" / home_id / "home.json")
            visuals = visuals if visuals is not None else load_library(library_folder(Path(build_dir)))
            with kept_on_disk(Path(build_dir) / BUILD_FOLDER):
                results = [verify_pair(home, task, robot, seed, visuals) for task, robot in work[home_id]
                           for seed in seeds]
            write_json(outcome_path(build_dir, home_id), {"key": keys[home_id], "results": results})
        rows.extend({"home": home_id, **r} for r in results)
    return rows


# --- the stage's plan and tables ----------------------------------------------------------------


def verify_plan(screened: pd.DataFrame, settings: VerifySettings, seed: int) -> dict[str, list[tuple[str, str]]]:
    """Home → its (task, robot) pairs to play: screened applicable, for the settings' bodies,
    in the house and the sampled (or every) further home; homes and pairs in table order."""
    if not settings.enabled:
        return {}
    rows = screened[screened["applicable"] & screened["robot"].isin(settings.robots)]
    if settings.homes is None:
        further = set(rows["home"]) - {HOUSE}
    else:
        further = set(sample_homes(rows, settings.homes, "task", seed)) if len(rows) else set()
    rows = rows[rows["home"].isin(further | {HOUSE})]
    work: dict[str, list[tuple[str, str]]] = {}
    for home, task, robot in zip(rows["home"], rows["task"], rows["robot"]):
        work.setdefault(home, []).append((task, robot))
    return work


def home_keys(build_dir: str | Path, work: dict[str, list[tuple[str, str]]], seeds: Iterable[int]) -> dict[str, str]:
    """Each home's key (:func:`home_key`), with the code that plays its pairs."""
    from homeloop.pipeline.cache import stage_code_hash

    code, seed_list = stage_code_hash(verify_homes_partition), list(seeds)
    return {h: home_key(sha256_file(Path(build_dir) / "homes" / h / "home.json"), pairs, seed_list, code)
            for h, pairs in work.items()}


def verified_table(screened: pd.DataFrame, rows: list[dict[str, Any]], settings: VerifySettings) -> pd.DataFrame:
    """The screening with ``verified`` and ``verify_reason`` (module docstring), same row order."""
    runs: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        runs.setdefault((r["home"], r["task"], r["robot"]), []).append(r)
    several = len(settings.seeds) > 1
    verified, reasons = [], []
    for home, task, robot, applicable in zip(screened["home"], screened["task"], screened["robot"],
                                             screened["applicable"]):
        played = runs.get((home, task, robot))
        if played is not None:
            failing = sorted((r for r in played if not r["passed"]), key=lambda r: r["seed"])
            verified.append(not failing)
            reasons.append(" / ".join(f"seed {r['seed']}: {r['reason']}" if several else r["reason"] for r in failing))
        else:
            verified.append(False)
            reasons.append(_not_run(settings, robot) if applicable else "")
    table = screened.copy()
    table["verified"] = pd.Series(verified, index=table.index, dtype=bool)
    table["verify_reason"] = pd.Series(reasons, index=table.index, dtype=str)
    return table


def _not_run(settings: VerifySettings, robot: str) -> str:
    if not settings.enabled:
        return NOT_RUN_NO_VERIFY
    if robot not in settings.robots:
        return NOT_RUN_ROBOT
    return NOT_RUN_HOME


def played_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the pairs the stage played: screened applicable, and not ``not run``."""
    return table[table["applicable"] & ~not_run(table)]


def verify_counts(table: pd.DataFrame) -> tuple[int, int, dict[str, int]]:
    """Pairs played (home × task × robot), pairs verified, and failures by kind of reason."""
    played = played_pairs(table)
    failed = played[~played["verified"]]
    kinds = failed["verify_reason"].map(reason_kind).value_counts().to_dict()
    return len(played), int(played["verified"].sum()), {str(k): int(v) for k, v in kinds.items()}


#: The share of a task's screened pairs that may fail the verify stage before the report marks the
#: task: screening (requirements read from the home) should predict what the scripted agent passes.
GAP_GOAL = 0.05


def task_gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Per task (in table order), over the pairs played: screened (applicable and played), verified,
    gap (screened less verified), gap_share (of screened), over_goal (gap_share above
    :data:`GAP_GOAL`) and reason (the commonest first part of a failing pair's reason)."""
    played = played_pairs(table)
    rows = []
    for task, group in played.groupby("task", sort=False):
        failed = group[~group["verified"]]
        keys = pd.Series([reason_key(r, h) for r, h in zip(failed["verify_reason"], failed["home"])], dtype=str)
        verified = int(group["verified"].sum())
        gap = len(group) - verified
        rows.append({"task": task, "family": group["family"].iloc[0], "screened": len(group), "verified": verified,
                     "gap": gap, "gap_share": gap / len(group), "over_goal": gap / len(group) > GAP_GOAL + 1e-12,
                     "reason": str(keys.value_counts().index[0]) if len(keys) else ""})
    columns = ["task", "family", "screened", "verified", "gap", "gap_share", "over_goal", "reason"]
    return pd.DataFrame(rows, columns=columns)

