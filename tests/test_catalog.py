"""The catalog: what it holds, and how it reports a bad entry."""

import re
import shutil
from pathlib import Path

import pytest

from homeloop.core.catalog import (
    DEFAULT_CATALOG_DIR,
    FEATURE_KINDS,
    ITEM_TARGET_KINDS,
    CatalogError,
    Constraint,
    FieldSpec,
    load_catalog,
)

#: The 20 device types, in the order of docs/catalog.md.
DEVICE_TYPES = [
    "smoke_sensor", "contact_sensor", "leak_sensor", "doorbell", "soil_moisture_sensor",
    "stove", "lock", "roller_blind", "curtain", "thermostat", "plug", "light_switch", "light",
    "water_main", "garage_door",
    "washer", "dryer",
    "dome_camera",
    "fall_watch", "help_button",
]
CATEGORY_COUNTS = {"sensor": 5, "actuator": 10, "appliance": 2, "camera": 1, "wearable": 2}

REQUIRED_FURNITURE = [
    "single_bed", "double_bed", "nightstand", "wardrobe", "sofa", "armchair", "coffee_table", "tv_unit",
    "dining_table", "dining_chair", "desk", "office_chair", "bookshelf", "shoe_cabinet", "fridge", "range",
    "dishwasher", "washer", "dryer", "laundry_basket", "plant_stand", "side_table", "bench",
]
REQUIRED_OBJECTS = [
    "mug", "glasses", "pill_box_red", "pill_box_blue", "pill_box_white", "watering_can", "potted_plant",
    "parcel", "grocery_bag", "pan", "garment_shirt", "garment_towel", "book", "remote_control", "keys",
]


def test_catalog_loads_and_is_cached(catalog):
    assert load_catalog() is catalog
    assert load_catalog(DEFAULT_CATALOG_DIR) is catalog
    assert len(catalog.version_hash) == 64


def test_environment_variable_points_at_another_catalog(tmp_path, monkeypatch):
    copy = tmp_path / "cat"
    shutil.copytree(DEFAULT_CATALOG_DIR, copy)
    monkeypatch.setenv("HOMELOOP_CATALOG", str(copy))
    other = load_catalog()
    assert other.path == copy.resolve()
    assert other.version_hash == load_catalog(DEFAULT_CATALOG_DIR).version_hash  # same bytes, same hash


def test_the_twenty_device_types_in_spec_order(catalog):
    assert list(catalog.devices) == DEVICE_TYPES
    counts: dict[str, int] = {}
    for d in catalog.devices.values():
        counts[d.category] = counts.get(d.category, 0) + 1
    assert counts == CATEGORY_COUNTS


def test_device_fields_follow_the_spec(catalog):
    d = catalog.devices
    assert d["stove"].settable_fields == ("burner_1", "burner_2", "burner_3", "burner_4")
    assert d["lock"].fields["lock_state"].values == ["locked", "unlocked"]
    assert d["dome_camera"].fields["privacy_mode"].values == ["none", "people_masked", "image_blocked"]
    assert d["washer"].fields["cycle_state"].values == ["idle", "running", "finished"]
    assert d["light"].fields["brightness"].min == 0 and d["light"].fields["brightness"].max == 100
    assert d["roller_blind"].fields["position"].settable
    assert d["water_main"].matter.clusters == ["Valve Configuration and Control"]
    for dev in catalog.devices.values():
        for f in dev.fields.values():
            f.check(f.default)


def test_smoke_sensor_spacing_comes_from_nfpa_72(catalog):
    (rule,) = catalog.devices["smoke_sensor"].placement.keep_away
    assert rule.away_from == "cooking_appliance"
    assert (rule.min_distance, rule.fallback_distance) == (3.0, 1.8)
    assert "NFPA 72" in rule.source


def test_field_check_rejects_what_the_field_does_not_accept():
    f = FieldSpec(type="int", min=0, max=100, default=0, settable=True, description="level")
    assert f.check(55) == 55
    for bad in (101, -1, True, "50", None, 2.5):
        with pytest.raises(ValueError):
            f.check(bad)


