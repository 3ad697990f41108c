"""The reference pages in docs/ say what the data says.

Where a page states data (a task's checks, a device type's fields, an audit
threshold, a robot's reach) the test reads the same fact from its source
(task files, the catalog, the modules that define it) and compares. Pages
are parsed as Markdown tables: a table is found by its header row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from homeloop.sim.task import FAMILIES, load_tasks
from homeloop.core.catalog import load_catalog

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ("README.md", "code.md", "build.md", "benchmark.md", "data-format.md", "pipeline.md", "catalog.md",
         "episodes.md", "dynamics.md", "skills.md", "tasks.md", "scores.md", "agents.md")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def table(text: str, *header: str) -> list[list[str]]:
    """The body rows (cells stripped) of the first table whose header row is ``header``."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _cells(line) == list(header):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            assert all(len(r) == len(header) for r in rows), f"ragged table under {header}"
            return rows
    raise AssertionError(f"no table with header {header}")


def _cells(line: str) -> list[str]:
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return []
    return [c.strip() for c in line[1:-1].split("|")]


def ids(cell: str) -> list[str]:
    """The `code` spans of a cell, in order."""
    return re.findall(r"`([^`]+)`", cell)


def by_id(rows: list[list[str]]) -> dict[str, list[str]]:
    """Rows keyed by the code span of their first cell."""
    keyed = {ids(r[0])[0]: r for r in rows}
    assert len(keyed) == len(rows), "a row is listed twice"
    return keyed


def numbers(cell: str) -> list[float]:
    return [float(n) for n in NUMBER.findall(cell)]


def words(cell: str) -> list[str]:
    """A comma-separated cell as a list ('—' is empty)."""
    return [] if cell in ("—", "") else [w.strip() for w in cell.split(",")]


# --- the pages as a set ---------------------------------------------------------------


def test_the_index_lists_every_page_and_every_link_resolves() -> None:
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(PAGES)
    listed = {re.search(r"\(([^)]+)\)", r[0]).group(1) for r in table(page("README.md"), "file", "what it holds")}
    assert listed == set(PAGES) - {"README.md"}
    for name in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page(name)):
            assert (DOCS / target).exists(), f"{name} links to {target}, which does not exist"


def test_the_pages_stand_on_their_own() -> None:
    for name in PAGES:
        text = page(name)
        for outside in ("SPEC.md", "DESIGN.md", "../shared", "shared/"):
            assert outside not in text, f"{name} refers to {outside}"


# --- tasks -------------------------------------------------------------------------------

TASK_HEADER = ("task", "family", "ext.", "wake", "horizon (s)", "budget (units)", "scored at", "alert group",
               "scenario", "checks")


def test_every_task_is_documented_as_its_file_defines_it() -> None:
    tasks = load_tasks()
    rows = by_id(table(page("tasks.md"), *TASK_HEADER))
    assert list(rows) == list(tasks)
    for task_id, task in tasks.items():
        _, family, ext, wake, horizon, budget, scored, group, scenario, checks = rows[task_id]
        assert (family, ext == "yes", wake) == (task.family, task.extension, task.wake.kind), task_id
        assert (int(horizon), int(budget), scored) == (task.horizon_s, task.budget_units, task.scored_at), task_id
        assert (group, scenario) == (task.alert_group or "—", task.scenario), task_id
        documented = [tuple(c.replace("`", "").split()) for c in words(checks)]
        assert documented == [(c.id, c.kind) for c in task.checks], task_id


def test_family_table_gives_each_familys_horizons_and_budgets() -> None:
    tasks = load_tasks().values()
    rows = {r[0]: r for r in table(page("tasks.md"), "family", "wake events", "horizon", "budget")}
    assert list(rows) == list(FAMILIES)
    for family, row in rows.items():
        stated = " ".join(row[1:])
        for t in (t for t in tasks if t.family == family):
            assert f"{t.horizon_s} s" in stated and f"{t.budget_units} units" in stated, t.id


def test_check_thresholds_are_the_task_files() -> None:
    text = page("tasks.md") + page("dynamics.md")
    for task in load_tasks().values():
        for check in task.checks:
            for name, value in check.params.items():  # a number as written, a text (a role) quoted
                stated = f'"{value}"' if isinstance(value, str) else f"{value:g}"
                assert stated in text and f"`{name}`" in text, f"{task.id}.{check.id}: {name} = {value}"
    spill = next(c for c in load_tasks()["water_leak_response"].checks if c.id == "spill_contained")
    assert f"at most {spill.params['max_litres']:g} L spilt" in page("dynamics.md")
    from homeloop.bench.checks import PERSON_REACH_M

    assert f"within the resident's reach ({PERSON_REACH_M:g} m)" in page("tasks.md")


