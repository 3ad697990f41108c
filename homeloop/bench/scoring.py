"""Score tables recomputed from episode records alone (docs/scores.md).

Every table starts from one frame of *outcomes*, one row per episode:
``label`` (agent or model, with its ablation flags), ``home``, ``task``,
``seed``, ``passed``, ``units``, ``budget``, ``ended_by``, the failure
classes, each check's result and, for hazard alarms, when the agent
intervened. :func:`outcomes_from_records` builds it from records;
:func:`read_outcomes_csv` from published results (columns
``model,task,seed,passed``, optional ``units,budget``), so both are
tabulated by the same code.

Definitions (docs/scores.md):

- a run passes when every check holds; a task's score is its success rate
  over runs; a family's score is the mean of its tasks' scores; the
  family-balanced score is the mean of the five family scores;
- ``passed_seedN``: how many of the 20 core tasks passed at seed N;
- alert groups: a seed is credited for a group only when every task of the
  group passed at that seed; the score is the mean over the groups;
- skill cost %: units spent / budget per episode, averaged per task, then
  family-balanced;
- time to act: for hazard alarms, whether and when the stove or the water
  main was switched off after the alarm, split by real and benign causes;
- further homes: success per family in other homes against the house's
  success reweighted to the task frequencies of those homes.

Episodes that ended with ``transport_error`` never reached the model and
are left out of every score (a resume reruns them).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from homeloop.bench.tasks import Task, load_tasks
from homeloop.house import HOUSE_ID

#: Families in the order tables list them.
FAMILIES = ("hazards", "requests", "entry", "wellbeing", "chores")

HOUSE = HOUSE_ID

#: Columns an outcomes CSV must have, and those it may have.
OUTCOME_COLUMNS = ("model", "task", "seed", "passed")
OPTIONAL_OUTCOME_COLUMNS = ("units", "budget", "home")


#: Columns of the outcomes frame every table starts from.
OUTCOME_FRAME_COLUMNS = ["label", "home", "task", "family", "core", "alert_group", "alert_cause", "seed",
                         "passed", "units", "budget", "ended_by", "failures", "checks", "acted_at",
                         "acted_known", "tokens", "cost_usd"]


class OutcomesError(ValueError):
    """An outcomes file that cannot be scored at all (missing columns, unreadable)."""


@dataclass
class Outcomes:
    frame: pd.DataFrame
    rejected: list[str]


def _label(record: dict[str, Any]) -> str:
    agent = record["agent"]
    name = agent.get("model") or agent.get("name", "?")
    flags = record["world"].get("flags_label", "")
    return f"{name} [{flags}]" if flags else name


def outcomes_from_records(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per episode (see the module docstring)."""
    rows = []
    for r in records:
        if r["ended_by"] == "transport_error":
            continue
        task = r["task"]
        rows.append({
            "label": _label(r), "home": r["world"]["home"], "task": task["id"], "family": task["family"],
            "core": not task.get("extension", False), "alert_group": task.get("alert_group"),
            "alert_cause": task.get("alert_cause"), "acted_known": True,
            "seed": int(r["world"]["seed"]), "passed": bool(r["passed"]), "units": r["units_spent"],
            "budget": r["budget"], "ended_by": r["ended_by"],
            "failures": tuple(r.get("failures", ())),
            "checks": {c["id"]: bool(c["passed"]) for c in r["checks"]},
            "acted_at": r.get("acted_at"), "tokens": (r.get("tokens") or {}).get("total"),
            "cost_usd": r.get("cost_usd"),
        })
    return pd.DataFrame(rows, columns=OUTCOME_FRAME_COLUMNS)


def outcomes_from_run_dirs(run_dirs: Iterable[str | Path]) -> Outcomes:
    """Outcomes of every readable record in the run folders, read one record at a time;
    unreadable records are named in ``rejected``."""
    from homeloop.bench.records import iter_records

    rejected: list[str] = []

    def readable() -> Iterable[dict[str, Any]]:
        for _, record, why in iter_records(run_dirs):
            if record is None:
                rejected.append(why)
            else:
                yield record

    frame = outcomes_from_records(readable())
    return Outcomes(frame, rejected)


def _parse_bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "1", "yes", "pass", "passed"):
        return True
    if t in ("false", "0", "no", "fail", "failed"):
        return False
    raise ValueError(f"passed must be true or false, got {text!r}")


