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
- time to act (the paper's Table 5): for hazard alarms, how many real and
  how many benign or faulty alarms the agent intervened on (switched the
  stove or the water main off where it was on), how many interventions came
  within 1 s of the alarm, before any image, and the median simulated
  seconds and model latency to them;
- further homes: success per family in other homes against the house's
  success reweighted to the task frequencies of those homes.

Each table covers one scope of episodes (:data:`SCOPES`): the paper's
tables the 20 core tasks in the house; extension tasks and further homes get
tables of their own. Percentages round half up (:func:`percent`).

Episodes that ended with ``transport_error`` never reached the model, those
that ended with ``protocol_error`` got an answer that was not the API's, and
those that ended with ``render_error`` lost a capture's image: all are left
out of every score (a resume reruns them). A family or the alert groups with
a core task not recorded are marked incomplete (:data:`INCOMPLETE`), never
scored over the tasks that are.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, overload

import numpy as np
import pandas as pd

from homeloop.bench.records import UNSCORED_ENDINGS
from homeloop.sim.task import Task, load_tasks
from homeloop.core.house import HOUSE_ID

#: Families in the order tables list them.
FAMILIES = ("hazards", "requests", "entry", "wellbeing", "chores")

HOUSE = HOUSE_ID

#: Columns an outcomes CSV must have, and those it may have.
OUTCOME_COLUMNS = ("model", "task", "seed", "passed")
OPTIONAL_OUTCOME_COLUMNS = ("units", "budget", "home")


#: Columns of the outcomes frame every table starts from.
OUTCOME_FRAME_COLUMNS = ["label", "home", "task", "family", "core", "alert_group", "alert_cause", "seed",
                         "passed", "units", "budget", "ended_by", "failures", "checks", "acted_at",
                         "acted_known", "acted_latency_s", "acted_before_image", "tokens", "cost_usd",
                         "query_type", "feasible", "judge_agrees"]


class OutcomesError(ValueError):
    """An outcomes file that cannot be scored at all (missing columns, unreadable)."""


@dataclass
class Outcomes:
    frame: pd.DataFrame
    rejected: list[str]


def _label(record: dict[str, Any]) -> str:
    agent = record["agent"]
    name = agent.get("model") or agent.get("name", "?")
    if agent.get("prompt"):  # a model's role prompt (docs/agents.md)
        name += f" ({agent['prompt']} prompt)"
    flags = record["world"].get("flags_label", "")
    return f"{name} [{flags}]" if flags else name


def outcomes_from_records(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per episode (see the module docstring)."""
    rows = []
    for r in records:
        if r["ended_by"] in UNSCORED_ENDINGS:
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
            "acted_at": r.get("acted_at"), **_intervention(r), "tokens": (r.get("tokens") or {}).get("total"),
            "cost_usd": r.get("cost_usd"),
            "query_type": r.get("query_type"), "feasible": r.get("feasible"),  # home-control episodes only
            "judge_agrees": (r.get("judge") or {}).get("agrees"),  # where a model judge was asked too
        })
    return pd.DataFrame(rows, columns=OUTCOME_FRAME_COLUMNS)


def _acted_call(record: dict[str, Any]) -> int | None:
    """The index in ``calls`` of the intervening call (records before ``acted_call``: the first
    hub setting that ended when the record says the agent acted)."""
    if record.get("acted_at") is None:
        return None
    if record.get("acted_call") is not None:
        return int(record["acted_call"])
    return next((i for i, c in enumerate(record.get("calls") or [])
                 if c.get("tool") == "hub_set_state" and c.get("t_end") == record["acted_at"]), None)


def _intervention(record: dict[str, Any]) -> dict[str, Any]:
    """``acted_latency_s`` (the model's wall seconds up to the intervening call; NaN where unknown) and
    ``acted_before_image`` (whether it came before the first capture that showed an image)."""
    index = _acted_call(record)
    if index is None:
        return {"acted_latency_s": np.nan, "acted_before_image": None}
    calls = record.get("calls") or []
    images = record["world"].get("flags", {}).get("images", True)
    first_image = next((i for i, c in enumerate(calls) if _shows_image(c, images)), len(calls))
    return {"acted_latency_s": _latency_before(record.get("model_calls"), index, calls[index].get("t_start")),
            "acted_before_image": index < first_image}


def _shows_image(call: dict[str, Any], images: bool) -> bool:
    """A capture whose result carried pixels (any capture, when images were off)."""
    data = call.get("data")
    if call.get("error") or not isinstance(data, dict) or "capture_id" not in data or "image" not in data:
        return False
    return not images or bool(data.get("image_file") or data.get("image"))


def _latency_before(model_calls: list[dict[str, Any]] | None, index: int, t_start: float | None) -> float:
    """The summed ``latency_s`` of the model's requests up to the one whose reply made call ``index``
    (records without ``call_index``: the requests made by the time that call started)."""
    if not model_calls:
        return np.nan
    upto = next((n for n, m in enumerate(model_calls) if m.get("call_index") == index), None)
    if upto is None:
        made = [n for n, m in enumerate(model_calls) if t_start is not None and m.get("t", np.inf) <= t_start]
        upto = made[-1] if made else None
    if upto is None:
        return np.nan
    latencies = [m.get("latency_s") for m in model_calls[:upto + 1]]
    known = [v for v in latencies if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(known) < len(latencies):
        return np.nan
    return float(sum(known))


def outcomes_from_run_dirs(run_dirs: Iterable[str | Path]) -> Outcomes:
    """Outcomes of every readable record in the run folders, read one record at a time;
    unreadable records are named in ``rejected``."""
    from homeloop.bench.records import iter_records

    return outcomes_from_read(iter_records(run_dirs))


def outcomes_from_read(read: Iterable[tuple[Path, dict[str, Any] | None, str]]) -> Outcomes:
    """Outcomes of records as they are read, ``(path, record, "")`` or ``(path, None, why not)`` (from
    run folders, :func:`homeloop.bench.records.iter_records`, or from Inspect logs); those that
    could not be read are named in ``rejected``."""
    rejected: list[str] = []

    def readable() -> Iterable[dict[str, Any]]:
        for _, record, why in read:
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


def _number(row: dict[str, str], column: str, least: float | None, valid: str) -> float:
    """A finite number of at least ``least`` (above 0 where None): units spent, or a budget."""
    try:
        value = float(row[column])
    except ValueError:
        value = np.nan
    if not np.isfinite(value) or (value <= 0 if least is None else value < least):
        raise ValueError(f"{column} must be a number {valid}, got {row[column]!r}")
    return value


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
    units = _number(row, "units", 0.0, "0 or more") if row.get("units") not in (None, "") else np.nan
    budget = _number(row, "budget", None, "above 0") if row.get("budget") not in (None, "") else float(task.budget_units)
    return {"label": row["model"].strip(), "home": (row.get("home") or HOUSE).strip(), "task": task_id,
            "family": task.family, "core": task.core, "alert_group": task.alert_group,
            "alert_cause": task.alert_cause, "acted_known": False, "seed": seed,
            "passed": _parse_bool(row["passed"]), "units": units, "budget": budget, "ended_by": None,
            "failures": (), "checks": {}, "acted_at": None, "acted_latency_s": np.nan,
            "acted_before_image": None, "tokens": None, "cost_usd": None}


# --- tables ---------------------------------------------------------------------------------------


@overload
def percent(share: pd.DataFrame, digits: int = 0) -> pd.DataFrame: ...
@overload
def percent(share: pd.Series, digits: int = 0) -> pd.Series: ...
@overload
def percent(share: float, digits: int = 0) -> float: ...


def percent(share: pd.DataFrame | pd.Series | float, digits: int = 0) -> pd.DataFrame | pd.Series | float:
    """``share`` × 100 rounded half up, as the paper rounds (12.5 → 13), where Python's and numpy's
    round() go to the even neighbour (12). Float noise is cut first, so 0.145 × 100 (14.4999…) counts
    as 14.5. Takes a number, a Series or a frame; every table's percentages go through it."""
    scale = 10.0 ** digits
    values = np.floor(np.round(np.asarray(share, dtype=float) * 100 * scale, 6) + 0.5) / scale
    if isinstance(share, pd.DataFrame):
        return pd.DataFrame(values, index=share.index, columns=share.columns)
    if isinstance(share, pd.Series):
        return pd.Series(values, index=share.index, name=share.name)
    return float(values)


@dataclass(frozen=True)
class Scope:
    """Which episodes a table covers (docs/scores.md, "Scope of the tables")."""

    name: str
    title: str
    keep: Callable[[pd.DataFrame], pd.Series]
    #: Home-control episodes (a ``query_type``) have tables of their own (homeloop.bench.control.scores).
    control: bool = False

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        if len(frame) and "query_type" in frame:
            frame = frame[frame["query_type"].notna() == self.control]
        return frame[self.keep(frame).astype(bool)] if len(frame) else frame


def _in_house(frame: pd.DataFrame) -> pd.Series:
    return frame["home"] == HOUSE


#: The episodes tables cover: the paper's tables the core tasks in the house; the others their own.
SCOPES = {
    "core": Scope("core", "the core tasks in the house, as the paper's Tables 3-5",
                  lambda f: f["core"].astype(bool) & _in_house(f)),
    "extension": Scope("extension", "the extension tasks in the house",
                       lambda f: ~f["core"].astype(bool) & _in_house(f)),
    "further_homes": Scope("further_homes", "every task in homes other than the house", lambda f: ~_in_house(f)),
    "against_house": Scope("against_house", "homes other than the house, against the house",
                           lambda f: pd.Series(True, index=f.index)),
    "all": Scope("all", "every episode", lambda f: pd.Series(True, index=f.index)),
}


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


#: What a score cell holds where the family's or alert group's tasks are not all recorded.
INCOMPLETE = "n/a"


def core_tasks_by(field: str) -> dict[str, set[str]]:
    """The core tasks of each family (``field="family"``) or alert group (``"alert_group"``), as the
    task files give them."""
    out: dict[str, set[str]] = {}
    for task in load_tasks().values():
        key = getattr(task, field)
        if task.core and key is not None:
            out.setdefault(key, set()).add(task.id)
    return out


def missing_tasks(core: pd.DataFrame) -> dict[str, dict[str, list[str]]]:
    """Per label, the families and alert groups whose core tasks are not all recorded, each with the
    tasks missing: a family's task with no record at all; an alert group's task with no record at one of
    the label's seeds (named with those seeds), since a group is credited seed by seed."""
    families, groups = core_tasks_by("family"), core_tasks_by("alert_group")
    out: dict[str, dict[str, list[str]]] = {}
    for label, runs in core.groupby("label"):
        seeds = sorted(runs["seed"].unique())
        at_seed = {s: set(runs.loc[runs["seed"] == s, "task"]) for s in seeds}
        gaps = {f: sorted(tasks - set(runs["task"])) for f, tasks in families.items()}
        for group, tasks in groups.items():
            lacking = {t: [s for s in seeds if t not in at_seed[s]] for t in sorted(tasks)}
            gaps[f"{group} group"] = [t if len(lost) == len(seeds) else f"{t} (seed {', '.join(map(str, lost))})"
                                      for t, lost in lacking.items() if lost]
        out[str(label)] = {unit: tasks for unit, tasks in gaps.items() if tasks}
    return out


def main_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per label over the core tasks in the house (the paper's main table). A family or the
    alert groups with a task not recorded are :data:`INCOMPLETE`, and so is the balanced score then;
    ``missing`` names those tasks."""
    core = SCOPES["core"](frame)
    if core.empty:
        return pd.DataFrame(columns=["model", "balanced", *FAMILIES, "alert_groups", "missing"])
    fam = family_scores(core)
    table = pd.DataFrame(index=fam.index)
    for seed in sorted(core["seed"].unique()):
        at_seed = core[core["seed"] == seed]
        table[f"passed_seed{seed}"] = at_seed.groupby(["label", "task"])["passed"].all().groupby("label").sum()
    table["balanced"] = percent(fam["balanced"], 1)
    for f in FAMILIES:
        table[f] = percent(fam[f])
    table["alert_groups"] = percent(alert_group_scores(core))
    _mark_incomplete(table, missing_tasks(core))
    return table.reset_index().rename(columns={"label": "model"})


def _mark_incomplete(table: pd.DataFrame, missing: dict[str, dict[str, list[str]]]) -> None:
    """Put :data:`INCOMPLETE` in the cells whose tasks are not all recorded, and name the tasks."""
    cells: dict[str, list[str]] = {col: [] for col in ("balanced", *FAMILIES, "alert_groups")}
    for label, gaps in missing.items():
        for unit in gaps:
            cells["alert_groups" if unit.endswith(" group") else unit].append(label)
        if any(f in gaps for f in FAMILIES):
            cells["balanced"].append(label)
    for col, labels in cells.items():
        if labels:
            table[col] = table[col].astype(object).where(~table.index.isin(labels), INCOMPLETE)
    table["missing"] = ["; ".join(f"{unit}: {', '.join(tasks)}" for unit, tasks in missing.get(label, {}).items())
                        for label in table.index]


EXTENSION_COLUMNS = ["label", "family", "task", "runs", "success", "cost_pct"]


def extension_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per label and extension task in the house: runs, success and skill cost (percent)."""
    ext = SCOPES["extension"](frame).copy()
    if ext.empty:
        return pd.DataFrame(columns=EXTENSION_COLUMNS)
    ext["share"] = pd.to_numeric(ext["units"]) / pd.to_numeric(ext["budget"])
    out = ext.groupby(["label", "family", "task"], sort=True).agg(
        runs=("passed", "size"), success=("passed", "mean"), cost_pct=("share", "mean")).reset_index()
    out["success"] = percent(out["success"])
    out["cost_pct"] = percent(out["cost_pct"], 1)
    return out[EXTENSION_COLUMNS]


def check_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Each check's success rate per label and task, so a failure traces to its check."""
    rows = [{"label": label, "task": task, "check": cid, "passed": ok}
            for label, task, checks in zip(frame["label"], frame["task"], frame["checks"])
            for cid, ok in checks.items()]
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
    out = percent(fam, 1)
    out["cost_pct"] = percent(fam.mean(axis=1), 1)
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


#: Interventions this many simulated seconds after the alarm, or fewer, count as immediate (Table 5).
WITHIN_S = 1.0

TIME_TO_ACT_COLUMNS = ["label", "real", "real_alarms", "benign_or_faulty", "benign_or_faulty_alarms",
                       "interventions", "within_1s", "before_image", "median_s", "median_latency_s"]


def time_to_act(frame: pd.DataFrame) -> pd.DataFrame:
    """Per label, the paper's Table 5 over hazard alarms: real alarms intervened on (of ``real_alarms``),
    benign or faulty ones (of theirs, from each task's ``alert_cause``), and over the interventions: how
    many came within :data:`WITHIN_S` of the alarm and before any image, the median simulated seconds
    from the alarm and the median model latency before them. Outcomes without call times (an outcomes
    CSV) are left out."""
    hz = frame[(frame["family"] == "hazards") & frame["acted_known"].astype(bool)].copy()
    if hz.empty:
        return pd.DataFrame(columns=TIME_TO_ACT_COLUMNS)
    hz["acted_s"] = pd.to_numeric(hz["acted_at"], errors="coerce")
    hz["acted"] = hz["acted_s"].notna()
    hz["real_alarm"] = hz["alert_cause"] == "real"
    hz["latency"] = pd.to_numeric(hz["acted_latency_s"], errors="coerce")
    rows = []
    for label, g in hz.groupby("label", sort=True):
        acted = g[g["acted"]]
        rows.append({"label": label, "real": int((g["acted"] & g["real_alarm"]).sum()),
                     "real_alarms": int(g["real_alarm"].sum()),
                     "benign_or_faulty": int((g["acted"] & ~g["real_alarm"]).sum()),
                     "benign_or_faulty_alarms": int((~g["real_alarm"]).sum()), "interventions": len(acted),
                     "within_1s": int((acted["acted_s"] <= WITHIN_S + 1e-9).sum()),
                     "before_image": sum(v is True for v in acted["acted_before_image"]),
                     "median_s": _median(acted["acted_s"]), "median_latency_s": _median(acted["latency"])})
    return pd.DataFrame(rows, columns=TIME_TO_ACT_COLUMNS)


def _median(values: pd.Series) -> float:
    """The median of the known values (NaN where none is known)."""
    known = values.dropna()
    return float(known.median()) if len(known) else np.nan


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
            rows.append({"label": label, "family": family, "other_homes": percent(fam["passed"].mean(), 1),
                         "house_reweighted": percent(reweighted, 1), "pairs": len(fam)})
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


@dataclass(frozen=True)
class ScoreTable:
    """A table: how it is made, and the scope of episodes it is made from."""

    make: Callable[[pd.DataFrame], pd.DataFrame]
    scope: Scope

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        return self.make(self.scope(frame))

    @property
    def title(self) -> str:
        """The episodes the table covers, to print with it."""
        return self.scope.title


def _scoped(scope: str) -> dict[str, ScoreTable]:
    prefix = "" if scope == "core" else f"{scope}_"
    return {f"{prefix}skill_cost": ScoreTable(skill_cost, SCOPES[scope]),
            f"{prefix}failures": ScoreTable(failure_taxonomy, SCOPES[scope]),
            f"{prefix}time_to_act": ScoreTable(time_to_act, SCOPES[scope])}


#: Every table :func:`all_tables` writes, by file stem; each covers the episodes of its scope.
TABLES: dict[str, ScoreTable] = {
    "main": ScoreTable(main_table, SCOPES["core"]),
    "checks": ScoreTable(check_rates, SCOPES["all"]),
    **_scoped("core"),
    "extension": ScoreTable(extension_table, SCOPES["extension"]),
    **_scoped("extension"),
    "further_homes": ScoreTable(further_homes, SCOPES["against_house"]),
    **_scoped("further_homes"),
    "usage": ScoreTable(usage, SCOPES["all"]),
}


def all_tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: table(frame) for name, table in TABLES.items()}