def test_alert_groups_are_the_tasks_that_name_them() -> None:
    tasks = load_tasks().values()
    rows = table(page("tasks.md"), "group", "tasks", "the alert", "the causes")
    groups = {r[0]: ids(r[1]) for r in rows}
    expected: dict[str, list[str]] = {}
    for t in tasks:
        if t.alert_group:
            expected.setdefault(t.alert_group, []).append(t.id)
    assert groups == expected


def test_applicability_table_names_each_tasks_rooms_devices_furniture_and_objects() -> None:
    rows = by_id(table(page("tasks.md"), "task", "rooms", "devices", "furniture", "objects", "robot must"))
    tasks = load_tasks()
    assert list(rows) == list(tasks)
    for task_id, task in tasks.items():
        _, rooms, devices, furniture, objects, _robot = rows[task_id]
        assert words(rooms) == list(task.requires.rooms), task_id
        assert [d.split("(")[0] for d in words(devices)] == [d.type for d in task.requires.devices], task_id
        assert [f.split("(")[0] for f in words(furniture)] == [f.semantic_class for f in task.requires.furniture]
        assert words(objects) == [o.describe() + " (scenario)" * (o.source == "scenario")
                                  for o in task.requires.objects], task_id


# --- catalog -----------------------------------------------------------------------------


def test_every_device_type_is_documented_as_the_catalog_defines_it() -> None:
    catalog = load_catalog()
    rows = by_id(table(page("catalog.md"), "type", "family", "name", "Matter device type", "clusters", "fields",
                       "events"))
    assert list(rows) == list(catalog.devices)
    for type_id, entry in catalog.devices.items():
        _, family, name, matter, clusters, fields, events = rows[type_id]
        assert (family, name) == (entry.category, entry.name), type_id
        assert matter == (entry.matter.device_type or "—"), type_id
        assert words(clusters) == list(entry.matter.clusters), type_id
        assert words(fields) == [f"**{n}**" if f.settable else n for n, f in entry.fields.items()], type_id
        assert words(events) == list(entry.events), type_id


def test_device_families_add_up() -> None:
    catalog = load_catalog()
    counts: dict[str, int] = {}
    for entry in catalog.devices.values():
        counts[entry.category] = counts.get(entry.category, 0) + 1
    stated = "Sensors {sensor}, actuators {actuator}, appliances {appliance} (".format(**counts)
    assert stated in page("catalog.md")
    assert f"{len(catalog.devices)} device types" in page("catalog.md").replace("Twenty", "20")


def test_placement_rules_state_the_catalogs_distances() -> None:
    devices = load_catalog().devices
    rows = table(page("catalog.md"), "device", "rule", "source")
    smoke = " ".join(r[1] for r in rows if r[0] == "smoke sensor")
    (keep_away,) = devices["smoke_sensor"].placement.keep_away
    assert f"≥ {keep_away.min_distance:.1f} m" in smoke and f"{keep_away.fallback_distance:g} m" in smoke
    assert f"≥ {devices['smoke_sensor'].placement.min_wall_distance:g} m from walls" in smoke
    leak = next(r[1] for r in rows if r[0] == "leak sensor")
    assert f"within {devices['leak_sensor'].placement.max_distance:g} m" in leak
    switch = next(r[1] for r in rows if r[0] == "light, light switch")
    placement = devices["light_switch"].placement
    assert f"within {placement.max_distance:g} m" in switch and f"{placement.height:g} m high" in switch
    main = next(r[1] for r in rows if r[0] == "water main")
    placement = devices["water_main"].placement
    assert f"within {placement.max_distance:.1f} m" in main and f"{placement.height:g} m high" in main


def test_device_bodies_are_the_tables() -> None:
    from homeloop.core.geometry_assets import CAMERA_LENS_CLEARANCE, DEVICE_BODIES, DEVICE_BODIES_BY_TYPE

    line = next(p for p in page("catalog.md").split("\n\n") if p.startswith("**Device bodies**"))
    words = {"at_door": "at a door", "on_window": "on a window", "on_opening": "an opening",
             "in_plant_pot": "in a plant pot", "on_furniture": "on furniture",
             ("light", "on_furniture"): "a table lamp", ("light", "floor"): "a floor lamp",
             ("humidifier", "floor"): "a humidifier", ("dehumidifier", "floor"): "a dehumidifier",
             ("fan", "floor"): "a fan", ("air_purifier", "floor"): "an air purifier"}
    for key, size in [*DEVICE_BODIES.items(), *DEVICE_BODIES_BY_TYPE.items()]:
        assert f"{words.get(key, key)} {' × '.join(f'{v:.2f}' for v in size)}" in line, key
    assert f"{CAMERA_LENS_CLEARANCE * 100:g} cm above its lens" in line