def test_five_robots_and_the_g1_d_camera(catalog):
    assert len(catalog.robots) == 5
    g1d = catalog.robots["unitree_g1_d_ultimate"]
    assert g1d.head_camera.hfov_deg == 69
    assert g1d.head_camera.resolution == (1280, 720)
    assert g1d.hands.count == 2 and g1d.hands.fingers == 3
    assert g1d.torso_lift and g1d.base.kind == "wheeled"
    for robot in catalog.robots.values():
        assert robot.source
        assert robot.reach.min_grasp_height < robot.reach.max_grasp_height
    assert "Stretch 3" in catalog.robots["hello_robot_stretch_4"].source


def test_ten_people(catalog):
    assert len(catalog.people) == 10
    roles = {p.role for p in catalog.people.values()}
    assert {"resident", "delivery", "intruder"} <= roles
    assert not catalog.people["intruder"].enrolled


def test_required_furniture_and_objects(catalog):
    assert set(REQUIRED_FURNITURE) <= set(catalog.furniture)
    assert set(REQUIRED_OBJECTS) <= set(catalog.objects)
    stove = catalog.furniture["range"]
    assert stove.cooking_appliance and len(stove.burners) == 4 and stove.device == "stove"
    dryer = catalog.furniture["dryer"]
    assert dryer.containers[0].inner.depth > 0.4 and dryer.parts[0].opens == "drum"
    assert catalog.objects["watering_can"].capacity_l
    assert catalog.objects["potted_plant"].soil_moisture is not None
    assert catalog.objects["pan"].contents.substance == "oil"


def test_every_entry_has_positive_dimensions_and_mass(catalog):
    for entry in [*catalog.furniture.values(), *catalog.objects.values()]:
        d = entry.dimensions
        assert min(d.width, d.depth, d.height) > 0, entry.id
        assert entry.mass > 0, entry.id
    for obj in catalog.objects.values():
        assert obj.grasp_points, obj.id


def test_room_rules_reference_existing_ids(catalog):
    for rule in catalog.rules.values():
        keys = set()
        for item in rule.items:
            for cid in item.one_of:
                assert cid in catalog.furniture or cid in catalog.objects, (rule.id, cid)
            for c in [*item.place, *item.prefer]:
                if c.kind in ITEM_TARGET_KINDS:
                    assert c.target in keys, (rule.id, item.key, str(c))
                elif c.target is not None:
                    assert c.target in FEATURE_KINDS
            keys.add(item.key)


def test_room_rules_by_subtype(catalog):
    bedroom = catalog.room_rules["ROOM"]
    assert catalog.room_rules["BEDROOM"] is bedroom
    bed = bedroom.items[0]
    assert bed.key == "bed" and [str(c) for c in bed.place] == ["against_wall"]
    kd = [i.key for i in catalog.room_rules["KITCHEN_DINING"].items]
    assert kd[:3] == ["fridge", "range", "dishwasher"] and "dining_table" in kd
    assert catalog.rule_for("SHAFT") is None


def test_constraint_strings():
    assert Constraint.model_validate("beside:bed").target == "bed"
    assert Constraint.model_validate("against_wall").target is None
    with pytest.raises(ValueError):
        Constraint.model_validate("beside")
    with pytest.raises(ValueError):
        Constraint.model_validate("center:sofa")


def _bad_catalog(tmp_path, file: str, old: str, new: str):
    copy = tmp_path / "catalog"
    shutil.copytree(DEFAULT_CATALOG_DIR, copy)
    text = (copy / file).read_text()
    assert old in text
    (copy / file).write_text(text.replace(old, new, 1))
    return copy


def test_missing_dimension_names_file_entry_and_field(tmp_path):
    root = _bad_catalog(tmp_path, "furniture.yaml",
                        "dimensions: {width: 0.45, depth: 0.40, height: 0.55}",
                        "dimensions: {width: 0.45, height: 0.55}")
    with pytest.raises(CatalogError) as err:
        load_catalog(root)
    msg = str(err.value)
    assert "furniture.yaml" in msg and "'nightstand'" in msg and "dimensions.depth" in msg


