"""The optional air devices (homeloop/catalog/air_devices.yaml, ``homeloop build --air-devices``): without
the option the catalog, its hash and the homes are what they were; with it each device stands where the
catalog's rule puts it, the humidity follows the humidifier, dehumidifier and fan, and the control
episodes that name them pass the scripted solver and no shortcut agent."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely import Point

from conftest import equip_generated
from control_agents import everything_infeasible
from homeloop.bench.control import generate as gen
from homeloop.bench.control.play import play_control
from homeloop.core.catalog import OPTIONAL_FILES, load_catalog
from homeloop.core.check import check_home
from homeloop.core.home import Home
from homeloop.pipeline.config import BuildConfig
from homeloop.pipeline.devices import REGISTRY, EquipResult, equip
from homeloop.pipeline.devices.air import AIR_DEVICE_TYPES, DOOR_CLEARANCE, DOOR_KINDS, footprint
from homeloop.pipeline.houses import house_home as build_house
from homeloop.sim import step_order
from homeloop.sim.dynamics import humidity
from homeloop.sim.episode import Episode

AIR = ("air_devices",)


@pytest.fixture(scope="module")
def air_catalog():
    return load_catalog(optional=AIR)


@pytest.fixture(scope="module")
def air_house(air_catalog) -> Home:
    return build_house(air_catalog)


@pytest.fixture(scope="module")
def equipped(tmp_path_factory, air_catalog) -> list[EquipResult]:
    """The furnished generated homes of the session's plans, equipped with the air devices, with the notes
    of what could not be placed."""
    return equip_generated(tmp_path_factory.mktemp("air-plans"), air_catalog)


@pytest.fixture(scope="module")
def air_homes(equipped, air_house) -> list[Home]:
    """The house and the generated homes, with the air devices."""
    return [air_house, *(r.home for r in equipped)]


# --- without the option ------------------------------------------------------------------------------


def test_without_the_option_the_catalog_and_the_build_parameters_are_as_they_were():
    plain = load_catalog()
    assert OPTIONAL_FILES["air_devices"] not in plain.files and plain.optional == ()
    assert not set(AIR_DEVICE_TYPES) & set(plain.devices) and len(plain.devices) == 20
    air = load_catalog(optional=AIR)
    assert set(air.files) - set(plain.files) == {OPTIONAL_FILES["air_devices"]}
    assert list(air.devices)[:20] == list(plain.devices)
    assert set(air.devices) - set(plain.devices) == set(AIR_DEVICE_TYPES)
    assert air.version_hash != plain.version_hash
    config, with_air = BuildConfig(), BuildConfig(air_devices=True)
    assert "catalog_parts" not in config.parameters() and config.name == "default"
    assert with_air.parameters() == config.parameters() | {"catalog_parts": ["air_devices"]}
    assert with_air.name == "default-air-devices"


def test_without_the_option_the_house_is_the_bytes_it_was(house_home):
    """The air step places nothing and draws nothing with the paper's catalog: the house equipped without
    the step is the same file, catalog hash included."""
    with REGISTRY.temporary_steps() as steps:
        del steps.steps["air_devices"]
        before = build_house(load_catalog())
    assert house_home.to_json() == before.to_json()
    assert house_home.source.catalog_hash == load_catalog().version_hash
    assert not any(d.type in AIR_DEVICE_TYPES for d in house_home.devices)


# --- with the option -----------------------------------------------------------------------------------


def test_each_air_device_stands_where_the_catalogs_rule_puts_it(air_homes, equipped, air_catalog):
    placed: Counter[str] = Counter()
    notes = {r.home.home_id: r.notes for r in equipped}
    for home in air_homes:
        assert check_home(home, air_catalog) == []
        assert home.source.catalog_hash == air_catalog.version_hash
        for kind in AIR_DEVICE_TYPES:
            rooms = set(air_catalog.devices[kind].placement.rooms)
            devices = home.devices_of_type(kind)
            assert all(home.room(d.room).type in rooms and d.mount == "floor" for d in devices)
            per_room = Counter(d.room for d in devices)
            assert all(n == 1 for n in per_room.values())
            for d in devices:
                _stands_clear_of_doors(home, d)
            # one in each room of the rule; a room without one is one the step found no place in
            wanted = [r.id for r in home.rooms if r.indoor and r.type in rooms]
            assert set(per_room) <= set(wanted)
            for rid in set(wanted) - set(per_room):
                assert home.home_id in notes, f"the house lacks a {kind} in room {rid}"
                assert f"room {rid}: no free floor against a wall for a {kind.replace('_', ' ')}" in notes[home.home_id]
            placed[kind] += len(per_room)
    assert all(placed[kind] > 0 for kind in AIR_DEVICE_TYPES), placed


def _stands_clear_of_doors(home: Home, d: Any) -> None:
    from homeloop.core.geometry_assets import device_body_size

    size = device_body_size(d.type, d.mount)
    assert size is not None
    body = footprint(d.pose.x, d.pose.y, d.pose.yaw, size.width, size.depth)
    assert home.room_polygon(d.room).contains(body)
    doors = home.opening_polygons()
    for o in home.openings:
        if o.kind in DOOR_KINDS and d.room in o.connects:
            assert body.distance(doors[o.id]) >= DOOR_CLEARANCE - 1e-3
    assert home.room_polygon(d.room).covers(Point(d.pose.x, d.pose.y))


def _unit(home: Home, kind: str) -> tuple[str, str]:
    d = home.devices_of_type(kind)[0]
    assert d.room is not None
    return d.id, d.room


def _humidity_after(home: Home, seconds: float, values: dict[str, dict[str, Any]]) -> dict[str, float]:
    ep = Episode(home, "put_away", seed=0, images=False, control=True)
    module = step_order.add(ep.world, humidity.Humidity)
    for device, fields in values.items():
        ep.world.devices[device].values.update(fields)
    ep.call("clock_wait", seconds=seconds)
    return dict(module.percent)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.integers(30, 44), minutes=st.integers(5, 15))
def test_a_running_dehumidifier_dries_its_room_toward_its_target_and_a_humidifier_wets_its_own(air_house, target,
                                                                                               minutes):
    dry, laundry = _unit(air_house, "dehumidifier")
    wet, bedroom = _unit(air_house, "humidifier")
    off = _humidity_after(air_house, minutes * 60.0, {})
    on = _humidity_after(air_house, minutes * 60.0, {dry: {"on": True, "target_humidity": target},
                                                     wet: {"on": True, "target_humidity": 60}})
    assert on == _humidity_after(air_house, minutes * 60.0, {dry: {"on": True, "target_humidity": target},
                                                             wet: {"on": True, "target_humidity": 60}})
    assert target - 1e-9 <= on[laundry] < off[laundry]
    assert off[bedroom] < on[bedroom] <= 60 + 1e-9
    assert {r: v for r, v in on.items() if r not in (laundry, bedroom)} == \
        {r: v for r, v in off.items() if r not in (laundry, bedroom)}


def test_a_running_fan_brings_the_outdoor_air_in_faster_through_an_open_window(air_house):
    fan, living = _unit(air_house, "fan")
    window = next(o.id for o in air_house.openings if o.kind == "window" and o.exterior and living in o.connects)

    def after(mode: str) -> float:
        ep = Episode(air_house, "put_away", seed=0, images=False, control=True)
        module = step_order.add(ep.world, humidity.Humidity)
        ep.world.openings[window].open = True
        ep.world.devices[fan].values["fan_mode"] = mode
        ep.call("clock_wait", seconds=300)
        return module.percent[living]

    still, blowing = after("off"), after("high")
    assert humidity.START_PERCENT < still < blowing < humidity.OUTDOOR_PERCENT


# --- control episodes -------------------------------------------------------------------------------


AIR_TEMPLATES = {"air_device_state", "damp_room", "dry_air", "switch_on_air_device", "fan_speed", "target_humidity",
                 "humidity_target_out_of_range", "fan_off_in", "humidity_target_later_out_of_range",
                 "door_opens_air", "fan_then_humidity_device"}


@pytest.fixture(scope="module")
def air_episodes(air_homes) -> list[tuple[Home, Any]]:
    out = []
    for home in air_homes:
        out += [(home, e) for e in gen.generate_home(home, per_home=36, seed=3).episodes]
    return out


def test_control_episodes_with_the_air_devices_pass_the_solver_and_no_shortcut(air_episodes):
    used = {e.template for _, e in air_episodes} & AIR_TEMPLATES
    assert len(used) >= 6, used
    assert all(play_control(home, e).passed for home, e in air_episodes)
    air = [(home, e) for home, e in air_episodes if e.template in AIR_TEMPLATES and e.feasible]
    for agent in ("do-nothing", "over-reactor", everything_infeasible()):
        assert [e.id for home, e in air if play_control(home, e, agent).passed] == []
    # the "missing device" requests never name an air device the home has
    for home, e in air_episodes:
        if e.constraint is not None and e.constraint.kind == "missing_device":
            named = [s.device_type for s in e.intent.steps] + [t.device_type for t in (e.intent.inquiry,) if t]
            assert not any(home.devices_of_type(kind) for kind in named if kind in AIR_DEVICE_TYPES)


def test_in_a_home_of_the_papers_set_the_air_templates_change_no_draw(house_home, monkeypatch):
    from homeloop.bench.control import templates

    with_air = gen.generate_home(house_home, per_home=24, seed=1)
    plain = {name: t for name, t in templates.TEMPLATES.items() if not t.needs}
    assert len(plain) < len(templates.TEMPLATES)
    monkeypatch.setattr(gen, "TEMPLATES", plain)
    without = gen.generate_home(house_home, per_home=24, seed=1)
    assert [e.line() for e in with_air.episodes] == [e.line() for e in without.episodes]
    assert with_air.dropped == without.dropped and with_air.rejected == without.rejected


def test_the_optional_devices_table_is_the_air_catalogs(air_catalog):
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "catalog.md").read_text(encoding="utf-8")
    for kind in AIR_DEVICE_TYPES:
        entry = air_catalog.devices[kind]
        fields = ", ".join(f"**{n}**" if f.settable else n for n, f in entry.fields.items())
        row = (f"| `{kind}` | {entry.category} | {entry.name} | {entry.matter.device_type or '—'} | "
               f"{', '.join(entry.matter.clusters)} | {fields} | {', '.join(entry.events) or '—'} |")
        assert row in text, row


def test_the_preview_draws_each_air_device_in_its_colour_and_names_it(air_house):
    from homeloop.pipeline.previews.home import DEVICE_STYLE, legend_keys, preview_canvas
    from homeloop.pipeline.previews.raster import rgb

    canvas = preview_canvas(air_house, title=air_house.home_id, dpi=80, width_in=8.0)
    pixels = np.asarray(canvas.image).astype(int)
    for kind in AIR_DEVICE_TYPES:
        _, colour, label = DEVICE_STYLE[kind]
        assert label in {k.label for k in legend_keys(air_house)}
        found = []
        for d in air_house.devices_of_type(kind):
            (x, y), = np.round(canvas.xy([d.pose.x, d.pose.y])).astype(int)
            # a ceiling camera's dot above it may hide the centre: its marker shows round it
            window = pixels[y - 4:y + 5, x - 4:x + 5].reshape(-1, 3)
            found.append(bool(np.any(np.all(np.abs(window - rgb(colour)) <= 8, axis=1))))
        assert any(found), kind


def _readings(home: Home) -> list[dict[str, Any]]:
    """A dehumidifier set to dry its room and a fan set to a speed, read through the hub along the way."""
    ep = Episode(home, "put_away", seed=0, images=False, control=True)
    dry, fan = home.devices_of_type("dehumidifier")[0].id, home.devices_of_type("fan")[0].id
    module = ep.world.running(humidity.Humidity)
    assert module is not None
    read = [ep.call("hub_get_state", device_id=dry).data, dict(module.percent)]
    for device, field, value in ((dry, "on", True), (dry, "target_humidity", 30), (fan, "fan_mode", "medium")):
        ep.call("hub_set_state", device_id=device, field=field, value=value)
    ep.call("clock_wait", seconds=300)
    read += [ep.call("hub_get_state", device_id=dry).data, ep.call("hub_get_state", device_id=fan).data]
    for field, value in (("percent_setting", 80), ("fan_mode", "on")):
        ep.call("hub_set_state", device_id=fan, field=field, value=value)
    read.append(ep.call("hub_get_state", device_id=fan).data)
    read.append(dict(module.percent))
    return read


def test_the_humidity_and_fan_readings_follow_the_world_with_sleeping_modules_or_without(air_house, monkeypatch):
    from homeloop.sim import world as world_module
    from homeloop.sim.dynamics.air_devices import FAN_MODE_PERCENT

    asleep = _readings(air_house)
    monkeypatch.setattr(world_module, "SLEEPING", False)
    assert _readings(air_house) == asleep
    start, at_start, dried, fan, asked, at_end = asleep
    room = dried["room"]
    # each reading is the room's humidity at its last move, to 0.01 %; the dried room fell toward the target
    assert start["readings"]["humidity_percent"] == round(at_start[room], 2)
    assert dried["readings"]["humidity_percent"] == round(at_end[room], 2) < at_start[room]
    assert fan["readings"]["percent_current"] == FAN_MODE_PERCENT["medium"]
    assert asked["readings"]["percent_current"] == 80


def test_a_home_without_air_devices_runs_no_humidity(house_home):
    ep = Episode(house_home, "put_away", seed=0, images=False, control=True)
    assert ep.world.running(humidity.Humidity) is None


def _smoke_with_purifier(home: Home, mode: str) -> tuple[float, str]:
    """The purifier's room's smoke and air quality 4 minutes after the kitchen fire's wake, every inner
    door open, the purifier set to ``mode``."""
    from homeloop.sim.dynamics.climate import Climate
    from homeloop.sim.dynamics.smoke import Smoke

    purifier = home.devices_of_type("air_purifier")[0]
    ep = Episode(home, "handle_smoke_alarm", seed=0, images=False)
    for o in home.openings:
        if o.kind == "door" and not o.exterior:
            ep.world.openings[o.id].open = True
    ep.call("hub_set_state", device_id=purifier.id, field="fan_mode", value=mode)
    ep.call("clock_wait", seconds=240)
    smoke, climate = ep.world.running(Smoke), ep.world.running(Climate)
    assert smoke is not None and climate is not None and purifier.room is not None
    return smoke.room_density(purifier.room), climate.air_quality(purifier.room)


def test_a_running_air_purifier_clears_its_rooms_smoke_with_sleeping_modules_or_without(air_house, monkeypatch):
    from homeloop.sim import world as world_module

    still, cleaned = _smoke_with_purifier(air_house, "off"), _smoke_with_purifier(air_house, "high")
    assert 0.0 < cleaned[0] < still[0]
    monkeypatch.setattr(world_module, "SLEEPING", False)
    assert (_smoke_with_purifier(air_house, "off"), _smoke_with_purifier(air_house, "high")) == (still, cleaned)