def test_robot_table_is_the_catalogs() -> None:
    robots = load_catalog().robots
    rows = table(page("catalog.md"), "body", "id", "form", "width (m)", "base", "max speed (m/s)",
                 "grasp height (m)", "reach (m)", "payload (kg)", "hands", "head camera", "HFOV (°)", "resolution")
    rows_by_id = {ids(r[1])[0]: r for r in rows}
    assert list(rows_by_id) == list(robots)
    for robot_id, r in robots.items():
        row = rows_by_id[robot_id]
        assert row[0] == r.name and row[2] == r.form.replace("_", " ") and row[4] == r.base.kind, robot_id
        assert numbers(row[3]) == [r.body.width] and numbers(row[5]) == [r.motion.max_speed], robot_id
        assert numbers(row[6]) == [r.reach.min_grasp_height, r.reach.max_grasp_height], robot_id
        assert numbers(row[7]) == [r.reach.horizontal_reach] and numbers(row[8]) == [r.payload.kg], robot_id
        assert numbers(row[9]) == [r.hands.count, r.hands.fingers], robot_id
        assert numbers(row[11]) == [r.head_camera.hfov_deg], robot_id
        assert numbers(row[12]) == list(r.head_camera.resolution), robot_id


def test_furniture_objects_and_people_tables_are_the_catalogs() -> None:
    catalog = load_catalog()
    text = page("catalog.md")
    furniture = by_id(table(text, "id", "class", "size w × d × h (m)", "surfaces", "containers",
                            "articulated parts", "notes"))
    assert list(furniture) == list(catalog.furniture)
    for item_id, item in catalog.furniture.items():
        row = furniture[item_id]
        d = item.dimensions
        assert row[1] == item.semantic_class and numbers(row[2]) == [d.width, d.depth, d.height], item_id
        assert words(row[4]) == [c.name for c in item.containers], item_id
        assert [p.split(" →")[0] for p in words(row[5])] == [p.name for p in item.parts], item_id
    objects = by_id(table(text, "id", "class", "mass (kg)", "grasp points", "notes"))
    assert list(objects) == list(catalog.objects)
    for object_id, obj in catalog.objects.items():
        row = objects[object_id]
        assert (row[1], numbers(row[2]), words(row[3])) == \
            (obj.semantic_class, [obj.mass], [g.name for g in obj.grasp_points]), object_id
    people = by_id(table(text, "id", "name", "role", "age group", "enrolled", "height (m)"))
    assert list(people) == list(catalog.people)
    for person_id, p in catalog.people.items():
        row = people[person_id]
        assert (row[1], row[2], row[3], row[4] == "yes", numbers(row[5])) == \
            (p.name, p.role, p.age_group.replace("_", " "), p.enrolled, [p.height]), person_id


# --- the build ---------------------------------------------------------------------------


def test_every_audit_rule_is_documented_in_registry_order() -> None:
    from homeloop.audits import RULES

    rows = table(page("pipeline.md"), "rule", "a plan fails when", "threshold")
    documented = [ids(r[0])[0] for r in rows]
    checked = [r for r in RULES.values() if not r.is_external]
    external = [r for r in RULES.values() if r.is_external]
    assert documented == [r.id for r in checked] + [r.id for r in external]


def test_every_audit_threshold_is_documented_with_its_value() -> None:
    from homeloop.audits import thresholds

    rows = by_id(table(page("pipeline.md"), "constant", "value", "meaning"))
    names = [n for n in dir(thresholds) if n.isupper() and isinstance(getattr(thresholds, n), (int, float))]
    names += [n for n in ("FRIDGE_FOOTPRINT", "FRIDGE_FRONT_CLEARANCE") if hasattr(thresholds, n)]
    assert sorted(rows) == sorted(names)
    for name in names:
        value = getattr(thresholds, name)
        expected = list(value) if isinstance(value, tuple) else [value]
        assert numbers(rows[name][1]) == pytest.approx(expected), name


