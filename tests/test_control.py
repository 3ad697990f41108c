"""The home-control track (homeloop/bench/control/): episodes generated per home, verified by the scripted
solver, the same bytes for the same seed; goals checked over time; the rule judge of infeasible requests;
baselines and a policy that calls everything infeasible pass no feasible episode; played and scored through
the runner and the command line.

The homes are the house and the generated homes of the session's fixtures, written as a build folder.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from control_agents import Reporter, everything_infeasible
from homeloop.bench.control import generate as gen
from homeloop.bench.control.goals import GoalWatch, condition_holds
from homeloop.bench.control.model import (QUERY_TYPES, Condition, ControlEpisode, EpisodesFileError, read_episodes,
                                          write_episodes)
from homeloop.bench.control.play import play_control
from homeloop.bench.control.templates import TEMPLATES
from homeloop.core.home import Home

CATEGORIES = {f"{q}/{f}" for q in QUERY_TYPES for f in ("feasible", "infeasible")}


@pytest.fixture(scope="module")
def build(tmp_path_factory, house_home, generated_homes) -> Path:
    """A build folder holding the house and the generated homes."""
    root = tmp_path_factory.mktemp("control-build")
    for home in [house_home, *generated_homes]:
        home.write(root / "homes" / home.home_id / "home.json")
    return root


@pytest.fixture(scope="module")
def generated(build, tmp_path_factory) -> tuple[Path, list[ControlEpisode], gen.GenerateReport]:
    out = tmp_path_factory.mktemp("control-episodes") / "episodes.jsonl"
    report = gen.generate_file(build, per_home=12, seed=0, out=out)
    return out, read_episodes(out), report


@pytest.fixture(scope="module")
def homes(house_home, generated_homes) -> dict[str, Home]:
    return {h.home_id: h for h in [house_home, *generated_homes]}


# --- generation ----------------------------------------------------------------------------------------


def test_every_home_gets_every_category_and_the_report_counts_them(generated, homes):
    _, episodes, report = generated
    assert {e.home for e in episodes} == set(homes) and report.homes == len(homes)
    per_home = Counter(e.home for e in episodes)
    assert all(n <= 12 for n in per_home.values())
    assert {e.category for e in episodes if e.home == "house"} == CATEGORIES
    assert {e.category for e in episodes} == CATEGORIES
    assert dict(report.kept) == dict(Counter(e.category for e in episodes))
    lines = "\n".join(report.lines())
    assert f"{len(episodes):,} episodes from {len(homes):,} homes" in lines
    for e in episodes:
        assert e.feasible == (e.constraint is None) and e.id.startswith(f"ctl_{e.home}_")
        assert e.template in TEMPLATES and TEMPLATES[e.template].query_type == e.query_type
        assert e.horizon_s >= max([c.start_s or 0 for c in e.goal.conditions], default=0)


def test_the_same_seed_writes_the_same_file_and_another_seed_another(generated, build, tmp_path):
    out, _, _ = generated
    again, other = tmp_path / "again.jsonl", tmp_path / "other.jsonl"
    gen.generate_file(build, per_home=12, seed=0, out=again)
    gen.generate_file(build, per_home=12, seed=1, out=other)
    assert again.read_bytes() == out.read_bytes()
    assert other.read_bytes() != out.read_bytes()


def test_workers_write_the_same_file(build, tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    gen.generate_file(build, per_home=3, seed=4, out=one)
    gen.generate_file(build, per_home=3, seed=4, out=two, workers=2)
    assert one.read_bytes() == two.read_bytes() and one.read_text().count("\n") > 0


def test_a_template_naming_a_device_type_the_home_lacks_is_dropped_and_counted(house_home):
    dark = house_home.model_copy(update={"devices": [d for d in house_home.devices
                                                     if d.type not in ("light", "light_switch")]})
    outcome = gen.generate_home(dark, per_home=12, seed=0)
    light_templates = {"light_state", "too_dark", "switch_lights", "dim_light", "lights_off_in"}
    assert light_templates & set(outcome.dropped)
    assert outcome.dropped_types["light"] >= sum(outcome.dropped[t] for t in light_templates)
    assert all(not any(c.field == "on" and c.devices[0].startswith("light_") for c in e.goal.conditions)
               for e in outcome.episodes)
    report = gen.GenerateReport()
    report.add(outcome)
    assert any("template too_dark: dropped" in line and "in every home" in line for line in report.lines())


def test_a_bad_episodes_file_is_one_line_naming_the_file_line_and_field(generated, tmp_path):
    out, episodes, _ = generated
    bad = tmp_path / "bad.jsonl"
    broken = json.loads(episodes[1].line())
    broken["query_type"] = "wishful_thinking"
    bad.write_text(episodes[0].line() + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(EpisodesFileError, match=r"bad.jsonl:2: field query_type"):
        read_episodes(bad)
    bad.write_text(episodes[0].line() + "\n" + episodes[0].line() + "\n")
    with pytest.raises(EpisodesFileError, match=r"bad.jsonl:2: field id: .* appears twice"):
        read_episodes(bad)
    write_episodes(tmp_path / "copy.jsonl", episodes)
    assert (tmp_path / "copy.jsonl").read_bytes() == out.read_bytes()


# --- the done-when checks -------------------------------------------------------------------------------


def test_the_scripted_solver_passes_every_kept_episode(generated, homes):
    _, episodes, _ = generated
    failed = [e.id for e in episodes if not play_control(homes[e.home], e).passed]
    assert failed == []


@pytest.mark.parametrize("agent", ["do-nothing", "over-reactor", everything_infeasible()])
def test_shortcut_agents_pass_no_feasible_episode(generated, homes, agent):
    _, episodes, _ = generated
    feasible = [e for e in episodes if e.feasible]
    played = [play_control(homes[e.home], e, agent) for e in feasible]
    assert [e.id for e, p in zip(feasible, played) if p.passed] == []
    if isinstance(agent, Reporter):
        assert all("FalseInfeasible" in {c.failure_class for c in p.checks} for p in played)
    else:
        failed_by = Counter(c.failure_class for p in played for c in p.checks if not c.passed)
        assert failed_by["State"] + failed_by["Answer"] > 0


def test_the_infeasible_policy_passes_only_the_missing_devices(generated, homes):
    _, episodes, _ = generated
    infeasible = [e for e in episodes if not e.feasible]
    passed = {e.constraint.kind for e in infeasible if play_control(homes[e.home], e, everything_infeasible()).passed}
    assert passed <= {"missing_device"}


# --- goals over time and the judge ----------------------------------------------------------------------


class _World:
    time = 0.0

    def __init__(self, value: Any):
        self.devices = {"light_1": type("State", (), {"values": {"on": value}})()}


def _watch(changes: list[tuple[float, Any]]) -> GoalWatch:
    watch = GoalWatch(_World(changes[0][1]), [("light_1", "on")])  # type: ignore[arg-type]
    watch.history[("light_1", "on")] = list(changes)
    return watch


def test_a_condition_holds_over_its_window_of_agent_time():
    # the light went on at agent time 100 (world 101) and off at 400 (world 401); the horizon is world 601
    watch = _watch([(1.0, False), (101.0, True), (401.0, False)])
    on = dict(devices=("light_1",), field="on", equals=True)
    holds = lambda **window: condition_holds(watch, Condition(**on, **window), wake_time=1.0, horizon=601.0)  # noqa
    assert holds(start_s=100.0, end_s=400.0) and holds(start_s=150.0, end_s=350.0)
    assert not holds(start_s=50.0, end_s=300.0) and not holds(start_s=300.0, end_s=450.0)
    assert not holds(start_s=None) and not holds(start_s=100.0)
    off = Condition(devices=("light_1",), field="on", equals=False, start_s=None)
    assert condition_holds(watch, off, wake_time=1.0, horizon=601.0)


def test_a_report_is_judged_by_its_reason_and_detail(generated, homes):
    _, episodes, _ = generated
    house = homes["house"]
    infeasible = next(e for e in episodes if e.home == "house" and e.constraint is not None
                      and e.constraint.kind == "out_of_range")

    word = infeasible.constraint.words[0]
    right = play_control(house, infeasible, Reporter("out_of_range", f"{word} is more than the device takes"))
    wrong_reason = play_control(house, infeasible, Reporter("missing_device", f"{word} is too much"))
    vague = play_control(house, infeasible, Reporter("out_of_range", "it cannot be done"))
    silent = play_control(house, infeasible, "do-nothing")
    assert right.passed and not wrong_reason.passed and not vague.passed and not silent.passed
    classes = [{c.failure_class for c in p.checks} - {""} for p in (wrong_reason, vague, silent)]
    assert classes == [{"WrongReason"}, {"WrongReason"}, {"MissedInfeasible"}]


def test_a_schedule_acted_on_at_once_fails_on_timing(generated, homes):
    _, episodes, _ = generated
    timed = next(e for e in episodes if e.query_type == "time_schedule" and e.feasible)
    step = timed.intent.steps[0]

    class Hasty:
        name, model, usage = "hasty", None, None

        def run(self, episode: Any) -> None:
            for device in step.devices:
                episode.call("hub_set_state", device_id=device, field=step.field, value=step.value)
            episode.stop("done")

    played = play_control(homes[timed.home], timed, Hasty())
    assert not played.passed
    assert {c.failure_class for c in played.checks if not c.passed} == {"Timing"}
    assert play_control(homes[timed.home], timed).passed


# --- runner, records and scores --------------------------------------------------------------------------


def test_control_episodes_run_through_the_runner_and_are_scored_in_twelve_categories(generated, build, tmp_path):
    from homeloop.bench.records import read_records
    from homeloop.cli import app

    out, episodes, _ = generated
    house = tmp_path / "house.jsonl"
    write_episodes(house, [e for e in episodes if e.home == "house"])
    run = tmp_path / "run"
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    result = CliRunner().invoke(app, ["bench", "run", "--agent", "scripted", "--tasks", "control", "--episodes",
                                      str(house), "--homes", str(build), "--out", str(run)], env=env)
    assert result.exit_code == 0, result.output
    records = read_records([run]).records
    assert len(records) == 12 and all(r["passed"] for r in records)
    assert {(r["query_type"], r["feasible"]) for r in records} == {(q, f) for q in QUERY_TYPES for f in (True, False)}
    assert all(r["control"]["id"] == r["task"]["id"] and r["world"]["scenario"] == "control" for r in records)
    scored = CliRunner().invoke(app, ["bench", "score", str(run), "--out", str(tmp_path / "tables")], env=env)
    assert scored.exit_code == 0, scored.output
    table = (tmp_path / "tables" / "control.csv").read_text().splitlines()
    assert len(table) == 1 + 12 and all(",1,100.0," in row for row in table[1:])
    assert (tmp_path / "tables" / "main.csv").read_text().count("\n") == 1  # no control episode in the paper's tables
    bad = CliRunner().invoke(app, ["bench", "run", "--agent", "scripted", "--tasks", "control", "--homes",
                                   str(build), "--out", str(tmp_path / "none")], env=env)
    assert bad.exit_code != 0 and "--episodes" in bad.output


def test_generate_control_writes_the_file_and_the_report(build, tmp_path):
    from homeloop.cli import app

    out = tmp_path / "cli.jsonl"
    result = CliRunner().invoke(app, ["bench", "generate-control", "--homes", str(build), "--per-home", "2",
                                      "--seed", "7", "--out", str(out)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "episodes from" in result.output and "QT4-3" in result.output
    assert len(read_episodes(out)) == 2 * len(list((build / "homes").iterdir()))
    missing = CliRunner().invoke(app, ["bench", "generate-control", "--homes", str(tmp_path), "--out", str(out)])
    assert missing.exit_code != 0 and "no homes/ folder" in missing.output


def test_the_home_control_section_states_the_track_as_the_code_has_it():
    from homeloop.bench.control import model, templates
    from homeloop.bench.control.goals import FAILURE_CLASSES
    from homeloop.bench.control.scores import SIMUHOME_GPT51

    text = (Path(__file__).resolve().parent.parent / "docs" / "tasks.md").read_text(encoding="utf-8")
    section = text[text.index("## Home control"):].replace("\n", " ")
    for query_type, code in model.QUERY_CODES.items():
        assert f"| {code} | `{query_type}` |" in section
        feasible, infeasible = SIMUHOME_GPT51[query_type]
        assert f"| {code} | {feasible} | {infeasible} |" in section
    for kind in model.CONSTRAINT_KINDS:
        assert f"| `{kind}` |" in section
    for name in (*FAILURE_CLASSES, "Limit"):
        assert f"**{name}**" in section
    for kind in templates.ABSENT:
        assert kind.replace("_", " ") in section
    assert f"{model.HORIZON_MARGIN_S} s after the last moment" in section
    assert f"at least {model.MIN_HORIZON_S} s" in section
    assert f"up to {model.TIME_TOLERANCE_S:g} s either side" in section
    assert f"({templates.DOOR_OPENS_AT_S:g} s after the request)" in section
    assert f"as a message {model.REQUEST_AT_S:g} s after the scenario starts" in section


def test_an_answer_names_the_state_and_affirms_no_opposite():
    from homeloop.bench.control.goals import answered
    from homeloop.bench.control.model import Answer

    off = Answer(words=("off",), wrong=("on",))
    assert answered(off, ["No, the light is not on; it is off."])
    assert answered(off, ["I checked.", "It's off."])
    assert not answered(off, ["It is on or off, I cannot say."])
    assert not answered(off, ["It is on."]) and not answered(off, [])
    locked = Answer(words=("locked",), wrong=("unlocked",))
    assert answered(locked, ["Yes, the front door is locked."]) and not answered(locked, ["It is unlocked."])
    warm = Answer(number=21.0)
    assert answered(warm, ["It is 21.3 °C in the living room."]) and not answered(warm, ["It is 23 °C."])
