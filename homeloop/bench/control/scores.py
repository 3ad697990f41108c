"""Score tables of the home-control track (docs/tasks.md, "Home control"), from the outcomes frame of
:mod:`homeloop.bench.scoring` (its rows with a ``query_type``).

- ``control``: per model and each of the twelve categories (query type ×
  feasible or infeasible, always all twelve, in order): the runs, the
  success rate in percent (``n/a`` without runs), and SimuHome's published
  result for the category (:data:`SIMUHOME_GPT51`) beside it; then, where
  a model judge was asked too (:mod:`homeloop.bench.control.judge`), the
  runs it gave a yes or no on (``judged``) and how often that verdict was
  the rule's (``judge_agrees``, percent; ``n/a`` without). The rule's
  verdict is the score;
- ``control_failures``: per model, the failed episodes and how many show
  each class of the error taxonomy
  (:data:`homeloop.bench.control.goals.FAILURE_CLASSES`, and ``Limit``).
"""

from __future__ import annotations

import pandas as pd

from homeloop.bench.control.goals import FAILURE_CLASSES
from homeloop.bench.control.model import QUERY_CODES, QUERY_TYPES
from homeloop.bench.scoring import INCOMPLETE, ScoreTable, Scope, percent

#: SimuHome's best published results (GPT-5.1, ICLR 2026), success in percent: query type -> (feasible,
#: infeasible); docs/tasks.md, "Home control".
SIMUHOME_GPT51: dict[str, tuple[int, int]] = {
    "state_inquiry": (100, 94), "implicit_intent": (100, 80), "explicit_control": (94, 78),
    "time_schedule": (92, 60), "event_automation": (72, 44), "coordinated_schedule": (50, 34)}

CONTROL_COLUMNS = ["label", "code", "query_type", "feasible", "runs", "success", "simuhome_gpt51", "judged",
                   "judge_agrees"]
CONTROL_FAILURE_COLUMNS = ["label", "failed", *FAILURE_CLASSES, "Limit"]

SCOPE = Scope("control", "the home-control episodes", lambda f: pd.Series(True, index=f.index), control=True)


def control_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Success per model and category (see the module docstring)."""
    rows = []
    for label, runs in frame.groupby("label", sort=True):
        for query_type in QUERY_TYPES:
            for feasible in (True, False):
                mine = runs[(runs["query_type"] == query_type) & (runs["feasible"].astype(bool) == feasible)]
                judged = [bool(a) for a in mine["judge_agrees"] if a is not None and a == a]  # NaN: not judged
                rows.append({"label": label, "code": QUERY_CODES[query_type], "query_type": query_type,
                             "feasible": "feasible" if feasible else "infeasible", "runs": len(mine),
                             "success": percent(float(mine["passed"].mean())) if len(mine) else INCOMPLETE,
                             "simuhome_gpt51": SIMUHOME_GPT51[query_type][0 if feasible else 1],
                             "judged": len(judged),
                             "judge_agrees": percent(sum(judged) / len(judged)) if judged else INCOMPLETE})
    return pd.DataFrame(rows, columns=CONTROL_COLUMNS)


def control_failures(frame: pd.DataFrame) -> pd.DataFrame:
    """Failed episodes per model and how many show each class (see the module docstring)."""
    rows = []
    for label, runs in frame.groupby("label", sort=True):
        failed = runs[~runs["passed"].astype(bool)]
        row: dict[str, object] = {"label": label, "failed": len(failed)}
        for name in (*FAILURE_CLASSES, "Limit"):
            row[name] = int(sum(name in tuple(f) for f in failed["failures"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=CONTROL_FAILURE_COLUMNS)


#: The tables of the home-control track, by file stem.
TABLES: dict[str, ScoreTable] = {"control": ScoreTable(control_table, SCOPE),
                                 "control_failures": ScoreTable(control_failures, SCOPE)}


def tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: table(frame) for name, table in TABLES.items()}