def test_unknown_field_names_file_entry_and_field(tmp_path):
    root = _bad_catalog(tmp_path, "objects.yaml", "    label: mug\n", "    label: mug\n    colour_code: 7\n")
    with pytest.raises(CatalogError) as err:
        load_catalog(root)
    msg = str(err.value)
    assert "objects.yaml" in msg and "'mug'" in msg and "colour_code" in msg and "unknown field" in msg


def test_non_positive_dimension_is_rejected(tmp_path):
    root = _bad_catalog(tmp_path, "objects.yaml", "dimensions: {width: 0.14,", "dimensions: {width: 0.0,")
    with pytest.raises(CatalogError, match=r"objects.yaml: objects entry 'glasses': field dimensions.width"):
        load_catalog(root)


def test_rule_with_unknown_catalog_id_is_rejected(tmp_path):
    root = _bad_catalog(tmp_path, "rooms.yaml", "one_of: [wardrobe]", "one_of: [closet]")
    with pytest.raises(CatalogError, match=r"rooms.yaml: room_rules entry 'bedroom': .*unknown catalog id 'closet'"):
        load_catalog(root)


def test_a_file_that_is_not_yaml_is_named_with_where_it_breaks(tmp_path):
    root = _bad_catalog(tmp_path, "objects.yaml", "    label: mug\n", "    label: [mug\n")
    with pytest.raises(CatalogError, match=r"objects.yaml: not valid YAML: .*line \d+"):
        load_catalog(root)


def test_yaml_files_read_as_pyyamls_own_parser_reads_them():
    """load_yaml parses with libyaml (ten times faster): every YAML file the project ships,
    the catalog, the tasks and the house's furnishing, gives the data PyYAML's own parser gives."""
    import yaml

    from homeloop.sim.task import TASKS_DIR
    from homeloop.core.io import load_yaml
    from homeloop.pipeline.furnish import HOUSE_FURNISHING_YAML

    assert yaml.__with_libyaml__  # the wheels carry it; without it the catalog takes 10x longer
    files = [*sorted(DEFAULT_CATALOG_DIR.rglob("*.yaml")), *sorted(TASKS_DIR.glob("*.yaml")), HOUSE_FURNISHING_YAML]
    assert len(files) > 24
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.load(text, Loader=yaml.SafeLoader), path.name


# --- rules whose numbers live here -----------------------------------------------------------


def test_catalog_errors_are_one_line_user_errors_naming_the_file(catalog):
    from homeloop.core.errors import HomeLoopError

    assert issubclass(CatalogError, HomeLoopError)
    assert catalog.source_of("devices", "smoke_sensor") == catalog.path / "devices.yaml"
    assert catalog.placement_number("plug", "height") == catalog.devices["plug"].placement.height
    with pytest.raises(CatalogError, match=r"devices.yaml: devices entry 'smoke_sensor': field placement.height"):
        catalog.placement_number("smoke_sensor", "height")


def test_a_distance_rule_has_an_id(tmp_path):
    rule = load_catalog().devices["smoke_sensor"].placement.keep_away_from("cooking_appliance")
    assert rule.id == "smoke_sensor_cooking_distance"
    root = _bad_catalog(tmp_path, "devices.yaml", "        - id: smoke_sensor_cooking_distance\n          away_from",
                        "        - away_from")
    with pytest.raises(CatalogError, match=r"devices.yaml: devices entry 'smoke_sensor': field placement.keep_away"):
        load_catalog(root)


