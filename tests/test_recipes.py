"""The recipes of docs/code.md, done for real with the page's own examples (docs/code.md, "Recipes").

Each test takes the example blocks of the page (a fenced block after ``<!-- example: NAME -->``)
and does what the recipe says with them, as a newcomer would: writes the task and scenario
files and plays the task in the house, adds the device type to a copy of the catalog and equips,
checks and simulates the house with it, steps the dynamics module in an episode, declares the
skill and calls it, runs the agent with ``homeloop bench run``, and audits fixture plans with
the rule. Python examples run as the module the recipe puts them in would: a new module on its
own, code added to an existing module with that module's names at hand.

Nothing here writes into the package: files go to a temporary folder, and every registry a test
fills (skills, agents, equip steps, audit rules, scripted plans, device readers) is restored when
it ends, so the other tests see the project as it is.
"""

from __future__ import annotations

import functools
import re
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from homeloop import audits
from homeloop.audits import audit_plan, thresholds
from homeloop.bench.agents import AGENTS, make_agent, scripted
from homeloop.bench.agents.registry import load_builtin_agents
from homeloop.bench.monitor import CheckResult, Monitor
from homeloop.bench.records import read_records
from homeloop.bench.runner import episode_passed
from homeloop.core.catalog import CATALOG_ENV, DEFAULT_CATALOG_DIR, DEFAULT_ROBOT, Catalog, load_catalog
from homeloop.core.check import check_home
from homeloop.core.home import Home
from homeloop.pipeline import devices as equip_steps
from homeloop.pipeline.applicability import screen
from homeloop.pipeline.furnish import furnish_house
from homeloop.sim import devices as sim_devices
from homeloop.sim import services, step_order
from homeloop.sim.dynamics.light import BRIGHTNESS_FLOOR_LUX
from homeloop.sim.episode import Episode
from homeloop.sim.scenario import Scenario, load_scenario
from homeloop.sim.services import clock
from homeloop.sim.skills import REGISTRY as SKILLS
from homeloop.sim.task import Task, load_tasks
from homeloop.sim.world import STEP_S, World

from conftest import FIXTURES, load_fixture_plans
from test_docs import TASK_HEADER, by_id, page, table, words

DOCS = Path(__file__).resolve().parent.parent / "docs"

#: Every example the recipes show, by the name its marker gives it.
EXAMPLES = ("task", "scenario", "task-route", "task-rows", "device-entry", "device-step", "device-reader",
            "dynamics", "skill", "agent", "audit-rule", "audit-threshold")

#: The header of the applicability table of docs/tasks.md.
APPLIES_HEADER = ("task", "rooms", "devices", "furniture", "objects", "robot must")

_EXAMPLE = re.compile(r"<!-- example: ([\w-]+) -->\n```[a-z]*\n(.*?)```", re.S)


@functools.lru_cache(maxsize=1)
def examples() -> dict[str, str]:
    """The example blocks of docs/code.md by name."""
    found = _EXAMPLE.findall((DOCS / "code.md").read_text(encoding="utf-8"))
    names = [name for name, _ in found]
    assert len(set(names)) == len(names), f"an example name is used twice: {names}"
    return dict(found)


def run_example(name: str, module: Any = None) -> dict[str, Any]:
    """Run a Python example as a module of its own, or (``module``) as code added to that module;
    returns the names it defines."""
    names = dict(vars(module)) if module is not None else {"__name__": f"recipe_{name.replace('-', '_')}"}
    exec(compile(examples()[name], f"docs/code.md ({name})", "exec"), names)
    return names


def test_every_recipe_shows_its_examples() -> None:
    assert sorted(examples()) == sorted(EXAMPLES)


# --- a task ------------------------------------------------------------------------------------------


