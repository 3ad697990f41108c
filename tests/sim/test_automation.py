"""The hub's schedules and automations (homeloop/sim/automation.py, homeloop/sim/services/control.py):
offered only in home-control episodes, fired at their simulated times as events, refused for a past
time, a loop or the limit, and failing visibly when the device does not answer or refuses.

Episodes run in the house with the put_away scenario (a message wakes the agent at 21:30, the living
room lit); device ids are found by type and room.
"""

from __future__ import annotations

import pytest

from homeloop.sim import services, world as world_module
from homeloop.sim.automation import MAX_SCHEDULES, HubAutomation
from homeloop.sim.episode import Episode
from homeloop.sim.services.control import CONTROL_SKILLS

CONTROL_TOOLS = {"hub_schedule", "hub_automate", "hub_list_schedules", "hub_cancel", "messaging_report_infeasible"}


def control_episode(home, seed: int = 0) -> Episode:
    return Episode(home, "put_away", seed=seed, images=False, control=True)


def device(ep: Episode, device_type: str, room_name: str) -> str:
    room = next(r.id for r in ep.home.rooms if r.name == room_name)
    return next(d.id for d in ep.home.devices if d.type == device_type and d.room == room and d.agent_visible)


def fired(ep: Episode, kind: str) -> list[dict]:
    return [ep.event_dict(e) for e in ep.world.events if e.kind == kind]


def on(ep: Episode, device_id: str, field: str = "on"):
    return ep.world.devices[device_id].values[field]


# --- offered only in control episodes -----------------------------------------------------------------


def test_only_control_episodes_offer_the_schedules_and_the_report(house_home):
    plain = Episode(house_home, "put_away", images=False)
    control = control_episode(house_home)
    assert CONTROL_TOOLS.isdisjoint(plain.tool_names())
    assert set(control.tool_names()) - set(plain.tool_names()) == CONTROL_TOOLS
    assert {s.tool_name for s in services.available(control=True)} - {s.tool_name for s in services.available()} \
        == CONTROL_TOOLS == {s.tool_name for s in services.available(control=True) if s.function in CONTROL_SKILLS}
    refused = plain.call("hub_schedule", device_id="light_1_1", field="on", value=True, in_s=5)
    assert refused.error is not None and refused.error.startswith("unknown tool")
    # the cost table of docs/skills.md lists them with their costs
    table = services.cost_table()
    assert all(f"`{tool}`" in table for tool in CONTROL_TOOLS)


# --- firing in simulated time ---------------------------------------------------------------------------


def test_a_relative_schedule_fires_at_its_time_as_an_event(house_home):
    ep = control_episode(house_home)
    hall = device(ep, "light", "hall")
    made = ep.call("hub_schedule", device_id=hall, field="on", value=True, in_s=60)
    assert made.error is None and (made.units, made.seconds) == (2, 0.3)
    due = made.data["schedule"]["at"]
    assert due == pytest.approx(made.t_start + 60, abs=1e-6)
    ep.call("clock_wait", seconds=due - ep.now() - 0.2)
    assert on(ep, hall) is False and not fired(ep, "schedule_fired")
    waited = ep.call("clock_wait", seconds=1.0)
    assert on(ep, hall) is True
    (event,) = [e for e in waited.events if e["kind"] == "schedule_fired"]
    assert event["t"] == pytest.approx(due, abs=1e-6) and event["source"] == made.data["schedule"]["id"]
    assert event["data"] == {"device_id": hall, "field": "on", "value": True}
    listed = ep.call("hub_list_schedules").data["schedules"]
    assert [(s["status"], s["fired"]) for s in listed] == [("fired", [event["t"]])]