def test_stages_features_and_selection_are_the_codes() -> None:
    from homeloop.pipeline.features import BEDROOM_CAP, OUTDOOR_TYPES, VECTOR_COLUMNS, WL_ITERATIONS
    from homeloop.pipeline.select import RULES as SELECTION_RULES, SITE_SHARE
    from homeloop.pipeline.stages import STAGES

    text = page("pipeline.md")
    stages = [ids(r[0])[0] for r in table(text, "stage", "reads", "does", "writes")]
    assert stages == list(STAGES)
    for column in VECTOR_COLUMNS:
        assert f"`{column}`" in text, column
    for outdoor in OUTDOOR_TYPES:
        assert f"`{outdoor}`" in text, outdoor
    assert f"capped at {BEDROOM_CAP} (`BEDROOM_CAP`)" in text
    assert f"with {WL_ITERATIONS}\niterations (`WL_ITERATIONS`)" in text
    assert f"under {SITE_SHARE * 100:g} % (`SITE_SHARE`)" in text.replace("\n", " ")
    for rule in (*SELECTION_RULES, "tie"):
        assert f"**{rule}**" in text, rule


def test_home_check_rules_are_documented() -> None:
    from homeloop.core import check

    assert check.RULES
    text = page("pipeline.md")
    for rule_id in check.RULES:
        assert f"`{rule_id}`" in text, rule_id
    assert f"more than {check.OBJECT_PENETRATION * 1000:g} mm into" in text.replace("\n", " ")


# --- data formats --------------------------------------------------------------------------


def test_csv_columns_subtypes_and_exclusions_are_the_readers() -> None:
    from homeloop.core.catalog import FEATURE_KINDS
    from homeloop.core.plan import (ANCILLARY_SUBTYPES, EMPTY_APARTMENT_ID, OUTDOOR_SUBTYPES, SERVICE_SUBTYPES,
                               SWISS_DWELLINGS_COLUMNS)

    text = page("data-format.md")
    assert [ids(r[0])[0] for r in table(text, "column", "holds")] == list(SWISS_DWELLINGS_COLUMNS)
    subtypes = {ids(r[0])[0]: set(ids(r[1])) for r in table(text, "entity_type", "subtypes")}
    assert subtypes["feature"] == set(FEATURE_KINDS)
    classes = {r[0]: set(ids(r[1])) for r in table(text, "class", "subtypes", "role")}
    assert classes["outdoor"] == OUTDOOR_SUBTYPES
    assert classes["ancillary"] == ANCILLARY_SUBTYPES
    assert classes["service"] == SERVICE_SUBTYPES
    assert EMPTY_APARTMENT_ID in text
    from homeloop.core.plan import SUBTYPES

    taxonomy = SUBTYPES["area"] - {"PORCH", "DRIVEWAY"}
    assert f"{len(taxonomy)} area subtypes" in text.replace("\n", " ")
    for entity_type in ("separator", "opening"):
        assert set(subtypes[entity_type]) == SUBTYPES[entity_type], entity_type


def test_every_rejection_reason_of_the_reader_is_documented() -> None:
    from homeloop.pipeline.sources import swiss_dwellings

    doc = swiss_dwellings.__doc__
    listed = doc[doc.index("Rejection reasons"):doc.index("Plan-level rejections")]
    reasons = set(re.findall(r"``([a-z_]+)``", listed))
    text = page("data-format.md")
    documented = {i for r in table(text, "reason", "the row") for i in ids(r[0])}
    documented |= {i for r in table(text, "reason", "rows", "switch") for i in ids(r[0])}
    assert documented == reasons | {"unit_usage_<USAGE>"}
    assert "`unit_usage_<USAGE>`" in text and swiss_dwellings.UNIT_USAGE_PREFIX == "unit_usage_"


def test_default_heights_are_the_builds() -> None:
    from homeloop.pipeline.furnish import (COUNTER_HEIGHT, DOOR_HEAD, DOOR_SILL, FEATURE_HEIGHTS, RAILING_HEIGHT,
                                           WINDOW_HEAD, WINDOW_SILL)
    from homeloop.pipeline.sources.swiss_dwellings import DEFAULT_WALL_HEIGHT

    rows = {r[0]: r for r in table(page("data-format.md"), "element", "bottom", "top", "constant")}
    tops = {"wall": DEFAULT_WALL_HEIGHT, "door": DOOR_HEAD, "window": WINDOW_HEAD, "railing": RAILING_HEIGHT,
            "kitchen counter": COUNTER_HEIGHT, "sink": FEATURE_HEIGHTS["SINK"], "bathtub": FEATURE_HEIGHTS["BATHTUB"],
            "washing machine": FEATURE_HEIGHTS["WASHING_MACHINE"]}
    assert FEATURE_HEIGHTS["KITCHEN"] == COUNTER_HEIGHT
    for element, top in tops.items():
        assert numbers(rows[element][2]) == [top], element
    assert numbers(rows["door"][1]) == [DOOR_SILL] and numbers(rows["window"][1]) == [WINDOW_SILL]