@pytest.fixture
def lamp_task(tmp_path: Path) -> tuple[Task, Scenario]:
    """The recipe's task and scenario, written as files into folders of their own and loaded."""
    tasks, scenarios = tmp_path / "tasks", tmp_path / "scenarios"
    tasks.mkdir()
    scenarios.mkdir()
    (tasks / "switch_off_the_lamp.yaml").write_text(examples()["task"], encoding="utf-8")
    (scenarios / "lamp_left_on.yaml").write_text(examples()["scenario"], encoding="utf-8")
    (task,) = load_tasks(tasks).values()
    return task, load_scenario(task.scenario or "", str(scenarios))


def play(home: Home, task: Task, scenario: Scenario, agent_name: str) -> tuple[Episode, list[CheckResult]]:
    """An episode of ``task`` played by an agent under the task's monitor, as the runner plays one."""
    episode = Episode(home, task, scenario=scenario, images=False)
    monitor = Monitor(episode)
    episode.world.add_module(monitor)
    episode.on_call = monitor.observe
    make_agent(agent_name).run(episode)
    return episode, monitor.results()


def test_the_recipes_task_applies_in_the_house(lamp_task: tuple[Task, Scenario], house_home: Home,
                                                catalog: Catalog) -> None:
    task, _ = lamp_task
    assert screen(house_home, task, catalog.robots[DEFAULT_ROBOT], catalog).applicable
    no_living_lamp = house_home.model_copy(update={"devices": [
        d for d in house_home.devices if not (d.type == "light" and house_home.room(d.room or "").type == "LIVING_ROOM")]})
    assert "missing_device:light(in living)" in screen(no_living_lamp, task, catalog.robots[DEFAULT_ROBOT],
                                                       catalog).reasons


