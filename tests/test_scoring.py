"""Score tables from outcomes: the definitions of docs/scores.md, checked against hand sums."""

from __future__ import annotations

import json
from statistics import mean

import pytest

from homeloop.bench import scoring
from homeloop.bench.records import RecordError, SCHEMA_VERSION, read_record, read_records, write_record
from homeloop.bench.tasks import load_tasks

TASKS = load_tasks()
CORE = sorted(t for t, task in TASKS.items() if task.core)


def _write_outcomes(path, rows):
    with open(path, "w") as fh:
        fh.write("model,task,seed,passed,units\n")
        for r in rows:
            fh.write(",".join(str(x) for x in r) + "\n")
    return path


@pytest.fixture
def outcomes(tmp_path):
    # model "m": passes every core task at seed 0; at seed 1 fails the first task of each family.
    first_of_family = {f: sorted(t for t in CORE if TASKS[t].family == f)[0] for f in scoring.FAMILIES}
    rows = []
    for seed in (0, 1):
        for t in CORE:
            ok = not (seed == 1 and t in first_of_family.values())
            rows.append(("m", t, seed, str(ok).lower(), 20))
    return _write_outcomes(tmp_path / "o.csv", rows), first_of_family


def test_main_table_follows_the_definitions(outcomes):
    path, failed_at_1 = outcomes
    frame = scoring.read_outcomes_csv(path).frame
    row = scoring.main_table(frame).set_index("model").loc["m"]
    assert row["passed_seed0"] == len(CORE)
    assert row["passed_seed1"] == len(CORE) - len(failed_at_1)
    fam_scores = {}
    for f in scoring.FAMILIES:
        tasks = [t for t in CORE if TASKS[t].family == f]
        rates = [0.5 if t in failed_at_1.values() else 1.0 for t in tasks]
        fam_scores[f] = mean(rates) * 100
        assert row[f] == round(fam_scores[f])
    assert row["balanced"] == round(mean(fam_scores.values()), 1)
    # Alert groups: a seed counts for a group only when all its tasks passed at that seed.
    groups = {TASKS[t].alert_group for t in CORE if TASKS[t].alert_group}
    expected = []
    for g in groups:
        members = [t for t in CORE if TASKS[t].alert_group == g]
        expected.append(mean([1.0, 0.0 if any(t in failed_at_1.values() for t in members) else 1.0]))
    assert row["alert_groups"] == round(mean(expected) * 100)


def test_skill_cost_is_family_balanced(outcomes):
    path, _ = outcomes
    table = scoring.skill_cost(scoring.read_outcomes_csv(path).frame).set_index("label")
    expected = mean(mean(20 / TASKS[t].budget_units for t in CORE if TASKS[t].family == f)
                    for f in scoring.FAMILIES) * 100
    assert table.loc["m", "cost_pct"] == round(expected, 1)


def test_bad_outcome_rows_are_named_and_the_rest_scored(tmp_path):
    good = CORE[0]
    path = _write_outcomes(tmp_path / "o.csv", [("m", good, 0, "true", 1), ("m", "no_such_task", 0, "true", 1),
                                                ("m", good, 1, "maybe", 1)])
    result = scoring.read_outcomes_csv(path)
    assert len(result.frame) == 1
    assert any("row 3" in r and "no_such_task" in r for r in result.rejected)
    assert any("row 4" in r and "maybe" in r for r in result.rejected)


def test_missing_columns_is_one_clear_error(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("model,task\nm,x\n")
    with pytest.raises(scoring.OutcomesError, match="missing column.*seed"):
        scoring.read_outcomes_csv(path)


def _record(eid, **over):
    task = TASKS[CORE[0]]
    rec = {"episode_id": eid, "world": {"home": "house", "seed": 0}, "task": task.model_dump(mode="json"),
           "agent": {"name": "scripted"}, "calls": [], "checks": [{"id": "c", "passed": True}], "passed": True,
           "units_spent": 10, "budget": task.budget_units, "ended_by": "stop"}
    rec.update(over)
    return rec


def test_records_round_trip_and_bad_records_are_named(tmp_path):
    write_record(tmp_path, _record("a"))
    write_record(tmp_path, _record("b", ended_by="transport_error"))
    (tmp_path / "episodes" / "c.json").write_text('{"schema": "' + SCHEMA_VERSION + '", "episode')
    (tmp_path / "episodes" / "d.json").write_text(json.dumps({**_record("d"), "schema": "homeloop.episode/0"}))
    result = read_records([tmp_path])
    assert sorted(r["episode_id"] for r in result.records) == ["a", "b"]
    reasons = dict((p.name, why) for p, why in result.rejected)
    assert "not a complete JSON record" in reasons["c.json"]
    assert "homeloop.episode/0" in reasons["d.json"]
    frame = scoring.outcomes_from_records(result.records)
    assert list(frame["task"]) == [CORE[0]]  # the transport error is not the model's failure
    with pytest.raises(RecordError, match="c.json"):
        read_record(tmp_path / "episodes" / "c.json")


def test_time_to_act_splits_by_each_task_files_cause_and_skips_outcomes_without_times(tmp_path):
    hazards = sorted(t for t, task in TASKS.items() if task.family == "hazards")
    records = [_record(f"{t}-{i}", task=TASKS[t].model_dump(mode="json"), acted_at=(12.5 if i else None))
               for i, t in enumerate(hazards)]
    table = scoring.time_to_act(scoring.outcomes_from_records(records)).set_index("cause")
    real = [t for t in hazards if TASKS[t].alert_cause == "real"]
    assert table.loc["real", "episodes"] == len(real)
    assert table.loc["benign_or_faulty", "episodes"] == len(hazards) - len(real)
    csv_path = _write_outcomes(tmp_path / "o.csv", [("m", t, 0, "true", 1) for t in hazards])
    assert scoring.time_to_act(scoring.read_outcomes_csv(csv_path).frame).empty


def test_failure_taxonomy_of_no_failures_is_an_empty_table():
    frame = scoring.outcomes_from_records([_record("a")])
    assert scoring.failure_taxonomy(frame).empty