def test_home_file_keys_and_version_are_the_models() -> None:
    from homeloop.core.home import SCHEMA_VERSION, Home

    text = page("data-format.md")
    keys = [ids(r[0])[0] for r in table(text, "key", "holds")]
    assert keys == list(Home.model_fields)
    assert f"currently\n`{SCHEMA_VERSION}`" in text


# --- episodes, dynamics, skills, scores, agents ------------------------------------------


def test_every_ending_is_documented() -> None:
    from homeloop.bench.records import ENDINGS, SCHEMA_VERSION

    text = page("episodes.md")
    endings = [ids(r[0])[0] for r in table(text, "ending", "when", "scored")]
    assert endings == list(ENDINGS)
    assert f"`{SCHEMA_VERSION}`" in text


def test_the_time_step_is_the_worlds() -> None:
    from homeloop.sim.world import STEP_S

    assert f"steps of {STEP_S:g} s" in page("episodes.md").replace("\n", " ")
    assert f"steps of {STEP_S:g} s" in page("dynamics.md").replace("\n", " ")


def _clock(seconds: float) -> str:
    return f"{int(seconds // 3600):02d}:{int(seconds % 3600 // 60):02d}"


def _dynamics_phrases() -> dict[str, list[str]]:
    """For each module of homeloop/sim/dynamics/, what docs/dynamics.md must say of its constants."""
    from homeloop.core.catalog import load_catalog
    from homeloop.sim.dynamics import (air_devices, appliances, climate, cooking, humidity, light, people,
                                       robot_motion, smoke, timeline, water)

    plant = load_catalog().objects["potted_plant"]
    lumens = [f"{mount.replace('_', ' ')} {lm:,.0f} lm" for mount, lm in light.LUMENS_BY_MOUNT.items()]
    return {
        "cooking": [
            f"time constant τ | {cooking.TIME_CONSTANT_S:g} s",
            f"ignition comes {cooking.IGNITION_AFTER_ALARM_S:g} s after the alarm",
            f"smoke point {cooking.OIL_SMOKE_POINT_C:g} °C, ignition {cooking.OIL_IGNITION_C:g} °C",
            f"about {cooking.OIL_EQUILIBRIUM_C:.0f} °C",
            f"with a sensor {cooking.NOMINAL_SENSOR_DISTANCE_M:g} m from the range",
            f"the pan starts at {cooking.FRYING_START_C:g} °C, "
            f"its equilibrium is {cooking.FRYING_EQUILIBRIUM_C:g} °C",
            f"more than {cooking.ON_BURNER_M:g} m from a burner's centre is off it"],
        "smoke": [
            f"rises by {smoke.RISE_PER_S:g} per second", f"falls by {smoke.FALL_PER_S:g} per second",
            f"above **{smoke.SMOKE_ALARM_DENSITY:g}**", f"between 0 and {smoke.DENSITY_CAP:g}",
            f"front moves at {smoke.CEILING_JET_SPEED_M_S:g} m/s",
            f"({smoke.EXCHANGE_SPEED_M_S:g} m/s per metre of width)"],
        "water": [
            f"{water.LEAK_RATE_L_PER_MIN:g} L/min", f"at most {water.CONTAINED_LIMIT_L:g} L spilt",
            f"film {water.FILM_THICKNESS_M * 1000:g} mm thick"],
        "light": [
            f"sunrise ({_clock(light.SUNRISE_S)}) and sunset ({_clock(light.SUNSET_S)})",
            f"peaking at {light.DAYLIGHT_PEAK_LUX:,.0f} lux", f"times {light.DAYLIGHT_FACTOR_PER_GLAZING:g} ×",
            f"lumens × {light.UTILISATION_FACTOR:g}", f"lit at {light.BRIGHTNESS_FLOOR_LUX:g} lux",
            "mount " + ", ".join(lumens) + f", any other {light.DEFAULT_LUMENS:,.0f} lm",
            f"as {light.FIRE_LUMENS:,.0f} lm would"],
        "climate": [
            f"Rooms start at {climate.ROOM_TEMPERATURE_C:g} °C",
            f"time constant of {climate.HEATING_TIME_CONSTANT_S:g} s",
            *(f"`{band}` up to {upper:g}" for upper, band in climate.AIR_QUALITY_BANDS),
            f"moisture {plant.soil_moisture:g}"],
        "appliances": [" and the ".join(f"`{t}`" for t in appliances.CYCLE_DEVICE_TYPES) + " run cycles"],
        "humidity": [
            f"every {humidity.TICK_S:g} s", f"start at {humidity.START_PERCENT:g} %",
            f"outdoors at {humidity.OUTDOOR_PERCENT:g} %",
            f"{humidity.INFILTRATION_PER_S * 3600:g} air changes an hour",
            f"{humidity.WINDOW_EXCHANGE_M_S:g} m/s per metre of its width",
            f"times {humidity.FAN_EXCHANGE_FACTOR:g} while a fan", f"{humidity.SATURATION_G_PER_M3:g} g/m³",
            f"{humidity.PERSON_G_PER_S * 3600:g} g an hour",
            f"{humidity.EVAPORATION_G_PER_S_M2 * 3600:g} g an hour per",
            f"{humidity.STEAM_G_PER_S * 3600:g} g an hour from a pan above {humidity.BOILING_C:g} °C",
            f"{humidity.DEVICE_G_PER_S * 3600:g} g an hour"],
        "people": [
            f"flees {people.INTRUDER_REACTION_S:g} s after", f"or {people.INTRUDER_LINGER_S:g} s after arriving",
            f"forces the front door's lock ({people.INTRUDER_FORCE_S:g} s)",
            f"puts the parcel down ({people.PUT_DOWN_S:g} s", f"waits {people.WAIT_AFTER_RING_S:g} s",
            f"at {people.RUNNING_SPEED_M_S:g} m/s", f"relights the burner {people.RELIGHT_S:g} s after",
            *(f"{age.replace('_', ' ')} {speed:g} m/s" for age, speed in people.WALKING_SPEED_M_S.items())],
        "robot_motion": [f"within {robot_motion.LOOKAHEAD_S:g} s of driving ahead",
                         f"at most {robot_motion.MAX_REPLANS} times"],
        "timeline": [f"`{kind}`" for kind in timeline.HANDLERS],
        "air_devices": [
            f"{air_devices.PURIFIER_CADR_M3_H:g} m³ an hour at full speed",
            "{low}, {medium} and {high} % at `low`, `medium` and `high`".format(**air_devices.FAN_MODE_PERCENT),
            "({on} % and {auto} % when none is)".format(**air_devices.FAN_MODE_PERCENT)],
    }


