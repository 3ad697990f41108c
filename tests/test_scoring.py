"""Score tables from outcomes: the definitions of docs/scores.md, checked against hand sums."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from statistics import mean, median

import pytest

from homeloop.bench import scoring
from homeloop.bench.records import RecordError, SCHEMA_VERSION, read_record, read_records, write_record
from homeloop.sim.task import load_tasks

TASKS = load_tasks()
CORE = sorted(t for t, task in TASKS.items() if task.core)


def half_up(value, digits=0):
    """The paper's rounding, worked out in decimal (12.5 -> 13)."""
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


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
        assert row[f] == half_up(fam_scores[f])
    assert row["balanced"] == half_up(mean(fam_scores.values()), 1)
    # Alert groups: a seed counts for a group only when all its tasks passed at that seed.
    groups = {TASKS[t].alert_group for t in CORE if TASKS[t].alert_group}
    expected = []
    for g in groups:
        members = [t for t in CORE if TASKS[t].alert_group == g]
        expected.append(mean([1.0, 0.0 if any(t in failed_at_1.values() for t in members) else 1.0]))
    assert row["alert_groups"] == half_up(mean(expected) * 100)


def test_skill_cost_is_family_balanced(outcomes):
    path, _ = outcomes
    table = scoring.skill_cost(scoring.read_outcomes_csv(path).frame).set_index("label")
    expected = mean(mean(20 / TASKS[t].budget_units for t in CORE if TASKS[t].family == f)
                    for f in scoring.FAMILIES) * 100
    assert table.loc["m", "cost_pct"] == half_up(expected, 1)


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
    row = scoring.time_to_act(scoring.outcomes_from_records(records)).set_index("label").loc["scripted"]
    real = [t for t in hazards if TASKS[t].alert_cause == "real"]
    assert row["real_alarms"] == len(real)
    assert row["benign_or_faulty_alarms"] == len(hazards) - len(real)
    csv_path = _write_outcomes(tmp_path / "o.csv", [("m", t, 0, "true", 1) for t in hazards])
    assert scoring.time_to_act(scoring.read_outcomes_csv(csv_path).frame).empty


def test_failure_taxonomy_of_no_failures_is_an_empty_table():
    frame = scoring.outcomes_from_records([_record("a")])
    assert scoring.failure_taxonomy(frame).empty


# --- rounding, scopes and time to act -------------------------------------------------------------


def test_percentages_round_half_up():
    assert scoring.percent(0.125) == 13 == half_up(12.5)
    assert scoring.percent(0.625) == 63
    assert scoring.percent(0.145) == 15  # 0.145 * 100 is 14.499... in floats
    assert scoring.percent(0.12345, 1) == 12.3


def test_an_alert_group_score_of_twelve_and_a_half_is_thirteen(tmp_path):
    # The paper's Figure 4 outcomes re-tabulated: one of four groups credited at one of two seeds.
    groups = sorted({TASKS[t].alert_group for t in CORE if TASKS[t].alert_group})
    credited = groups[0]
    rows = []
    for seed in (0, 1):
        for t in CORE:
            group = TASKS[t].alert_group
            first_of_group = group and t == min(m for m in CORE if TASKS[m].alert_group == group)
            ok = not first_of_group or (group == credited and seed == 0)
            rows.append(("m", t, seed, str(ok).lower(), 1))
    frame = scoring.read_outcomes_csv(_write_outcomes(tmp_path / "o.csv", rows)).frame
    share = 1 / (2 * len(groups))
    assert round(share * 100) == 12  # what Python's round() made of it
    assert scoring.main_table(frame).set_index("model").loc["m", "alert_groups"] == 13


def _hazard(task, home="house", images=True, acted=None, calls=(), model_calls=None):
    """A hazard episode's record; ``acted`` is the index in ``calls`` of the intervening call."""
    calls = [dict(c) for c in calls]
    return _record(f"{task}-{home}", task=TASKS[task].model_dump(mode="json"), calls=calls,
                   world={"home": home, "seed": 0, "flags": {"images": images}}, passed=False, failures=["Under"],
                   acted_at=calls[acted]["t_end"] if acted is not None else None, acted_call=acted,
                   model_calls=model_calls)


def _setting(t_end):
    return {"tool": "hub_set_state", "arguments": {}, "data": {}, "t_start": round(t_end - 0.3, 6), "t_end": t_end}