def test_an_absolute_schedule_fires_at_the_clock_time_and_a_past_time_is_refused(house_home):
    ep = control_episode(house_home)
    lamp = device(ep, "light", "living room")
    clock = ep.world.clock_of_day()
    target = (int(clock // 60) + 2) * 60  # the whole minute after next
    text = f"{target // 3600:02d}:{target % 3600 // 60:02d}"
    made = ep.call("hub_schedule", device_id=lamp, field="on", value=False, at=text)
    assert made.error is None and made.data["schedule"]["clock"] == f"{text}:00"
    past = ep.call("hub_schedule", device_id=lamp, field="on", value=False, at="21:00")
    behind = ep.call("hub_schedule", device_id=lamp, field="on", value=False, in_s=-5)
    both = ep.call("hub_schedule", device_id=lamp, field="on", value=False, at=text, in_s=5)
    assert "past" in past.error and "past" in behind.error and "one of at" in both.error
    ep.call("clock_wait", seconds=200)
    (event,) = fired(ep, "schedule_fired")
    assert ep.world.clock_start_s + event["t"] + ep.wake_time == pytest.approx(target, abs=0.1)


def test_a_value_the_field_refuses_is_refused_when_made(house_home):
    ep = control_episode(house_home)
    stat = device(ep, "thermostat", "living room")
    hot = ep.call("hub_schedule", device_id=stat, field="setpoint", value=45.0, in_s=10)
    read_only = ep.call("hub_schedule", device_id=stat, field="local_temperature", value=20.0, in_s=10)
    missing = ep.call("hub_schedule", device_id="humidifier_2_1", field="on", value=True, in_s=10)
    assert "above the maximum 30" in hot.error and "no settable field" in read_only.error
    assert "unknown device" in missing.error
    assert ep.call("hub_list_schedules").data["schedules"] == []


def test_an_event_automation_fires_after_its_delay_each_time(house_home):
    ep = control_episode(house_home)
    lock, hall = device(ep, "lock", "hall"), device(ep, "light", "hall")
    made = ep.call("hub_automate", device_id=hall, field="on", value=True, when_device=lock,
                   when_event="unlocked", delay_s=5)
    assert made.error is None and made.data["automation"]["status"] == "armed"
    unlocked = ep.call("hub_set_state", device_id=lock, field="lock_state", value="unlocked")
    ep.call("clock_wait", seconds=4.0)
    assert on(ep, hall) is False
    ep.call("clock_wait", seconds=2.0)
    assert on(ep, hall) is True
    (event,) = fired(ep, "automation_fired")
    unlock_event = next(e for e in ep.world.events if e.kind == "unlocked")
    assert event["t"] == pytest.approx(unlock_event.time - ep.wake_time + 5, abs=0.11)
    assert unlocked.t_start <= unlock_event.time - ep.wake_time
    # again: locked and unlocked once more, it fires a second time
    ep.call("hub_set_state", device_id=hall, field="on", value=False)
    ep.call("hub_set_state", device_id=lock, field="lock_state", value="locked")
    ep.call("hub_set_state", device_id=lock, field="lock_state", value="unlocked")
    ep.call("clock_wait", seconds=6.0)
    assert on(ep, hall) is True and len(fired(ep, "automation_fired")) == 2


def test_a_threshold_automation_fires_when_the_reading_crosses(house_home):
    ep = control_episode(house_home)
    stat, plug = device(ep, "thermostat", "living room"), "plug_2_1"
    assert ep.call("hub_automate", device_id=plug, field="on", value=True, when_device=stat,
                   when_field="local_temperature", above=21.5).error is None
    ep.call("hub_set_state", device_id=stat, field="setpoint", value=25.0)
    crossed_at = None
    while ep.now() < 600 and crossed_at is None:
        ep.call("clock_wait", seconds=10)
        if ep.world.devices[stat].values["local_temperature"] > 21.5:
            crossed_at = ep.now()
        assert on(ep, plug) is (crossed_at is not None)
    assert crossed_at is not None
    (event,) = fired(ep, "automation_fired")
    assert crossed_at - 10 < event["t"] <= crossed_at


# --- refusals: loops and the limit -----------------------------------------------------------------------


def test_an_automation_that_triggers_itself_is_refused(house_home):
    ep = control_episode(house_home)
    switch, hall = device(ep, "light_switch", "hall"), device(ep, "light", "hall")
    same = ep.call("hub_automate", device_id=switch, field="on", value=False, when_device=switch,
                   when_field="on", equals=True)
    through = ep.call("hub_automate", device_id=switch, field="on", value=False, when_device=hall,
                      when_field="on", equals=True)
    assert "triggers itself" in same.error and "triggers itself" in through.error
    assert ep.call("hub_list_schedules").data["schedules"] == []


def test_a_cycle_of_automations_is_refused(house_home):
    ep = control_episode(house_home)
    a, b, c = (device(ep, "light", room) for room in ("hall", "kitchen", "office"))
    first = ep.call("hub_automate", device_id=b, field="on", value=True, when_device=a, when_field="on", equals=True)
    second = ep.call("hub_automate", device_id=c, field="on", value=True, when_device=b, when_field="on", equals=True)
    closing = ep.call("hub_automate", device_id=a, field="on", value=False, when_device=c, when_field="on",
                      equals=True)
    assert first.error is None and second.error is None
    assert "cycle" in closing.error and "auto_1" in closing.error and "auto_2" in closing.error
    # once one of them is cancelled, the same automation closes no cycle
    assert ep.call("hub_cancel", schedule_id="auto_2").error is None
    assert ep.call("hub_automate", device_id=a, field="on", value=False, when_device=c, when_field="on",
                   equals=True).error is None


def test_the_hub_takes_at_most_the_declared_number_of_schedules(house_home):
    ep = control_episode(house_home)
    ep.task = ep.task.model_copy(update={"budget_units": 10 * MAX_SCHEDULES})
    hall = device(ep, "light", "hall")
    for k in range(MAX_SCHEDULES):
        assert ep.call("hub_schedule", device_id=hall, field="on", value=k % 2 == 0, in_s=100 + k).error is None
    over = ep.call("hub_schedule", device_id=hall, field="on", value=True, in_s=500)
    assert f"at most {MAX_SCHEDULES}" in over.error
    assert len(ep.call("hub_list_schedules").data["schedules"]) == MAX_SCHEDULES


# --- cancel, list, and failing visibly -------------------------------------------------------------------


def test_a_cancelled_schedule_never_fires(house_home):
    ep = control_episode(house_home)
    hall = device(ep, "light", "hall")
    kept = ep.call("hub_schedule", device_id=hall, field="on", value=True, in_s=20).data["schedule"]["id"]
    gone = ep.call("hub_schedule", device_id=hall, field="on", value=False, in_s=30).data["schedule"]["id"]
    assert ep.call("hub_cancel", schedule_id=gone).data["cancelled"]["status"] == "cancelled"
    again, unknown = ep.call("hub_cancel", schedule_id=gone), ep.call("hub_cancel", schedule_id="sched_9")
    assert "cancelled already" in again.error and "unknown schedule" in unknown.error
    ep.call("clock_wait", seconds=60)
    assert on(ep, hall) is True
    listed = {s["id"]: s["status"] for s in ep.call("hub_list_schedules").data["schedules"]}
    assert listed == {kept: "fired", gone: "cancelled"}
    assert [e["source"] for e in fired(ep, "schedule_fired")] == [kept]


def test_a_schedule_fails_visibly_when_its_device_does_not_answer_or_refuses(house_home):
    ep = control_episode(house_home)
    hall, lock = device(ep, "light", "hall"), device(ep, "lock", "hall")
    ep.call("hub_schedule", device_id=hall, field="on", value=True, in_s=10)
    ep.call("hub_set_state", device_id=lock, field="lock_state", value="unlocked")
    ep.call("hub_schedule", device_id=lock, field="lock_state", value="locked", in_s=10)
    ep.world.devices[hall].online = False  # the light drops off the network
    door = next(o for o in ep.world.openings.values() if o.kind == "entrance_door")
    door.open = True  # someone opened the front door: the bolt cannot be thrown
    ep.call("clock_wait", seconds=15)
    failed = fired(ep, "schedule_failed")
    assert [(e["data"]["device_id"], "offline" in e["data"]["reason"]) for e in failed] == [(hall, True),
                                                                                              (lock, False)]
    assert "must be closed" in failed[1]["data"]["reason"]
    assert on(ep, hall) is False and on(ep, lock, "lock_state") == "unlocked"
    assert [s["status"] for s in ep.call("hub_list_schedules").data["schedules"]] == ["failed", "failed"]


# --- determinism -------------------------------------------------------------------------------------------


def _play(home) -> tuple[list[dict], dict]:
    ep = control_episode(home, seed=3)
    lock, hall, kitchen = device(ep, "lock", "hall"), device(ep, "light", "hall"), device(ep, "light", "kitchen")
    ep.call("hub_schedule", device_id=kitchen, field="on", value=True, in_s=33.3)
    ep.call("hub_automate", device_id=hall, field="on", value=True, when_device=lock, when_event="unlocked",
            delay_s=2.5)
    ep.call("hub_set_state", device_id=lock, field="lock_state", value="unlocked")
    ep.call("clock_wait", seconds=50)
    return [ep.event_dict(e) for e in ep.world.events], ep.world.module(HubAutomation).snapshot()


def test_same_calls_same_firing_times_with_or_without_sleeping_modules(house_home, monkeypatch):
    first, again = _play(house_home), _play(house_home)
    monkeypatch.setattr(world_module, "SLEEPING", False)
    stepped = _play(house_home)
    assert first == again == stepped
    assert [e["kind"] for e in first[0] if e["kind"].endswith("_fired")] == ["automation_fired", "schedule_fired"]


def test_the_skills_page_states_the_limit():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "skills.md").read_text(encoding="utf-8")
    assert f"beyond {MAX_SCHEDULES} schedules and automations" in page.replace("\n", " ")


def test_bad_arguments_are_refused_with_a_reason(house_home):
    ep = control_episode(house_home)
    hall, lock = device(ep, "light", "hall"), device(ep, "lock", "hall")
    calls = {
        "forever": ep.call("hub_schedule", device_id=hall, field="on", value=True, in_s=float("inf")),
        "no time": ep.call("hub_schedule", device_id=hall, field="on", value=True, at="25:00"),
        "no trigger": ep.call("hub_automate", device_id=hall, field="on", value=True, when_device=lock),
        "unknown event": ep.call("hub_automate", device_id=hall, field="on", value=True, when_device=lock,
                                 when_event="rang"),
        "two thresholds": ep.call("hub_automate", device_id=hall, field="on", value=True, when_device="thermostat_2_1",
                                  when_field="local_temperature", above=20.0, below=25.0),
        "back in time": ep.call("hub_automate", device_id=hall, field="on", value=True, when_device=lock,
                                when_event="unlocked", delay_s=-5),
        "not the hub's": ep.call("hub_schedule", device_id="dome_camera_1_1", field="online", value=False, in_s=5),
    }
    assert all(r.error for r in calls.values()), {k: r.error for k, r in calls.items()}
    assert "door_opened" in calls["unknown event"].error and "0 s or more" in calls["back in time"].error
    assert ep.call("hub_list_schedules").data["schedules"] == []