def test_dynamics_parameters_are_the_modules() -> None:
    import pkgutil

    from homeloop.sim import dynamics

    phrases = _dynamics_phrases()
    modules = {m.name for m in pkgutil.iter_modules(dynamics.__path__)}
    assert set(phrases) == modules, "every dynamics module has its constants stated in docs/dynamics.md"
    text = page("dynamics.md").replace("\n", " ")
    for module, stated in phrases.items():
        for phrase in stated:
            assert phrase in text, f"{module}: {phrase}"


def test_activities_and_timeline_actions_are_the_modules() -> None:
    from homeloop.sim.dynamics.people import ACTIVITIES
    from homeloop.sim.dynamics.timeline import HANDLERS

    text = page("dynamics.md")
    rows = by_id(table(text, "activity", "posture", "heart rate (bpm)", "what happens"))
    assert list(rows) == list(ACTIVITIES)
    for name, activity in ACTIVITIES.items():
        _, posture, heart_rate, _ = rows[name]
        assert (posture, numbers(heart_rate)) == (activity.posture, [activity.heart_rate_bpm] if
                                                  activity.heart_rate_bpm is not None else []), name
    actions = [a for r in table(text, "action", "what happens") for a in ids(r[0])]
    assert sorted(actions) == sorted(HANDLERS)


def test_skill_table_sits_between_its_markers() -> None:
    from homeloop.sim.skills import SERVICES

    text = page("skills.md")
    start, end = "<!-- skills-table:start -->", "<!-- skills-table:end -->"
    assert text.count(start) == 1 and text.count(end) == 1 and text.index(start) < text.index(end)
    inside = text[text.index(start) + len(start):text.index(end)]
    rows = table(inside, "service", "tool", "units", "seconds", "what it does")
    assert [s for s in SERVICES if s in {r[0] for r in rows}] == list(SERVICES)
    for service, tool, *_ in rows:
        assert ids(tool)[0].startswith(f"{service}_"), tool


def test_the_skill_table_is_written_from_the_declarations() -> None:
    """The table is cost_table() itself; `python -m homeloop.sim.services` rewrites it after a change."""
    from homeloop.sim import services

    text = page("skills.md")
    assert services.with_cost_table(text) == text, "run: python -m homeloop.sim.services"
    rows = {ids(r[1])[0]: r for r in table(text, "service", "tool", "units", "seconds", "what it does")}
    assert list(rows) == [s.tool_name for s in services.available(control=True)]
    for tool, skill in services.declared().items():
        assert numbers(rows[tool][2])[0] == skill.units, tool


