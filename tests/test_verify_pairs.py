"""The verify stage: the scripted reference agent on the screened pairs, its reasons, its resume,
and the same tables from a Dask cluster started apart (docs/pipeline.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.bench.pairs import HOUSE, NOT_RUN_HOME, NOT_RUN_NO_VERIFY, NOT_RUN_ROBOT, sample_homes
from homeloop.sim.task import load_tasks
from homeloop.pipeline.applicability import screen_homes
from homeloop.pipeline.verify_pairs import (
    OUTCOMES,
    VerifySettings,
    home_keys,
    reason_kind,
    verified_table,
    verify_counts,
    verify_homes_partition,
    verify_pair,
    verify_plan,
)
from homeloop.sim.episode import DEFAULT_ROBOT

FAST_TASKS = ("kitchen_fire_emergency", "smoke_sensor_fault")


@pytest.fixture(scope="module")
def house_build(house_home, catalog, tmp_path_factory):
    """A folder laid out as a build holding only the house, and its screening for every body."""
    out = tmp_path_factory.mktemp("house-build")
    house_home.write(out / "homes" / HOUSE / "home.json")
    screened = screen_homes([house_home], load_tasks(), None, catalog)
    return out, screened


def play_stage(out: Path, screened: pd.DataFrame, settings: VerifySettings) -> tuple[pd.DataFrame, list[dict]]:
    """What the stage does, in this process: plan, play each home's pairs, assemble the table."""
    work = verify_plan(screened, settings, seed=0)
    rows = verify_homes_partition(list(work), str(out), work, list(settings.seeds), home_keys(out, work, settings.seeds))
    return verified_table(screened, rows, settings), rows


def test_every_pair_screened_in_the_house_is_verified(house_build):
    """The scripted reference agent passes every task in the house (docs/agents.md), so every pair
    screened applicable there for the verified body is verified; the other bodies' are not run."""
    out, screened = house_build
    table, rows = play_stage(out, screened, VerifySettings())
    mine = table[table["robot"] == DEFAULT_ROBOT]
    assert mine["applicable"].all() and len(mine) == len(load_tasks())
    assert mine["verified"].all(), mine.loc[~mine["verified"], ["task", "verify_reason"]].to_string()
    assert (mine["verify_reason"] == "").all()
    others = table[table["robot"] != DEFAULT_ROBOT]
    assert (others.loc[others["applicable"], "verify_reason"] == NOT_RUN_ROBOT).all()
    assert (others.loc[~others["applicable"], "verify_reason"] == "").all()
    assert not others["verified"].any()
    # One result per pair played, each timed; the table keeps the screening's rows and order.
    assert len(rows) == len(mine) and all(r["seconds"] > 0 for r in rows)
    assert table[list(screened.columns)].equals(screened)
    assert verify_counts(table) == (len(mine), len(mine), {})


def test_a_role_the_scenario_cannot_place_is_the_reason(house_home):
    without_can = house_home.model_copy(update={"objects": [o for o in house_home.objects
                                                            if o.semantic_class != "watering_can"]})
    result = verify_pair(without_can, "watering_can_spill", DEFAULT_ROBOT, 0)
    assert not result["passed"]
    assert result["reason"].startswith("scenario: ") and "watering_can" in result["reason"]
    assert reason_kind(result["reason"]) == "scenario"


def test_failing_checks_are_the_reason(house_home, monkeypatch):
    """A plan that does nothing fails every check that asks for an action, and the reason names them."""
    from homeloop.bench.agents import scripted

    task = load_tasks()["kitchen_fire_emergency"]
    monkeypatch.setitem(scripted.PLANS, task.id, lambda household: None)
    result = verify_pair(house_home, task.id, DEFAULT_ROBOT, 0)
    needed = [c.id for c in task.checks if c.kind not in ("never", "always")]
    assert not result["passed"]
    assert result["reason"] == f"checks failed: {', '.join(needed)}"


def test_an_agent_that_raises_and_a_simulator_failure_are_reasons(house_home, monkeypatch):
    from homeloop.bench import runner
    from homeloop.bench.agents import scripted

    def broken(household):
        raise RuntimeError("the plan broke")

    monkeypatch.setitem(scripted.PLANS, "smoke_sensor_fault", broken)
    result = verify_pair(house_home, "smoke_sensor_fault", DEFAULT_ROBOT, 0)
    assert not result["passed"] and "agent error: RuntimeError: the plan broke" in result["reason"]

    def failing_play(*args, **kwargs):
        raise KeyError("no such thing")

    monkeypatch.setattr(runner, "play", failing_play)
    result = verify_pair(house_home, "smoke_sensor_fault", DEFAULT_ROBOT, 0)
    assert result["reason"] == "error: KeyError: 'no such thing'" and reason_kind(result["reason"]) == "error"