def test_the_recipes_task_is_passed_by_its_route_and_failed_by_doing_nothing(
        lamp_task: tuple[Task, Scenario], house_home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    task, scenario = lamp_task
    route = run_example("task-route", scripted)[task.id]
    monkeypatch.setitem(scripted.PLANS, task.id, route)
    episode, checks = play(house_home, task, scenario, "scripted")
    assert episode.ended_by == "stop"
    assert [(c.id, c.kind, c.passed) for c in checks] == [(c.id, c.kind, True) for c in task.checks]
    assert episode_passed(checks, episode.ended_by)
    episode, checks = play(house_home, task, scenario, "do-nothing")
    assert not episode_passed(checks, episode.ended_by)
    assert [c.id for c in checks if not c.passed] == ["lamp_off", "resident_told"]


def test_the_recipes_task_rows_say_what_its_file_says(lamp_task: tuple[Task, Scenario]) -> None:
    task, _ = lamp_task
    rows = examples()["task-rows"]
    _, family, ext, wake, horizon, budget, scored, group, scenario, checks = by_id(table(rows, *TASK_HEADER))[task.id]
    assert (family, ext == "yes", wake, int(horizon), int(budget), scored, group, scenario) == (
        task.family, task.extension, task.wake.kind, task.horizon_s, task.budget_units, task.scored_at,
        task.alert_group or "—", task.scenario)
    assert [tuple(c.replace("`", "").split()) for c in words(checks)] == [(c.id, c.kind) for c in task.checks]
    _, rooms, devices, furniture, objects, _ = by_id(table(rows, *APPLIES_HEADER))[task.id]
    assert words(rooms) == list(task.requires.rooms)
    assert words(devices) == [d.describe() for d in task.requires.devices]
    assert words(furniture) == [f.describe() for f in task.requires.furniture]
    assert words(objects) == [o.describe() for o in task.requires.objects]
    family_row = next(r for r in table(page("tasks.md"), "family", "wake events", "horizon", "budget")
                      if r[0] == task.family)
    assert f"{task.horizon_s} s" in " ".join(family_row) and f"{task.budget_units} units" in " ".join(family_row)


# --- a device type ---------------------------------------------------------------------------------


@pytest.fixture
def catalog_with_light_sensor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Catalog:
    """A copy of the catalog with the recipe's entry added to devices.yaml, named by HOMELOOP_CATALOG."""
    folder = tmp_path / "catalog"
    shutil.copytree(DEFAULT_CATALOG_DIR, folder)
    devices = folder / "devices.yaml"
    devices.write_text(devices.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + examples()["device-entry"],
                       encoding="utf-8")
    monkeypatch.setenv(CATALOG_ENV, str(folder))
    return load_catalog()


@pytest.fixture
def light_sensor_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recipe's reader and event in the simulator's device tables (restored afterwards)."""
    reader = run_example("device-reader", sim_devices)["_illuminance_reader"]
    monkeypatch.setitem(sim_devices.READERS, "illuminance_sensor", reader)
    monkeypatch.setitem(sim_devices.EVENTS, "illuminance_sensor",
                        (sim_devices.Transition("illuminance_lux", "got_dark", below=BRIGHTNESS_FLOOR_LUX),))


def equipped_with_light_sensor(catalog: Catalog) -> Home:
    """The house furnished from the catalog and equipped with the recipe's step among the others."""
    furnished = furnish_house(catalog, seed=0)
    with equip_steps.REGISTRY.temporary_steps():
        run_example("device-step")
        assert list(equip_steps.STEPS)[-1] == "light_sensors"
        equipped = equip_steps.equip_house(furnished, catalog)
    assert "light_sensors" not in equip_steps.STEPS
    assert equipped.ok, equipped.failures
    return equipped.home


def test_a_device_type_added_to_the_catalog_is_placed_checked_and_simulated(
        catalog_with_light_sensor: Catalog, light_sensor_reader: None) -> None:
    catalog = catalog_with_light_sensor
    entry = catalog.devices["illuminance_sensor"]
    assert (entry.matter.device_type, entry.events) == ("Light Sensor", ["got_dark"])
    home = equipped_with_light_sensor(catalog)
    (sensor,) = home.devices_of_type("illuminance_sensor")
    assert home.room(sensor.room or "").type in entry.placement.rooms and sensor.mount == "wall"
    assert check_home(home, catalog) == []

    world = World(home, catalog, seed=0, clock_start_s=22 * 3600.0)  # night: no daylight
    step_order.install(world)
    lights = [d.id for d in home.devices_of_type("light") if d.room == sensor.room]
    for light in lights:
        sim_devices.set_state(world, light, "on", False)
    world.advance(1.0)
    assert world.devices[sensor.id].values["illuminance_lux"] < BRIGHTNESS_FLOOR_LUX
    sim_devices.set_state(world, lights[0], "on", True)
    world.advance(1.0)
    assert world.devices[sensor.id].values["illuminance_lux"] >= BRIGHTNESS_FLOOR_LUX
    sim_devices.set_state(world, lights[0], "on", False)
    world.advance(1.0)
    assert [e.source for e in world.events if e.kind == "got_dark"] == [sensor.id]


# --- a dynamics module -----------------------------------------------------------------------------


def test_a_dynamics_module_steps_with_the_world_and_is_in_its_snapshot(house_home: Home) -> None:
    occupancy = run_example("dynamics")["Occupancy"]
    episode = Episode(house_home, "put_away", images=False)
    episode.world.add_module(occupancy())
    resident = episode.world.residents()[0]
    result = episode.call("clock_wait", seconds=5)
    assert result.error is None
    module = episode.world.module(occupancy)
    assert module.seconds == {resident.room: pytest.approx(5.0, abs=STEP_S / 2)}
    assert episode.world.snapshot()["modules"]["occupancy"] == module.snapshot()


# --- a skill ----------------------------------------------------------------------------------------


@pytest.fixture
def skill_registry() -> Iterator[None]:
    """The declared skills as they are; skills a test declares are removed afterwards."""
    before = set(SKILLS)
    yield
    for name in set(SKILLS) - before:
        del SKILLS[name]


def test_a_declared_skill_is_offered_charged_and_written_into_the_cost_table(
        house_home: Home, skill_registry: None) -> None:
    run_example("skill", clock)
    skill = services.declared()["clock_time_of_day"]
    assert (skill.units, skill.seconds) == (1, 0.5)
    assert f"| clock | `clock_time_of_day` | 1 unit | 0.5 | {skill.summary} |" in services.cost_table()
    skills_page = page("skills.md")
    assert services.with_cost_table(skills_page) != skills_page  # python -m homeloop.sim.services rewrites it

    episode = Episode(house_home, "put_away", images=False)
    (schema,) = [t["function"] for t in episode.tools() if t["function"]["name"] == "clock_time_of_day"]
    assert schema["parameters"]["properties"]["hours"]["description"] == "24 for 21:30, 12 for 9:30 pm."
    assert episode.world.clock_of_day() // 60 == 21 * 60 + 30  # mug_to_table starts at 21:30
    result = episode.call("clock_time_of_day", hours=12)
    assert (result.error, result.data, result.units, result.seconds) == (None, {"time": "9:30 pm"}, 1, 0.5)
    assert episode.call("clock_time_of_day").data == {"time": "21:30"}
    refused = episode.call("clock_time_of_day", hours=13)
    assert refused.error is not None and "'hours'" in refused.error
    assert episode.units_spent == 3  # a call with bad arguments is charged too


# --- an agent ---------------------------------------------------------------------------------------


@pytest.fixture
def agent_registry() -> Iterator[None]:
    """The registered agents as they are; agents a test registers are removed afterwards."""
    load_builtin_agents()  # the agent modules register themselves when imported
    before = set(AGENTS)
    yield
    for name in set(AGENTS) - before:
        del AGENTS[name]


def test_a_registered_agent_runs_with_bench_run(agent_registry: None, house_file: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from homeloop.cli import app
    from homeloop.pipeline import houses

    def write_house(folder: Path) -> Path:  # the house built once for the session, not again
        folder.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copyfile(house_file, folder / "home.json"))

    run_example("agent")
    monkeypatch.setattr(houses, "write_house_home", write_house)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["bench", "run", "--agent", "device-lister", "--tasks", "put_away",
                                      "--homes", "house", "--seeds", "0", "--out", str(out)],
                                env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    (record,) = read_records([out]).records
    listed = [d for d in Home.from_json(house_file.read_text(encoding="utf-8")).devices if d.agent_visible]
    assert record["agent"]["name"] == "device-lister"
    assert [c["tool"] for c in record["calls"]] == ["hub_list_devices"]
    assert (record["ended_by"], record["passed"]) == ("stop", False)
    found = len(record["calls"][0]["data"]["devices"])
    assert record["summary"] == f"the hub lists {found} devices" and 0 < found <= len(listed)


# --- an audit rule ----------------------------------------------------------------------------------


@pytest.fixture
def audit_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The recipe's threshold in the thresholds module and room for a rule in the registry, both
    restored afterwards."""
    for name, value in run_example("audit-threshold").items():
        if name.isupper():
            monkeypatch.setattr(thresholds, name, value, raising=False)
    with audits.REGISTRY.temporary_rules():
        yield


def test_an_audit_rule_passes_the_good_plan_and_fails_its_fixture(audit_rules: None, fixture_plan: Any,
                                                                 tmp_path: Path) -> None:
    run_example("audit-rule")
    assert audits.REGISTRY.checked_rule_ids[-1] == "windowless_bedroom"
    good = audit_plan(fixture_plan("audit_good"))
    assert good.passed and "windowless_bedroom" in good.rules_checked

    lines = (FIXTURES / "audit_good.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    failing = tmp_path / "audit_windowless_bedroom_fail.csv"
    failing.write_text("".join(line for line in lines if ",opening,WINDOW," not in line), encoding="utf-8")
    (plan,) = load_fixture_plans(failing)
    result = audit_plan(plan)
    assert result.failed_rules == ("windowless_bedroom",)
    (finding,) = result.findings
    assert finding.elements == ("4",)
    assert "0.00 m of window" in finding.message
    assert f"{thresholds.MIN_BEDROOM_WINDOW_WIDTH:.2f} m" in finding.message