def test_perception_gates_are_the_services() -> None:
    from homeloop.sim.dynamics.light import BRIGHTNESS_FLOOR_LUX
    from homeloop.sim.services import perception

    text = page("skills.md").replace("\n", " ")
    gates = {r[0]: r[1] for r in table(page("skills.md"), "gate", "rule")}
    assert f"at least {perception.MIN_BOX_AREA_PX} pixels" in gates["size"]
    assert f"at least {perception.MIN_UNOCCLUDED * 100:g} %" in gates["occlusion"]
    assert f"({BRIGHTNESS_FLOOR_LUX:g} lux" in gates["light"]
    assert f"at least {perception.MIN_HEAD_SEEN * 100:g} % of their head" in text
    assert f"moved more than {perception.STALE_AFTER_M * 100:g} cm" in text


def test_failure_classes_and_check_classes_are_the_checks() -> None:
    from homeloop.bench.checks import FAILURE_CLASSES, PREDICATES
    from homeloop.bench.runner import LIMIT_ENDINGS
    from homeloop.sim.task import load_tasks

    text = page("scores.md")
    rows = {r[0].strip("*"): r for r in table(text, "class", "rule", "checks of this class")}
    assert list(rows) == list(FAILURE_CLASSES)
    for failure_class, row in rows.items():
        declared = [p.id for p in PREDICATES.values() if p.failure_class == failure_class]
        assert sorted(ids(row[2])) == sorted(declared), failure_class
    assert set(ids(rows["Limit"][1])) == set(LIMIT_ENDINGS)
    causes = {r[0]: r[1] for r in table(text, "cause", "tasks")}
    tasks = load_tasks().values()
    assert set(ids(causes["real"])) == {t.id for t in tasks if t.alert_cause == "real"}
    assert set(ids(causes["benign or faulty"])) == {t.id for t in tasks if t.alert_cause in ("benign", "faulty")}


@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")  # published results carry no times to act
def test_every_score_table_is_described_with_its_columns(tmp_path) -> None:
    from homeloop.bench.control.scores import TABLES as CONTROL_TABLES
    from homeloop.bench.scoring import FAMILIES, OPTIONAL_OUTCOME_COLUMNS, OUTCOME_COLUMNS, read_outcomes_csv
    from homeloop.bench.scoring import TABLES as PAPER_TABLES

    TABLES = {**PAPER_TABLES, **CONTROL_TABLES}
    text = page("scores.md")
    rows = {ids(r[0])[0]: r for r in table(text, "file", "one row per", "columns")}
    assert list(rows) == [f"{name}.csv" for name in TABLES]
    published = tmp_path / "outcomes.csv"  # a pass and a failure, in the house and in another home
    published.write_text("model,task,seed,passed,home\nm,handle_smoke_alarm,0,true,house\n"
                         "m,put_away,0,false,house\nm,put_away,0,true,home_2\n", encoding="utf-8")
    outcomes = read_outcomes_csv(published).frame
    for name, make in TABLES.items():
        for column in make(outcomes).columns:
            column = re.sub(r"seed\d+$", "seedN", column)
            assert column in FAMILIES or column in ids(rows[f"{name}.csv"][2]), f"{name}.csv: {column}"
    flat = text.replace("\n", " ")
    assert f"`{', '.join(OUTCOME_COLUMNS)}` (optionally `{'`, `'.join(OPTIONAL_OUTCOME_COLUMNS)}`)" in flat
    assert "`transport_error` never reached the model and are left out of every score" in flat


def test_episode_endings_that_count_as_limits() -> None:
    from homeloop.bench.runner import LIMIT_ENDINGS

    rows = {ids(r[0])[0]: r for r in table(page("episodes.md"), "ending", "when", "scored")}
    assert {e for e, r in rows.items() if "(Limit)" in r[2]} == set(LIMIT_ENDINGS)


def test_routes_and_checks_name_real_tasks() -> None:
    tasks = load_tasks()
    for task_id in re.findall(r"^- `(\w+)`:", page("agents.md"), flags=re.M):
        assert task_id in tasks, task_id
    check_ids = {c.id for t in tasks.values() for c in t.checks}
    for row in table(page("tasks.md"), "check", "holds when"):
        for check_id in ids(row[0]):
            assert check_id in check_ids or check_id.startswith("*"), check_id


def test_every_agent_is_documented() -> None:
    from homeloop.bench.agents import AGENTS
    from homeloop.bench.agents.registry import load_builtin_agents

    load_builtin_agents()  # the agent modules register themselves when imported
    rows = [ids(r[0])[0] for r in table(page("agents.md"), "agent", "what it does")]
    assert sorted(rows) == sorted(AGENTS)