def read_outcomes_csv(path: str | Path, tasks: dict[str, Task] | None = None) -> Outcomes:
    """Outcomes from a CSV of published results; bad rows are named and skipped."""
    tasks = tasks or load_tasks()
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            missing = [c for c in OUTCOME_COLUMNS if c not in header]
            if missing:
                raise OutcomesError(f"{path}: missing column(s) {', '.join(missing)} "
                                    f"(needs {', '.join(OUTCOME_COLUMNS)}; may have {', '.join(OPTIONAL_OUTCOME_COLUMNS)})")
            rows, rejected = [], []
            for line, row in enumerate(reader, start=2):
                try:
                    rows.append(_outcome_row(row, tasks))
                except ValueError as exc:
                    rejected.append(f"{path}: row {line}: {exc}")
    except (OSError, UnicodeDecodeError) as exc:
        raise OutcomesError(f"{path}: cannot be read ({exc})") from None
    frame = pd.DataFrame(rows, columns=OUTCOME_FRAME_COLUMNS)
    return Outcomes(frame, rejected)


def _outcome_row(row: dict[str, str], tasks: dict[str, Task]) -> dict[str, Any]:
    task_id = (row.get("task") or "").strip()
    if task_id not in tasks:
        raise ValueError(f"unknown task {task_id!r}")
    task = tasks[task_id]
    try:
        seed = int(row["seed"])
    except (TypeError, ValueError):
        raise ValueError(f"seed must be a whole number, got {row.get('seed')!r}") from None
    units = float(row["units"]) if row.get("units") not in (None, "") else np.nan
    budget = float(row["budget"]) if row.get("budget") not in (None, "") else float(task.budget_units)
    return {"label": row["model"].strip(), "home": (row.get("home") or HOUSE).strip(), "task": task_id,
            "family": task.family, "core": task.core, "alert_group": task.alert_group,
            "alert_cause": task.alert_cause, "acted_known": False, "seed": seed,
            "passed": _parse_bool(row["passed"]), "units": units, "budget": budget, "ended_by": None,
            "failures": (), "checks": {}, "acted_at": None, "tokens": None, "cost_usd": None}


# --- tables ---------------------------------------------------------------------------------------


def task_success(frame: pd.DataFrame) -> pd.DataFrame:
    """Success rate per label × task (over seeds and homes)."""
    return (frame.groupby(["label", "family", "task"], sort=True)["passed"].mean().rename("success")
            .reset_index())


def family_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Per label: each family's score (mean of its tasks' success rates) and the balanced mean."""
    per_task = task_success(frame)
    fam = per_task.groupby(["label", "family"])["success"].mean().unstack("family")
    fam = fam.reindex(columns=list(FAMILIES))
    fam["balanced"] = fam[list(FAMILIES)].mean(axis=1, skipna=False)
    return fam


def alert_group_scores(frame: pd.DataFrame) -> pd.Series:
    """Per label: mean over alert groups of the share of seeds at which every task of the group passed."""
    grouped = frame.dropna(subset=["alert_group"])
    if grouped.empty:
        return pd.Series(dtype=float, name="alert_groups")
    per_seed = grouped.groupby(["label", "alert_group", "seed"])["passed"].all()
    return per_seed.groupby(["label", "alert_group"]).mean().groupby("label").mean().rename("alert_groups")


def main_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per label over the core tasks in the house (the paper's main table)."""
    core = frame[frame["core"] & (frame["home"] == HOUSE)]
    if core.empty:
        return pd.DataFrame(columns=["model", "balanced", *FAMILIES, "alert_groups"])
    fam = family_scores(core) * 100
    table = pd.DataFrame(index=fam.index)
    for seed in sorted(core["seed"].unique()):
        at_seed = core[core["seed"] == seed]
        table[f"passed_seed{seed}"] = at_seed.groupby(["label", "task"])["passed"].all().groupby("label").sum()
    table["balanced"] = fam["balanced"].round(1)
    for f in FAMILIES:
        table[f] = fam[f].round(0)
    table["alert_groups"] = (alert_group_scores(core) * 100).round(0)
    return table.reset_index().rename(columns={"label": "model"})


def check_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Each check's success rate per label and task, so a failure traces to its check."""
    rows = [{"label": r.label, "task": r.task, "check": cid, "passed": ok}
            for r in frame.itertuples() for cid, ok in r.checks.items()]
    if not rows:
        return pd.DataFrame(columns=["label", "task", "check", "success", "runs"])
    df = pd.DataFrame(rows)
    return (df.groupby(["label", "task", "check"])["passed"].agg(success="mean", runs="size").reset_index())


