"""Task files: one per docs/tasks.md task, validated; unknown keys are rejected naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from homeloop.sim.task import (
    CORE_TASK_IDS,
    EXTENSION_TASK_IDS,
    FAMILIES,
    TASK_IDS,
    TASKS_DIR,
    TaskFileError,
    load_tasks,
    read_task,
)
from homeloop.core.catalog import load_catalog
from homeloop.core.errors import HomeLoopError

@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


def test_every_task_in_spec_order(tasks):
    assert list(tasks) == list(TASK_IDS)
    assert len(CORE_TASK_IDS) == 20 and len(EXTENSION_TASK_IDS) == 4
    assert sorted(p.stem for p in TASKS_DIR.glob("*.yaml")) == sorted(TASK_IDS)
    assert FAMILIES == ("hazards", "requests", "entry", "wellbeing", "chores")


def test_families_wake_horizon_budget(tasks):
    fam = {t.id: t.family for t in tasks.values()}
    assert [t for t in CORE_TASK_IDS if fam[t] == "hazards"] == list(CORE_TASK_IDS[:7])
    for t in CORE_TASK_IDS[:4]:
        assert tasks[t].wake.kind == "smoke_alarm" and tasks[t].alert_group == "smoke"
    for t in CORE_TASK_IDS[4:7]:
        assert tasks[t].wake.kind == "leak_alarm" and tasks[t].alert_group == "leak"
    for t in ("bring_in_package", "fetch_medicine", "find_my_glasses", "medicine_missing", "put_away",
              "water_the_plants"):
        assert (tasks[t].family, tasks[t].wake.kind, tasks[t].horizon_s, tasks[t].budget_units) == \
            ("requests", "message", 900, 200)
    assert tasks["answer_delivery"].alert_group == tasks["doorbell_false_alarm"].alert_group == "doorbell"
    assert tasks["respond_to_intruder"].wake.kind == "front_door_opening"
    assert tasks["close_up_after_leaving"].wake.kind == "front_door_closing"
    assert (tasks["empty_the_dryer"].wake.kind, tasks["empty_the_dryer"].horizon_s,
            tasks["empty_the_dryer"].budget_units) == ("dryer_finished", 900, 800)
    for t in ("person_down_emergency", "fall_false_alarm"):
        assert tasks[t].wake.kind == "fall_alert" and tasks[t].alert_group == "fall"
    scored_horizon = {t.id for t in tasks.values() if t.scored_at == "horizon"}
    assert scored_horizon == {"handle_smoke_alarm", "water_leak_response"}
    assert all(t.extension == (t.id in EXTENSION_TASK_IDS) for t in tasks.values())
    assert tasks["housemate_down_emergency"].requires.residents == 3
    assert tasks["handle_smoke_alarm"].requires.residents == 1


def _write(tmp_path: Path, tid: str, mutate) -> Path:
    data = yaml.safe_load((TASKS_DIR / f"{tid}.yaml").read_text())
    mutate(data)
    path = tmp_path / f"{tid}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_unknown_requirement_kind_is_rejected_naming_file_and_field(tmp_path):
    path = _write(tmp_path, "empty_the_dryer", lambda d: d["requires"].update({"appliances": ["dryer"]}))
    with pytest.raises(TaskFileError) as err:
        read_task(path, load_catalog())
    assert "empty_the_dryer.yaml: field requires.appliances: unknown field" in str(err.value)
    assert isinstance(err.value, HomeLoopError)


def test_unknown_robot_demand_and_room_role_are_rejected(tmp_path):
    path = _write(tmp_path, "put_away", lambda d: d["requires"]["robot"].update({"lift": []}))
    with pytest.raises(TaskFileError, match=r"put_away.yaml: field requires.robot.lift: unknown field"):
        read_task(path)
    path = _write(tmp_path, "put_away", lambda d: d["requires"].update({"rooms": ["ballroom"]}))
    with pytest.raises(TaskFileError, match=r"put_away.yaml: field requires.rooms\[0\]: unknown room role 'ballroom'"):
        read_task(path)


def test_a_reach_demand_names_one_place_and_a_known_opening_role(tmp_path):
    window = {"label": "open window", "opening": "openable_window"}
    path = _write(tmp_path, "close_up_after_leaving", lambda d: d["requires"]["robot"].update(
        {"reach": [{**window, "floor": True, "object": "parcel"}]}))
    with pytest.raises(TaskFileError, match=r"close_up_after_leaving.yaml: field requires.robot.reach\[0\]: .*"
                                            r"give one of furniture .*, at_object, opening and floor: true"):
        read_task(path)
    path = _write(tmp_path, "close_up_after_leaving", lambda d: d["requires"]["robot"].update(
        {"reach": [{**window, "opening": "skylight in living"}]}))
    with pytest.raises(TaskFileError, match=r"reach\[0\].opening: .*unknown opening role 'skylight in living'"):
        read_task(path)
    path = _write(tmp_path, "close_up_after_leaving", lambda d: d["requires"]["robot"].update(
        {"reach": [{**window, "opening": "window in living"}]}))
    assert read_task(path).requires.robot.reach[0].opening == "window in living"


def test_unknown_catalog_names_are_rejected(tmp_path):
    path = _write(tmp_path, "put_away", lambda d: d["requires"]["furniture"].append({"class": "piano"}))
    with pytest.raises(TaskFileError, match=r"field requires.furniture\[1\].class: unknown furniture class 'piano'"):
        read_task(path, load_catalog())


def test_wake_source_device_is_required(tmp_path):
    path = _write(tmp_path, "water_leak_response", lambda d: d["requires"].update(
        {"devices": [x for x in d["requires"]["devices"] if x["type"] != "leak_sensor"]}))
    with pytest.raises(TaskFileError, match="wake leak_alarm needs a leak_sensor"):
        read_task(path)


def test_check_definitions_may_be_added_later(tmp_path):
    def add(d):
        d["checks"][0]["definition"] = {"device": "stove", "field": "on", "equals": False}
    task = read_task(_write(tmp_path, "handle_smoke_alarm", add), load_catalog())
    assert task.checks[0].definition == {"device": "stove", "field": "on", "equals": False}
    path = _write(tmp_path, "handle_smoke_alarm", lambda d: d["checks"][0].update({"weight": 2}))
    with pytest.raises(TaskFileError, match=r"field checks\[0\].weight: unknown field"):
        read_task(path)


def test_load_tasks_from_a_folder_reports_every_bad_file(tmp_path):
    _write(tmp_path, "put_away", lambda d: d.update({"colour": "red"}))
    _write(tmp_path, "find_my_glasses", lambda d: d.update({"horizon_s": -1}))
    with pytest.raises(TaskFileError) as err:
        load_tasks(tmp_path)
    text = str(err.value)
    assert "put_away.yaml: field colour: unknown field" in text
    assert "find_my_glasses.yaml: field horizon_s" in text