def test_the_fridge_rule_is_the_catalog_fridge_everywhere(tmp_path, monkeypatch):
    """The plan audit and the plan generator read the fridge's footprint and clearance
    from the catalog in use (HOMELOOP_CATALOG), as furnishing and the home check do."""
    from shapely.geometry import box

    from homeloop.audits import audit_plan, thresholds
    from homeloop.pipeline.sources.synthetic import fridge_mm
    from homeloop.core.plan import Plan, PlanIds, Space

    fridge = load_catalog().fridge
    d = fridge.dimensions
    assert thresholds.fridge_size() == (d.width, d.depth, fridge.clearance_front)
    assert thresholds.FRIDGE_FOOTPRINT == (d.width, d.depth)
    assert fridge_mm() == tuple(round(v * 1000) for v in (d.width, d.depth, fridge.clearance_front))
    kitchen = Plan(PlanIds(1, 1, 1, 1, "k"),
                   (Space("7", "KITCHEN", box(0, 0, d.width + 0.1, d.depth + fridge.clearance_front + 0.05)),))
    assert audit_plan(kitchen, ["no_fridge_space"]).passed
    deeper = fridge.clearance_front + 0.5
    root = _bad_catalog(tmp_path, "furniture.yaml", f"clearance_front: {fridge.clearance_front:.2f}",
                        f"clearance_front: {deeper:.2f}")
    monkeypatch.setenv("HOMELOOP_CATALOG", str(root))
    assert thresholds.FRIDGE_FRONT_CLEARANCE == deeper
    assert fridge_mm()[2] == round(deeper * 1000)
    (finding,) = audit_plan(kitchen, ["no_fridge_space"]).findings
    assert f"{deeper} m free floor in front" in finding.message


# --- household possessions -------------------------------------------------------------------


def test_possessions_state_a_share_and_where_it_comes_from(catalog):
    """Each possession names catalog items, a share and its basis; a survey's source states the
    share's own figure and a year, an assumption says so."""
    assert catalog.possessions, "the catalog declares what a household may lack"
    for p in catalog.possessions.values():
        assert 0.0 <= p.share <= 1.0
        assert all(cid in catalog.furniture or cid in catalog.objects for cid in p.items)
        source = " ".join(p.source.split())
        if p.basis == "survey":
            assert f"{p.share * 100:g} %" in source, (p.id, p.share, source)
            assert re.search(r"\b(19|20)\d\d\b", source), p.id
        else:
            assert "assum" in source.lower(), p.id
    owned = [cid for p in catalog.possessions.values() for cid in p.items]
    assert len(owned) == len(set(owned))


def test_possession_naming_an_unknown_item_is_rejected(tmp_path):
    root = _bad_catalog(tmp_path, "rooms.yaml", "items: [dishwasher]", "items: [dish_washer]")
    with pytest.raises(CatalogError, match=r"rooms.yaml: possessions entry 'dishwasher': field items\[0\]: "
                                           r"unknown catalog id 'dish_washer'"):
        load_catalog(root)


def test_an_item_belongs_to_one_possession_only(tmp_path):
    root = _bad_catalog(tmp_path, "rooms.yaml", "items: [coffee_table]", "items: [coffee_table, glasses]")
    with pytest.raises(CatalogError, match=r"possessions entry 'reading_glasses': field items\[0\]: 'glasses' is "
                                           r"already an item of possession 'coffee_table'"):
        load_catalog(root)


@pytest.mark.parametrize(("old", "new", "field"), [
    ("share: 0.74", "share: 1.2", "share"),
    ("basis: assumption", "basis: guess", "basis"),
])
def test_possession_share_and_basis_are_checked(tmp_path, old, new, field):
    root = _bad_catalog(tmp_path, "rooms.yaml", old, new)
    with pytest.raises(CatalogError, match=rf"rooms.yaml: possessions entry '\w+': field {field}"):
        load_catalog(root)


def test_the_catalog_page_states_each_possessions_share_items_and_basis(catalog):
    """docs/catalog.md ("Household possessions") lists the catalog's possessions as they are."""
    lines = (Path(__file__).resolve().parent.parent / "docs" / "catalog.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| possession | share | items | basis | source |") + 2
    stated = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        name, share, items, basis, _ = (c.strip() for c in line.strip("|").split("|"))
        stated[name.strip("`")] = (float(share), [i.strip(" `") for i in items.split(",")], basis)
    assert stated == {p.id: (p.share, p.items, p.basis) for p in catalog.possessions.values()}