def test_the_role_prompt_file_and_its_image_paragraphs_are_as_described() -> None:
    from importlib import resources

    text = page("agents.md")
    assert "`homeloop/bench/agents/role_prompt.md`" in text
    prompt = resources.files("homeloop.bench.agents").joinpath("role_prompt.md").read_text(encoding="utf-8")
    markers = ("<!-- images on -->", "<!-- images off -->", "<!-- end -->")
    assert [prompt.index(m) for m in markers] == sorted(prompt.index(m) for m in markers)
    for marker in markers:
        assert f"`{marker}`" in text, marker


def test_a_models_limits_are_the_agents() -> None:
    from homeloop.bench.agents.conversation import (DEFAULT_MAX_REQUESTS, IMAGE_MODES, INCOMPLETE_REASONS,
                                                    MALFORMED_LIMIT, MAX_ARGUMENT_CHARS)
    from homeloop.bench.agents.conversation import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S

    rows = {r[0]: r for r in table(page("agents.md"), "limit", "value", "the episode ends")}
    assert f"{DEFAULT_MAX_REQUESTS} by default" in rows["requests to the model"][1]
    malformed = next(r for k, r in rows.items() if k.startswith("malformed replies in a row"))
    assert numbers(malformed[1])[0] == MALFORMED_LIMIT
    assert f"{MAX_ARGUMENT_CHARS:,} characters" in rows["a tool call's arguments"][1]
    assert set(ids(rows["a reply the provider cut off"][1])) == set(INCOMPLETE_REASONS)
    retries = next(r for k, r in rows.items() if k.startswith("retries of a request"))
    assert numbers(retries[1])[0] == DEFAULT_MAX_RETRIES
    assert f"{DEFAULT_TIMEOUT_S:g} s" in rows["one request"][1]
    text = page("agents.md")
    for mode in IMAGE_MODES:
        assert f"`--images-in {mode}`" in text, mode


def test_the_price_list_fields_are_described() -> None:
    from homeloop.bench.agents.pricing import PRICING_FILE, Price

    text = page("agents.md")
    assert f"`homeloop/catalog/{PRICING_FILE}`" in text
    for name in Price.model_fields:
        assert f"`{name}`" in text, name


def test_episode_set_up_is_the_episodes(tmp_path) -> None:
    from homeloop.bench.runner import write_capture_images
    from homeloop.sim.episode import DEFAULT_ROBOT, MAX_PREROLL_S
    from homeloop.sim.skills import SERVICES

    text = page("episodes.md")
    flat = text.replace("\n", " ")
    assert f"at most {MAX_PREROLL_S:,.0f} s" in flat
    assert f"the {load_catalog().robots[DEFAULT_ROBOT].name} unless another is named" in flat
    arguments = {r[0]: r[1] for r in table(text, "argument", "effect")}
    assert ids(arguments["withheld services"]) == list(SERVICES)
    assert "`episodes/<episode id>/<capture id>.png`" in flat
    trace = [{"kind": "call", "data": {"capture_id": "cap_1", "image": "iVBORw0KGgo="}}]
    write_capture_images(tmp_path, "ep_1", trace)
    assert (tmp_path / "episodes" / "ep_1" / "cap_1.png").is_file()


# --- the README ----------------------------------------------------------------------------


def test_the_readme_figures_are_what_make_run_and_the_data_give() -> None:
    """Every figure the README states is what `make run` builds (the build's defaults) or what the
    task files and the catalog hold: the sentences are rebuilt from those sources."""
    from homeloop.pipeline.config import BuildConfig
    from homeloop.sim.task import TASK_IDS

    readme = " ".join((DOCS.parent / "README.md").read_text(encoding="utf-8").split())
    build, catalog = BuildConfig(), load_catalog()
    tasks, robots = len(TASK_IDS), len(catalog.robots)
    families = ("zero one two three four five six seven eight nine ten").split()[len(FAMILIES)]
    for sentence in (f"`make run` generates {build.plans:,} plans on {build.sites:,} sites",
                     f"until {build.homes:,} pass every check",
                     f"screens the {tasks} tasks for the {robots} robot bodies",
                     "verifies every screened pair" if build.verify_homes is None
                     else f"in the house and {build.verify_homes} of the homes",
                     f"{tasks} tasks in {families} families",
                     f"{len(catalog.devices)} device types, {robots} robot bodies, {len(catalog.people)} people"):
        assert sentence in readme, sentence