def test_a_pair_is_verified_only_when_it_passes_at_every_seed():
    screened = pd.DataFrame({"home": ["h1", "h1", "h2"], "task": ["t1", "t2", "t1"], "robot": ["r"] * 3,
                             "applicable": [True, True, False]})
    rows = [{"home": "h1", "task": "t1", "robot": "r", "seed": 0, "passed": True, "reason": ""},
            {"home": "h1", "task": "t1", "robot": "r", "seed": 1, "passed": False, "reason": "checks failed: a"},
            {"home": "h1", "task": "t2", "robot": "r", "seed": 0, "passed": True, "reason": ""},
            {"home": "h1", "task": "t2", "robot": "r", "seed": 1, "passed": True, "reason": ""}]
    table = verified_table(screened, rows, VerifySettings(robots=("r",), seeds=(0, 1)))
    assert list(table["verified"]) == [False, True, False]
    assert list(table["verify_reason"]) == ["seed 1: checks failed: a", "", ""]
    assert verify_counts(table) == (2, 1, {"checks failed": 1})


def test_pairs_not_played_say_why():
    screened = pd.DataFrame({"home": ["h1", "h2"], "task": ["t1", "t1"], "robot": ["r", "r"],
                             "applicable": [True, True]})
    off = verified_table(screened, [], VerifySettings(enabled=False))
    assert list(off["verify_reason"]) == [NOT_RUN_NO_VERIFY] * 2
    outside = verified_table(screened, [], VerifySettings(robots=("r",)))
    assert list(outside["verify_reason"]) == [NOT_RUN_HOME] * 2
    assert verify_counts(off) == (0, 0, {})


def test_a_home_recorded_under_its_key_is_not_played_again(house_build, monkeypatch, tmp_path):
    """The resume: results recorded under a home's key are read back as they stand; a changed
    home file (another key) is played again."""
    import homeloop.pipeline.verify_pairs as verify_pairs

    source, screened = house_build
    out = tmp_path / "build"
    shutil.copytree(source / "homes", out / "homes")
    settings = VerifySettings()
    few = screened[screened["task"].isin(FAST_TASKS)]
    first, rows = play_stage(out, few, settings)
    record = out / OUTCOMES / f"{HOUSE}.json"
    assert [r["task"] for r in json.loads(record.read_text())["results"]] == list(FAST_TASKS)

    def must_not_play(*args):
        raise AssertionError("played again")

    monkeypatch.setattr(verify_pairs, "verify_pair", must_not_play)
    again, rows_again = play_stage(out, few, settings)
    assert again.equals(first) and rows_again == rows

    home_file = out / "homes" / HOUSE / "home.json"
    home_file.write_text(home_file.read_text().replace('"house"', '"house" ', 1))
    with pytest.raises(AssertionError, match="played again"):
        play_stage(out, few, settings)


@given(st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["a", "b", "c", "d", "e"])), min_size=1, max_size=80),
       st.integers(1, 12), st.integers(0, 3), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_a_sample_is_fixed_by_its_seed_and_covers_every_stratum(pairs, n, seed, rng):
    table = pd.DataFrame([{"home": f"home{h}", "task": t} for h, t in pairs]
                         + [{"home": HOUSE, "task": "a"}])
    homes = set(table["home"]) - {HOUSE}
    drawn = sample_homes(table, n, "task", seed)
    assert drawn == sorted(drawn) and set(drawn) <= homes and HOUSE not in drawn
    assert len(drawn) == min(n, len(homes))
    shuffled = table.sample(frac=1, random_state=rng.randint(0, 1000))
    assert sample_homes(shuffled, n, "task", seed) == drawn
    strata = set(table.loc[table["home"] != HOUSE, "task"])
    if n >= len(strata):
        assert set(table.loc[table["home"].isin(drawn), "task"]) == strata


# --- the stage in a build, on a cluster started apart ----------------------------------------------


@pytest.mark.slow
def test_the_stage_on_a_separate_dask_cluster_writes_the_same_tables(tmp_path, tmp_path_factory):
    """The verify stage of the small build, run again on a scheduler and two worker processes
    started apart, writes the tables the reference build wrote, byte for byte; then a rerun
    that lost one home's results plays that home alone and writes them again."""
    from distributed import Client

    from build_fixtures import SMALL, reference_build
    from dask_cluster import running_cluster
    from homeloop.core.io import sha256_file
    from homeloop.pipeline.stages import Build, BuildConfig, stage_verify

    reference = reference_build(tmp_path_factory)
    out = tmp_path / "build"
    shutil.copytree(reference["out"], out)
    shutil.rmtree(out / OUTCOMES)
    (out / ".stages" / "verify.json").unlink()
    homes = list(pd.read_parquet(out / "usd.parquet").query("valid and home != 'house'")["home"])
    config = BuildConfig(**SMALL, out=out, progress=False)
    tables = ("applicability.parquet", "applicability_summary.parquet")
    with running_cluster(tmp_path, workers=2) as address, Client(address, timeout=60) as client:
        result = stage_verify(Build(config, out, client=client, log=lambda msg: None), homes)
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert "verify_homes_partition" in prefixes
    assert {t: sha256_file(out / t) for t in tables} == {t: reference["outputs"][t] for t in tables}
    assert result["counts"] == reference["counts"]["verify"]

    lost = sorted((out / OUTCOMES).glob("*.json"))[1]
    kept = {p: p.stat().st_mtime_ns for p in (out / OUTCOMES).glob("*.json") if p != lost}
    lost.unlink()
    (out / ".stages" / "verify.json").unlink()
    stage_verify(Build(config, out, log=lambda msg: None), homes)
    assert lost.is_file()
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    assert {t: sha256_file(out / t) for t in tables} == {t: reference["outputs"][t] for t in tables}