def _capture(t_end, pixels):
    return {"tool": "cameras_capture", "t_start": t_end - 0.5, "t_end": t_end,
            "data": {"capture_id": "cap_1", "image": None, **({"image_file": "x/cap_1.png"} if pixels else {})}}


def test_tables_cover_their_scope_and_time_to_act_has_the_papers_columns():
    real = [t for t in CORE if TASKS[t].family == "hazards" and TASKS[t].alert_cause == "real"]
    benign = [t for t in CORE if TASKS[t].family == "hazards" and TASKS[t].alert_cause != "real"]
    extension = next(t for t, task in TASKS.items() if not task.core and task.family == "hazards")
    records = [
        # acts at once, before any image, after 2 s of model latency
        _hazard(real[0], acted=0, calls=[_setting(0.3)], model_calls=[{"t": 0.0, "latency_s": 2.0, "call_index": 0}]),
        # looks first (an image), then acts; a third request (the report) comes after
        _hazard(real[1], acted=1, calls=[_capture(1.0, True), _setting(5.3)],
                model_calls=[{"t": 0.0, "latency_s": 1.0, "call_index": 0}, {"t": 1.0, "latency_s": 3.0, "call_index": 1},
                             {"t": 5.3, "latency_s": 9.0, "call_index": None}]),
        # images off: a capture without pixels is an image all the same; latency unknown
        _hazard(benign[0], images=False, acted=1, calls=[_capture(1.0, False), _setting(12.5)],
                model_calls=[{"t": 0.0, "call_index": 0}, {"t": 1.0, "call_index": 1}]),
        _hazard(benign[1]),  # never acts
        _hazard(extension, acted=0, calls=[_setting(0.3)]),
        _hazard(real[0], home="home_2", acted=0, calls=[_setting(0.3)]),
    ]
    frame = scoring.outcomes_from_records(records)
    tables = scoring.all_tables(frame)
    row = tables["time_to_act"].set_index("label").loc["scripted"]
    assert (row["real"], row["real_alarms"]) == (2, 2)
    assert (row["benign_or_faulty"], row["benign_or_faulty_alarms"]) == (1, 2)
    assert row["interventions"] == 3 and row["within_1s"] == 1
    assert row["before_image"] == 1  # only the first acted before its first image
    assert row["median_s"] == median([0.3, 5.3, 12.5])
    assert row["median_latency_s"] == median([2.0, 1.0 + 3.0])  # the unknown one is left out
    # the core tables hold the four core episodes in the house; the others their own
    assert tables["failures"].set_index("label").loc["scripted", "failed"] == 4
    assert tables["extension_failures"].set_index("label").loc["scripted", "failed"] == 1
    assert tables["further_homes_failures"].set_index("label").loc["scripted", "failed"] == 1
    assert tables["extension_time_to_act"].set_index("label").loc["scripted", "interventions"] == 1
    assert list(tables["extension"]["task"]) == [extension]
    assert "core tasks in the house" in scoring.TABLES["skill_cost"].title
    assert "extension" in scoring.TABLES["extension_skill_cost"].title


# --- interventions from real episodes ---------------------------------------------------------------


@pytest.fixture(scope="module")
def switch_offs(house_home, tmp_path_factory):
    """Episodes where a replayed transcript switches every burner of the stove off, one call each (the
    unlit ones first), then stops: in a scenario where one burner is lit, and in one where none is."""
    from homeloop.bench import runner
    from homeloop.bench.records import read_records
    from homeloop.sim.episode import Episode

    base = tmp_path_factory.mktemp("switch_offs")
    homes = {"house": house_home.write(base / "house.json")}
    tasks = ("handle_smoke_alarm", "smoke_sensor_fault")
    found = {}
    for task in tasks:
        stove = next(d for d in Episode(house_home, task, seed=0, images=False).world.devices.values()
                     if d.type == "stove")
        found[task] = dict(stove.values)
    burners = sorted(found[tasks[0]], key=lambda b: (found[tasks[0]][b], b))
    lines = [{"content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
        "name": "hub_set_state", "arguments": {"device_id": stove.id, "field": b, "value": False}}}]}
        for i, b in enumerate(burners)] + [{"content": "All burners are off."}]
    replies = base / "replies.jsonl"
    replies.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out = base / "run"
    runner.run(runner.plan(homes, tasks, "unitree_g1_d_ultimate", [0], runner.Flags(images=False)), "replay", out,
               agent_options={"replies": str(replies)})
    return {r["world"]["task"]: r for r in read_records([out]).records}, found, burners