def skill_cost(frame: pd.DataFrame) -> pd.DataFrame:
    """Share of the budget spent, per label: family-balanced (percent), and per family."""
    df = frame.dropna(subset=["units"]).copy()
    if df.empty:
        return pd.DataFrame(columns=["label", "cost_pct"])
    df["share"] = df["units"] / df["budget"]
    per_task = df.groupby(["label", "family", "task"])["share"].mean()
    fam = per_task.groupby(["label", "family"]).mean().unstack("family").reindex(columns=list(FAMILIES))
    out = (fam * 100).round(1)
    out["cost_pct"] = (fam.mean(axis=1) * 100).round(1)
    return out.reset_index()


def failure_taxonomy(frame: pd.DataFrame) -> pd.DataFrame:
    """Per label: how many failed episodes show each failure class (several may apply)."""
    from homeloop.bench.checks import FAILURE_CLASSES as classes

    failed = frame[~frame["passed"].astype(bool)]
    rows = []
    for label, group in failed.groupby("label"):
        counts = {c: sum(c in f for f in group["failures"]) for c in classes}
        rows.append({"label": label, "failed": len(group), **counts})
    return pd.DataFrame(rows, columns=["label", "failed", *classes])


def time_to_act(frame: pd.DataFrame) -> pd.DataFrame:
    """Per label and cause (real vs benign or faulty, from each task's ``alert_cause``): share of hazard
    episodes whose agent switched the stove or the water main off, and the median seconds after the
    alarm it did. Outcomes without call times (an outcomes CSV) are left out."""
    hz = frame[(frame["family"] == "hazards") & frame["acted_known"].astype(bool)].copy()
    if hz.empty:
        return pd.DataFrame(columns=["label", "cause", "episodes", "acted_pct", "median_s"])
    hz["cause"] = np.where(hz["alert_cause"] == "real", "real", "benign_or_faulty")
    hz["acted"] = hz["acted_at"].notna()
    hz["acted_s"] = pd.to_numeric(hz["acted_at"], errors="coerce")
    out = hz.groupby(["label", "cause"]).agg(episodes=("acted", "size"), acted_pct=("acted", "mean"),
                                            median_s=("acted_s", "median")).reset_index()
    out["acted_pct"] = (out["acted_pct"] * 100).round(0)
    return out


def further_homes(frame: pd.DataFrame) -> pd.DataFrame:
    """Per label and family: success in other homes vs the house reweighted to those homes' task mix."""
    rows = []
    for label, group in frame.groupby("label"):
        other, house = group[group["home"] != HOUSE], group[group["home"] == HOUSE]
        if other.empty or house.empty:
            continue
        house_rate = house.groupby("task")["passed"].mean()
        for family, fam in other.groupby("family"):
            weights = fam["task"].value_counts(normalize=True)
            common = weights.index.intersection(house_rate.index)
            reweighted = (house_rate[common] * weights[common]).sum() / weights[common].sum() if len(common) else np.nan
            rows.append({"label": label, "family": family, "other_homes": round(fam["passed"].mean() * 100, 1),
                         "house_reweighted": round(reweighted * 100, 1), "pairs": len(fam)})
    return pd.DataFrame(rows, columns=["label", "family", "other_homes", "house_reweighted", "pairs"])


USAGE_COLUMNS = ["label", "task", "episodes", "tokens", "tokens_per_episode", "cost_usd", "cost_per_episode"]


def usage(frame: pd.DataFrame) -> pd.DataFrame:
    """Tokens and dollar cost per label and task, where agents reported them: totals over the
    episodes and means per episode. Episodes whose tokens are unknown are left out; the cost stays
    empty for a model without a price (docs/agents.md)."""
    df = frame.dropna(subset=["tokens"]).copy()
    if df.empty:
        return pd.DataFrame(columns=USAGE_COLUMNS)
    df["tokens"] = pd.to_numeric(df["tokens"])
    df["cost_usd"] = pd.to_numeric(df["cost_usd"])
    grouped = df.groupby(["label", "task"])
    out = grouped.agg(episodes=("tokens", "size"), tokens=("tokens", "sum")).reset_index()
    out["cost_usd"] = grouped["cost_usd"].sum(min_count=1).round(6).to_numpy()
    out["tokens_per_episode"] = (out["tokens"] / out["episodes"]).round(0)
    out["cost_per_episode"] = (out["cost_usd"] / out["episodes"]).round(6)
    return out[USAGE_COLUMNS]


#: Every table :func:`all_tables` writes, by file stem.
TABLES = {
    "main": main_table, "checks": check_rates, "skill_cost": skill_cost, "failures": failure_taxonomy,
    "time_to_act": time_to_act, "further_homes": further_homes, "usage": usage,
}


def all_tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: fn(frame) for name, fn in TABLES.items()}