def test_switching_off_what_is_already_off_is_no_intervention(switch_offs):
    records, found, burners = switch_offs
    lit = [b for b in burners if found["handle_smoke_alarm"][b]]
    assert lit and burners.index(lit[0]) > 0 and not any(found["smoke_sensor_fault"].values())
    record = records["handle_smoke_alarm"]
    assert record["acted_at"] == record["calls"][burners.index(lit[0])]["t_end"]
    assert record["acted_call"] == burners.index(lit[0])
    assert records["smoke_sensor_fault"]["acted_at"] is None
    (row,) = scoring.time_to_act(scoring.outcomes_from_records(records.values())).itertuples()
    assert (row.real, row.benign_or_faulty, row.interventions) == (1, 0, 1)


# --- incomplete families and alert groups ------------------------------------------------------------


def _all_passed(tmp_path, drop=lambda task, seed: False):
    """Model "m" passing every core task at seeds 0 and 1, but the (task, seed) pairs ``drop`` names."""
    rows = [("m", t, seed, "true", 1) for seed in (0, 1) for t in CORE if not drop(t, seed)]
    return scoring.read_outcomes_csv(_write_outcomes(tmp_path / "o.csv", rows)).frame


def test_a_complete_run_names_no_missing_task(tmp_path):
    row = scoring.main_table(_all_passed(tmp_path)).set_index("model").loc["m"]
    assert row["missing"] == "" and row["balanced"] == 100.0
    assert all(row[f] == 100 for f in scoring.FAMILIES) and row["alert_groups"] == 100


def test_a_family_with_a_task_not_recorded_is_incomplete_never_100(tmp_path):
    gone = next(t for t in CORE if TASKS[t].alert_group)  # a task of a family and an alert group
    family, group = TASKS[gone].family, TASKS[gone].alert_group
    row = scoring.main_table(_all_passed(tmp_path, lambda t, s: t == gone)).set_index("model").loc["m"]
    assert row[family] == scoring.INCOMPLETE and row["balanced"] == scoring.INCOMPLETE
    assert row["alert_groups"] == scoring.INCOMPLETE
    assert all(row[f] == 100 for f in scoring.FAMILIES if f != family)
    assert row["missing"] == f"{family}: {gone}; {group} group: {gone}"


def test_an_alert_group_task_missing_at_one_seed_leaves_the_groups_incomplete(tmp_path):
    gone = next(t for t in CORE if TASKS[t].alert_group)
    row = scoring.main_table(_all_passed(tmp_path, lambda t, s: t == gone and s == 1)).set_index("model").loc["m"]
    assert row["alert_groups"] == scoring.INCOMPLETE
    assert row["balanced"] == 100.0 and row[TASKS[gone].family] == 100  # the task has a record: its rate is known
    assert row["missing"] == f"{TASKS[gone].alert_group} group: {gone} (seed 1)"


def test_the_tasks_a_family_should_have_come_from_the_task_files():
    for family in scoring.FAMILIES:
        assert scoring.core_tasks_by("family")[family] == {t for t in CORE if TASKS[t].family == family}
    groups = scoring.core_tasks_by("alert_group")
    assert set(groups) == {TASKS[t].alert_group for t in CORE if TASKS[t].alert_group}


# --- outcome rows that cannot be scored -----------------------------------------------------------------


def test_negative_units_and_a_non_positive_budget_are_rejected_with_their_row(tmp_path):
    task = CORE[0]
    path = tmp_path / "o.csv"
    path.write_text("model,task,seed,passed,units,budget\n"
                    f"m,{task},0,true,10,200\nm,{task},1,true,-5,200\nm,{task},2,true,5,0\n"
                    f"m,{task},3,true,5,-1\nm,{task},4,true,nan,200\nm,{task},5,true,5,inf\n", encoding="utf-8")
    result = scoring.read_outcomes_csv(path)
    assert list(result.frame["seed"]) == [0]
    assert result.rejected == [f"{path}: row 3: units must be a number 0 or more, got '-5'",
                               f"{path}: row 4: budget must be a number above 0, got '0'",
                               f"{path}: row 5: budget must be a number above 0, got '-1'",
                               f"{path}: row 6: units must be a number 0 or more, got 'nan'",
                               f"{path}: row 7: budget must be a number above 0, got 'inf'"]
    cost = scoring.skill_cost(result.frame).set_index("label").loc["m", "cost_pct"]
    assert cost == half_up(10 / 200 * 100, 1)
