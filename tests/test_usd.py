"""USD export: catalog assets, homes, semantic labels, cameras, validation, determinism,
and the mesh geometry (prisms, caps) the stages carry."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st
from pxr import Gf, Sdf, Usd, UsdGeom, UsdLux, UsdPhysics, UsdShade, UsdValidation
from shapely.geometry import Polygon, box

from homeloop.core.catalog import load_catalog
from homeloop.core.geometry_assets import CAMERA_LENS_CLEARANCE
from homeloop.core.home import (
    CameraPose,
    Home,
    ObjectLocation,
    Opening,
    Pose,
    Room,
    Source,
    Wall,
    camera_from_catalog,
    device_from_catalog,
    furniture_from_catalog,
    object_from_catalog,
    rings_from_polygon,
)
from homeloop.pipeline.usd import (
    DEVICE_ASSETS,
    DEVICE_BODY,
    HOME_ROOT,
    ValidationReport,
    assets_held_open,
    camera_rotate_xyz,
    device_asset_key,
    device_visual_name,
    export_home,
    labels_of,
    semantic_class_counts,
    thing_labels,
    validate_stage,
    validate_stage_report,
    validators,
    validators_for,
    write_catalog_assets,
)
from homeloop.pipeline.usd.author import MeshData, Triangulation, prism
from homeloop.pipeline.usd.validate import STAGE_VALIDATORS, _message

#: Camera poses of the test home: (yaw, pitch) in radians.
CAMERA_POSES = [(-2.5, -0.6), (0.0, 0.0), (math.pi / 2, -math.pi / 4), (math.pi, 0.3), (1.0, -math.pi / 2)]


def small_home(home_id: str = "small", fridge_open: bool = False) -> Home:
    """A kitchen (4 x 3 m) south of a living room (4 x 2.9 m), a 0.1 m wall
    between them with a door, a window in the kitchen's south wall, a garage
    door in the living room's north wall; a fridge (door), a sofa, a mug on
    the floor, a smoke sensor and dome cameras."""
    cat = load_catalog()
    kitchen = Room(id="1", name="kitchen", type="KITCHEN", polygon=rings_from_polygon(box(0, 0, 4, 3)))
    living = Room(id="2", name="living room", type="LIVING_ROOM", polygon=rings_from_polygon(box(0, 3.1, 4, 6)))
    walls = [
        Wall(id="wall_s", polygon=rings_from_polygon(box(-0.1, -0.1, 4.1, 0.0))),
        Wall(id="wall_m", polygon=rings_from_polygon(box(0.0, 3.0, 4.0, 3.1))),
        Wall(id="wall_n", polygon=rings_from_polygon(box(-0.1, 6.0, 4.1, 6.1))),
    ]
    openings = [
        Opening(id="door_1", kind="door", polygon=rings_from_polygon(box(1.0, 3.0, 1.9, 3.1)),
                connects=["1", "2"], width=0.9, height=2.0),
        Opening(id="window_1", kind="window", polygon=rings_from_polygon(box(2.5, -0.1, 3.5, 0.0)),
                connects=["1"], width=1.0, sill=0.5, height=1.9, exterior=True),
        Opening(id="garage_1", kind="garage_door", polygon=rings_from_polygon(box(0.5, 6.0, 3.0, 6.1)),
                connects=["2"], width=2.5, height=2.2, exterior=True, is_open=True),
    ]
    fridge = furniture_from_catalog(cat.furniture["fridge"], "fridge_1", "1", Pose(x=0.4, y=1.5))
    if fridge_open:
        fridge.parts[0].state = fridge.parts[0].range[1]
    sofa = furniture_from_catalog(cat.furniture["sofa"], "sofa_1", "2", Pose(x=2.0, y=5.5, yaw=-math.pi / 2))
    mug = object_from_catalog(cat.objects["mug"], "mug_1", ObjectLocation(kind="floor", room="1"),
                              Pose(x=2.0, y=1.0, yaw=0.3))
    smoke = device_from_catalog(cat.devices["smoke_sensor"], "smoke_1", "1", Pose(x=3.0, y=1.5, z=2.6),
                                values={"battery_percent": 87})
    devices, cameras = [smoke], []
    for k, (yaw, pitch) in enumerate(CAMERA_POSES):
        cid = f"cam_{k}"
        devices.append(device_from_catalog(cat.devices["dome_camera"], cid, "1", Pose(x=3.9, y=2.9, z=2.55)))
        cameras.append(camera_from_catalog(cat.devices["dome_camera"], cid, "1",
                                           CameraPose(x=3.9, y=2.9, z=2.55, yaw=yaw, pitch=pitch),
                                           agent_visible=k % 2 == 0, privacy_mode="people_masked" if k else "none"))
    return Home(
        home_id=home_id,
        source=Source(kind="synthetic", plan="1-1000-aaaa", seed=7, catalog_hash=cat.version_hash),
        rooms=[kitchen, living], walls=walls, openings=openings, furniture=[fridge, sofa], objects=[mug],
        devices=devices, cameras=cameras,
    )


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Assets written once; two homes exported against them (validated)."""
    out = tmp_path_factory.mktemp("build")
    cat = load_catalog()
    assets = write_catalog_assets(cat, out / "assets")
    results = {}
    for home_id, fridge_open in (("small", False), ("other", True)):
        home = small_home(home_id, fridge_open)
        results[home_id] = export_home(home, cat, out / "homes" / home_id / "home.usdc", assets=assets)
    return out, assets, results


def _open(path) -> Usd.Stage:
    stage = Usd.Stage.Open(str(path))
    assert stage is not None
    return stage


def test_assets_one_per_catalog_entry(build):
    out, assets, _ = build
    cat = load_catalog()
    items = set(cat.furniture) | set(cat.objects)
    assert set(assets) == items | {device_asset_key(t) for t in cat.devices}  # and one per device type
    assert sorted(p.name for p in (out / "assets").iterdir()) == sorted([f"{i}.usdc" for i in items] + [DEVICE_ASSETS])
    types = sorted(f"{t}.usdc" for t in cat.devices)
    assert sorted(p.name for p in (out / "assets" / DEVICE_ASSETS).iterdir()) == types
    for path in assets.values():
        stage = _open(path)
        assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdGeom.GetStageUpAxis(stage) == "Z"
        assert stage.GetDefaultPrim() and labels_of(stage.GetDefaultPrim())


def test_fridge_asset_has_a_jointed_door(build):
    _, assets, _ = build
    stage = _open(assets["fridge"])
    root = stage.GetDefaultPrim()
    assert labels_of(root) == ["fridge"]
    # Furniture is static: no rigid body, so no mass to simulate; the catalog mass stays readable.
    assert not root.HasAPI(UsdPhysics.RigidBodyAPI) and not root.HasAPI(UsdPhysics.MassAPI)
    assert root.GetAttribute("homeloop:mass").Get() == pytest.approx(load_catalog().furniture["fridge"].mass)
    body = root.GetChild("fridge")  # the body mesh is named after the catalog entry
    assert body.IsA(UsdGeom.Mesh) and body.HasAPI(UsdPhysics.CollisionAPI)
    assert UsdPhysics.MeshCollisionAPI(body).GetApproximationAttr().Get() == "none"  # exact, cavity and all
    door = root.GetChild("door")
    assert door.HasAPI(UsdPhysics.RigidBodyAPI) and door.GetChild("panel").HasAPI(UsdPhysics.CollisionAPI)
    assert labels_of(door, "part") == ["door"]
    joint = UsdPhysics.RevoluteJoint(root.GetChild("door_joint"))
    assert joint and joint.GetAxisAttr().Get() == "Z"
    closed, opened = load_catalog().furniture["fridge"].parts[0].range
    assert joint.GetLowerLimitAttr().Get() == pytest.approx(math.degrees(min(closed, opened)), abs=1e-3)  # degrees
    assert joint.GetUpperLimitAttr().Get() == pytest.approx(math.degrees(max(closed, opened)), abs=1e-3)
    assert joint.GetBody0Rel().GetTargets() == [root.GetPath()]
    assert joint.GetBody1Rel().GetTargets() == [door.GetPath()]
    assert tuple(joint.GetLocalPos0Attr().Get()) == pytest.approx((0.325, -0.3, 0.0))
    # The door panel lies on the fridge's front face, across its width.
    lo, hi = (Gf.Vec3d(*v) for v in UsdGeom.Mesh(door.GetChild("panel")).GetExtentAttr().Get())
    assert lo[0] == pytest.approx(0.0) and hi[1] - lo[1] == pytest.approx(0.6, abs=1e-3)
    nightstand = _open(assets["nightstand"])
    drawer = UsdPhysics.PrismaticJoint(nightstand.GetDefaultPrim().GetChild("drawer_front_joint"))
    assert drawer and drawer.GetUpperLimitAttr().Get() == pytest.approx(0.3)


def test_carryable_object_asset_is_a_rigid_body(build):
    _, assets, _ = build
    stage = _open(assets["mug"])
    mug = stage.GetDefaultPrim()
    assert mug.HasAPI(UsdPhysics.RigidBodyAPI) and mug.HasAPI(UsdPhysics.MassAPI)
    assert UsdPhysics.MassAPI(mug).GetMassAttr().Get() == pytest.approx(0.3)
    assert mug.GetChild("geom").HasAPI(UsdPhysics.CollisionAPI)
    assert labels_of(mug) == ["mug"]
    assert any(c.GetName().startswith("grasp_") for c in mug.GetChildren())


def test_home_round_trip(build):
    _, _, results = build
    result = results["small"]
    stage = _open(result.path)
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert stage.GetDefaultPrim().GetPath() == Sdf.Path(f"/{HOME_ROOT}")
    counts = semantic_class_counts(stage)
    assert counts == result.prim_counts
    # Floors: two rooms, and the floor through the door and the garage door (not the window, 0.5 m up).
    assert counts == {"camera": 5, "ceiling": 2, "dome_camera": 5, "door": 1, "floor": 4, "fridge": 1,
                      "garage_door": 1, "mug": 1, "smoke_sensor": 1, "sofa": 1, "wall": 6, "window": 1}
    assert result.bytes == result.path.stat().st_size > 0 and result.seconds > 0


def test_every_prim_has_its_things_labels(build):
    """Things, groups, rooms, lights and cameras carry labels; the prims below a thing (its meshes,
    their subsets, its parts' pieces) carry none of their own and inherit the thing's (UsdSemantics'
    inherited labels): every drawn mesh has a class, its thing's."""
    from pxr import UsdSemantics

    _, _, results = build
    stage = _open(results["small"].path)
    unlabelled = [str(p.GetPath()) for p in stage.Traverse() if not thing_labels(p) and not thing_labels(p, "group")]
    assert unlabelled == []
    query = UsdSemantics.LabelsQuery("class", Usd.TimeCode.Default())
    drawn = [p for p in stage.Traverse() if p.IsA(UsdGeom.Gprim)
             and UsdGeom.Imageable(p).ComputePurpose() != UsdGeom.Tokens.guide]
    assert drawn and [str(p.GetPath()) for p in drawn if not query.ComputeUniqueInheritedLabels(p)] == []
    for p in drawn:
        assert set(thing_labels(p)) <= set(query.ComputeUniqueInheritedLabels(p)), p.GetPath()
    door_parts = [p for p in Usd.PrimRange(stage.GetPrimAtPath("/Home/Furniture/fridge_1/door")) if p.IsA(UsdGeom.Mesh)]
    assert door_parts and all("fridge" in query.ComputeUniqueInheritedLabels(p) for p in door_parts)
    assert all(thing_labels(p, "part") == ["door"] for p in door_parts)
    assert thing_labels(stage.GetPrimAtPath(f"/Home/Devices/smoke_1/{DEVICE_BODY}")) == ["smoke_sensor"]
    floor = stage.GetPrimAtPath("/Home/Rooms/room_1/floor")
    assert labels_of(floor) == ["floor"] and thing_labels(floor, "room") == ["kitchen"]  # the room's own
    assert thing_labels(floor, "room_id") == ["1"] and query.ComputeUniqueInheritedLabels(floor) == ["floor"]
    door = stage.GetPrimAtPath("/Home/Openings/door_1")
    assert labels_of(door) == ["door"] and labels_of(door, "room_id") == ["1", "2"]
    assert labels_of(stage.GetPrimAtPath("/Home/Furniture/sofa_1"), "room") == ["living_room"]


def test_devices_carry_their_fields(build):
    _, _, results = build
    stage = _open(results["small"].path)
    devices = {p.GetAttribute("homeloop:id").Get(): p for p in stage.GetPrimAtPath("/Home/Devices").GetChildren()}
    assert sorted(devices) == ["cam_0", "cam_1", "cam_2", "cam_3", "cam_4", "smoke_1"]
    smoke = devices["smoke_1"]
    assert smoke.GetAttribute("homeloop:type").Get() == "smoke_sensor"
    assert smoke.GetAttribute("homeloop:room").Get() == "1"
    assert smoke.GetAttribute("homeloop:field:smoke_detected").Get() is False
    assert smoke.GetAttribute("homeloop:field:battery_percent").Get() == 87
    accepts = json.loads(smoke.GetAttribute("homeloop:field:battery_percent:accepts").Get())
    assert accepts["type"] == "int" and accepts["min"] == 0 and accepts["max"] == 100
    assert labels_of(smoke) == ["smoke_sensor"] and labels_of(smoke, "room") == ["kitchen"]
    cam = devices["cam_1"]
    accepts = json.loads(cam.GetAttribute("homeloop:field:privacy_mode:accepts").Get())
    assert accepts["values"] == ["none", "people_masked", "image_blocked"] and "settable" in accepts
    xf = UsdGeom.Xformable(smoke).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    assert tuple(xf.ExtractTranslation()) == pytest.approx((3.0, 1.5, 2.6))
    # The device prim, named after it, holds its body box (guide) and its visual (render): one
    # mesh without a transform of its own, which an importer merging single children (Blender)
    # makes the device's one object.
    assert smoke.GetName() == "smoke_1" and smoke.IsA(UsdGeom.Xform)
    body, visual = smoke.GetChild(DEVICE_BODY), smoke.GetChild(device_visual_name("smoke_sensor"))
    assert body.IsA(UsdGeom.Mesh) and UsdGeom.Imageable(body).ComputePurpose() == UsdGeom.Tokens.guide
    assert visual.IsA(UsdGeom.Mesh) and UsdGeom.Imageable(visual).ComputePurpose() == UsdGeom.Tokens.render
    assert not UsdGeom.Xformable(visual).GetOrderedXformOps()


def test_cameras_match_the_home_file(build):
    _, _, results = build
    stage = _open(results["small"].path)
    home = small_home()
    for cam in home.cameras:
        prim = stage.GetPrimAtPath(f"/Home/Cameras/{cam.id}")
        usd_cam = UsdGeom.Camera(prim)
        assert usd_cam, cam.id
        gf_cam = usd_cam.GetCamera(Usd.TimeCode.Default())
        assert gf_cam.GetFieldOfView(Gf.Camera.FOVHorizontal) == pytest.approx(cam.hfov_deg, abs=1e-3)
        w, h = cam.resolution
        assert gf_cam.aspectRatio == pytest.approx(w / h, rel=1e-4)
        assert tuple(prim.GetAttribute("homeloop:resolution").Get()) == (w, h)
        assert prim.GetAttribute("homeloop:privacy_mode").Get() == cam.privacy_mode
        assert prim.GetAttribute("homeloop:agent_visible").Get() is cam.agent_visible
        assert labels_of(prim) == ["camera"]


@pytest.mark.parametrize("index", range(len(CAMERA_POSES)))
def test_camera_looks_along_the_pose(build, index):
    _, _, results = build
    stage = _open(results["small"].path)
    yaw, pitch = CAMERA_POSES[index]
    yaw, pitch = round(yaw, 4), round(pitch, 4)
    prim = stage.GetPrimAtPath(f"/Home/Cameras/cam_{index}")
    m = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    forward = m.TransformDir(Gf.Vec3d(0, 0, -1)).GetNormalized()
    want = (math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw), math.sin(pitch))
    assert tuple(forward) == pytest.approx(want, abs=1e-4)
    assert tuple(m.ExtractTranslation()) == pytest.approx((3.9, 2.9, 2.55))
    up = m.TransformDir(Gf.Vec3d(0, 1, 0))
    if abs(pitch) < math.pi / 2 - 1e-3:  # image up leans towards world up (no roll)
        assert up[2] > 0
        right = m.TransformDir(Gf.Vec3d(1, 0, 0))
        assert right[2] == pytest.approx(0.0, abs=1e-6)
    assert camera_rotate_xyz(0.0, 0.0) == (90.0, 0.0, -90.0)


def _world_points(prim) -> list[Gf.Vec3d]:
    m = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    return [m.Transform(Gf.Vec3d(*p)) for p in UsdGeom.Mesh(prim).GetPointsAttr().Get()]


def test_walls_are_cut_at_doors_and_windows(build):
    _, _, results = build
    stage = _open(results["small"].path)
    middle = _world_points(stage.GetPrimAtPath("/Home/Walls/wall_m"))
    # No full-height wall inside the door's 1.0-1.9 m span.
    assert not any(1.0 + 1e-6 < p[0] < 1.9 - 1e-6 for p in middle)
    assert max(p[2] for p in middle) == pytest.approx(2.6)
    lintel = _world_points(stage.GetPrimAtPath("/Home/Openings/door_1/wall"))
    assert {round(p[2], 3) for p in lintel} == {2.0, 2.6}
    window = _world_points(stage.GetPrimAtPath("/Home/Openings/window_1/wall"))
    assert {round(p[2], 3) for p in window} == {0.0, 0.5, 2.4, 2.6}
    assert min(p[0] for p in window) == pytest.approx(2.5) and max(p[0] for p in window) == pytest.approx(3.5)
    south = _world_points(stage.GetPrimAtPath("/Home/Walls/wall_s"))
    assert not any(2.5 + 1e-6 < p[0] < 3.5 - 1e-6 for p in south)


def test_floors_are_triangulated_room_polygons(build):
    _, _, results = build
    stage = _open(results["small"].path)
    floor = UsdGeom.Mesh(stage.GetPrimAtPath("/Home/Rooms/room_1/floor"))
    assert set(floor.GetFaceVertexCountsAttr().Get()) == {3}
    points = floor.GetPointsAttr().Get()
    area = 0.0
    indices = list(floor.GetFaceVertexIndicesAttr().Get())
    for i in range(0, len(indices), 3):
        a, b, c = (points[j] for j in indices[i:i + 3])
        area += ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])) / 2
    assert area == pytest.approx(12.0)  # counter-clockwise from above: facing up
    assert stage.GetPrimAtPath("/Home/Rooms/room_1/ceiling").IsValid()


def test_doors_have_joints(build):
    _, _, results = build
    stage = _open(results["small"].path)
    door = stage.GetPrimAtPath("/Home/Openings/door_1")
    joint = UsdPhysics.RevoluteJoint(door.GetChild("joint"))
    assert joint and (joint.GetLowerLimitAttr().Get(), joint.GetUpperLimitAttr().Get()) == (0.0, 90.0)
    leaf = door.GetChild("leaf")
    assert joint.GetBody1Rel().GetTargets() == [leaf.GetPath()] and leaf.HasAPI(UsdPhysics.RigidBodyAPI)
    hinge = UsdGeom.Xformable(leaf).ComputeLocalToWorldTransform(Usd.TimeCode.Default()).ExtractTranslation()
    assert tuple(hinge) == pytest.approx((1.0, 3.05, 0.0))
    garage = stage.GetPrimAtPath("/Home/Openings/garage_1")
    lift = UsdPhysics.PrismaticJoint(garage.GetChild("joint"))
    assert lift and lift.GetAxisAttr().Get() == "Z" and lift.GetUpperLimitAttr().Get() == pytest.approx(2.2)
    assert tuple(garage.GetChild("leaf").GetAttribute("xformOp:translate:joint").Get()) == (0.0, 0.0, 2.2)
    assert stage.GetPrimAtPath("/Home/Openings/window_1/pane").IsValid()


def test_furniture_and_objects_reference_shared_assets(build):
    out, assets, results = build
    for home_id in ("small", "other"):
        stage = _open(results[home_id].path)
        fridge = stage.GetPrimAtPath("/Home/Furniture/fridge_1")
        refs = fridge.GetMetadata("references").GetAddedOrExplicitItems()
        assert [r.assetPath for r in refs] == ["../../assets/fridge.usdc"]
        used = {layer.realPath for layer in stage.GetUsedLayers()}
        assert str(assets["fridge"].resolve()) in used and str(assets["mug"].resolve()) in used
        # The referenced asset composes: its body, door and joint appear under the placed prim.
        assert fridge.GetChild("door").HasAPI(UsdPhysics.RigidBodyAPI)
        assert labels_of(fridge) == ["fridge"] and labels_of(fridge, "room") == ["kitchen"]
        mug = stage.GetPrimAtPath("/Home/Objects/mug_1")
        assert mug.HasAPI(UsdPhysics.RigidBodyAPI)
        xf = UsdGeom.Xformable(mug).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
        assert tuple(xf.ExtractTranslation()) == pytest.approx((2.0, 1.0, 0.0))
    assert len(list((out / "assets").glob("fridge*"))) == 1


def test_open_part_state_is_shown(build):
    _, _, results = build
    small, other = _open(results["small"].path), _open(results["other"].path)
    closed = small.GetPrimAtPath("/Home/Furniture/fridge_1/door")
    opened = other.GetPrimAtPath("/Home/Furniture/fridge_1/door")
    assert closed.GetAttribute("xformOp:rotateZ:joint").Get() == 0.0
    fully_open = load_catalog().furniture["fridge"].parts[0].range[1]
    assert opened.GetAttribute("xformOp:rotateZ:joint").Get() == pytest.approx(math.degrees(fully_open), abs=1e-2)
    assert opened.GetAttribute("homeloop:state").Get() == pytest.approx(fully_open)


def test_exported_homes_and_assets_validate(build):
    _, assets, results = build
    for result in results.values():
        assert result.errors == [] and result.valid
        assert validate_stage(result.path) == []
    for path in assets.values():
        assert validate_stage(path) == []


def test_broken_stages_are_caught(build, tmp_path):
    out, _, results = build
    broken = tmp_path / "homes" / "small" / "home.usda"
    broken.parent.mkdir(parents=True)
    layer = Sdf.Layer.FindOrOpen(str(results["small"].path))
    layer.Export(str(broken))
    shutil.copytree(out / "assets", tmp_path / "assets")
    stage = _open(broken)
    ghost = stage.DefinePrim("/Home/Furniture/ghost", "Xform")
    ghost.GetReferences().AddReference("../../assets/no_such_item.usdc")
    nested = UsdGeom.Cube.Define(stage, "/Home/Rooms/room_1/floor/inside")  # a gprim inside a gprim
    assert nested
    # the same below a mesh of a referenced asset: the home's layer authors it there
    assert UsdGeom.Cube.Define(stage, "/Home/Furniture/sofa_1/visual/base/inside")
    joint = UsdPhysics.RevoluteJoint.Define(stage, "/Home/Openings/door_1/bad_joint")
    joint.CreateBody1Rel().SetTargets(["/Home/Nowhere"])
    stage.GetRootLayer().Save()
    report = validate_stage_report(broken)
    text = "\n".join(report.errors)
    assert "no_such_item.usdc" in text  # unresolvable reference
    assert "MissingReferenceValidator" in text and "CompositionErrorTest" in text
    assert "EncapsulationChecker" in text and "/Home/Rooms/room_1/floor/inside" in text
    assert "/Home/Furniture/sofa_1/visual/base/inside" in text
    assert "PhysicsJointChecker" in text
    assert validate_stage(broken) == report.errors
    # every message but those the asset checks add is the whole stage's, checked prim by prim
    stage = _open(broken)
    whole = UsdValidation.ValidationContext(validators_for(stage)).Validate(stage)
    assert report.errors == sorted(_message(e) for e in whole if e.GetType() == UsdValidation.ValidationErrorType.Error)


def test_a_broken_asset_is_reported_by_the_homes_that_reference_it(build, tmp_path):
    """An asset is checked as a stage of its own, once while the assets are held open: its errors
    reach every home referencing it, naming the asset's file."""
    _, assets, _ = build
    folder = tmp_path / "assets"
    shutil.copytree(assets["sofa"].parent, folder)
    copied = {k: folder / v.relative_to(assets["sofa"].parent) for k, v in assets.items()}
    sofa = _open(copied["sofa"])
    mesh = next(p for p in sofa.Traverse() if p.IsA(UsdGeom.Gprim))
    assert UsdGeom.Cube.Define(sofa, mesh.GetPath().AppendChild("inside"))  # a gprim inside a gprim
    sofa.GetRootLayer().Save()
    exported = export_home(small_home(), load_catalog(), tmp_path / "homes" / "h" / "home.usdc", assets=copied)
    named = [e for e in exported.errors if e.endswith(f" in {copied['sofa'].name}")]
    assert not exported.valid and named and all("EncapsulationChecker" in e for e in named), exported.errors
    with assets_held_open(copied.values()):
        held = [validate_stage_report(exported.path) for _ in range(2)]
    assert held[0] == held[1] == validate_stage_report(exported.path)
    assert held[0].errors == exported.errors


def test_every_registered_validator_looks_at_the_stage_or_at_prims():
    """A validator of the stage runs on each home's stage, one of prims on the prims a home authors and
    on its assets: a usd-core that registers a validator this list does not know fails here, until
    it is put on the side its checks are on (homeloop/pipeline/usd/validate.py)."""
    prim_validators = {
        "usdValidation:AttributeTypeMismatch", "usdGeomValidators:SubsetParentIsImageable",
        "usdGeomValidators:SubsetFamilies", "usdGeomValidators:EncapsulationChecker",
        "usdShadeValidators:EncapsulationMaterialValidator", "usdShadeValidators:EncapsulationRulesValidator",
        "usdShadeValidators:MaterialBindingApiAppliedValidator", "usdShadeValidators:MaterialBindingRelationships",
        "usdShadeValidators:MaterialBindingCollectionValidator", "usdShadeValidators:NormalMapTextureValidator",
        "usdShadeValidators:ShaderSdrCompliance", "usdShadeValidators:SubsetMaterialBindFamilyName",
        "usdShadeValidators:SubsetsMaterialBindFamily", "usdLuxValidators:EncapsulationRulesValidator",
        "usdPhysicsValidators:ArticulationChecker", "usdPhysicsValidators:ColliderChecker",
        "usdPhysicsValidators:PhysicsJointChecker", "usdPhysicsValidators:RigidBodyChecker",
        "usdSkelValidators:SkelBindingApiAppliedValidator", "usdSkelValidators:SkelBindingApiValidator",
        "usdMediaValidators:AuthorshipInputsPaired", "usdMediaValidators:ShadowedOrDuplicateAuthorship",
    }
    assert {v.GetMetadata().name for v in validators()} == STAGE_VALIDATORS | prim_validators


def test_export_is_byte_stable(build, tmp_path):
    out, assets, results = build
    cat = load_catalog()
    for usda in (False, True):
        a = export_home(small_home(), cat, tmp_path / "a" / "home", assets=assets, usda=usda, validate=False)
        b = export_home(small_home(), cat, tmp_path / "b" / "home", assets=assets, usda=usda, validate=False)
        assert a.path.suffix == (".usda" if usda else ".usdc")
        assert a.path.read_bytes() == b.path.read_bytes()
    first = results["small"].path.read_bytes()
    again = export_home(small_home(), cat, results["small"].path, assets=assets, validate=False)
    assert again.path.read_bytes() == first
    before = {k: p.read_bytes() for k, p in assets.items()}
    rewritten = write_catalog_assets(cat, tmp_path / "assets")
    assert {k: p.read_bytes() for k, p in rewritten.items()} == before


def test_usda_has_fixed_layer_metadata(build, tmp_path):
    _, assets, _ = build
    result = export_home(small_home(), load_catalog(), tmp_path / "home.usda", assets=assets, usda=True)
    head = result.path.read_text().split("\n\n")[0]
    assert head == '#usda 1.0\n(\n    defaultPrim = "Home"\n    metersPerUnit = 1\n    upAxis = "Z"\n)'
    assert result.errors == []


def test_missing_asset_is_an_error(build, tmp_path):
    _, assets, _ = build
    from homeloop.pipeline.usd import UsdExportError

    partial = {k: v for k, v in assets.items() if k != "sofa"}
    with pytest.raises(UsdExportError, match="sofa"):
        export_home(small_home(), load_catalog(), tmp_path / "home.usdc", assets=partial)


def test_assets_held_open_change_no_report_and_hide_no_missing_asset(build, tmp_path):
    """Validation with the catalog assets held open (the USD stage's batches) reports what
    a cold validation does, and an asset deleted from disk is still reported missing."""
    _, assets, results = build
    path = results["small"].path
    with assets_held_open(assets.values()):
        assert validate_stage_report(path) == validate_stage_report(path) == ValidationReport()
    folder = tmp_path / "assets"
    shutil.copytree(assets["sofa"].parent, folder)
    copied = {k: folder / v.relative_to(assets["sofa"].parent) for k, v in assets.items()}
    exported = export_home(small_home(), load_catalog(), tmp_path / "homes" / "h" / "home.usdc", assets=copied)
    assert exported.valid
    copied["sofa"].unlink()
    cold = validate_stage_report(exported.path)
    with assets_held_open(copied.values()):
        held = validate_stage_report(exported.path)
    assert held == cold and any("sofa" in e for e in cold.errors), cold


def _names(found) -> set[str]:
    return {v.GetMetadata().name for v in found}


def test_package_validators_run_where_a_stage_has_a_package_and_find_nothing_in_homes(build, tmp_path):
    """The usdz package validators are left out for a home (its layers are .usdc files), and
    they would find nothing there; a stage that references a usdz package gets every validator."""
    from pxr import UsdUtils, UsdValidation

    _, assets, results = build
    home = Usd.Stage.Open(str(results["small"].path))
    package_only = _names(validators()) - _names(validators(packages=False))
    assert "usdUtilsValidators:UsdzPackageValidator" in package_only
    assert _names(validators_for(home)) == _names(validators()) - package_only
    left_out = [v for v in validators() if v.GetMetadata().name in package_only]
    assert list(UsdValidation.ValidationContext(left_out).Validate(home)) == []

    package = tmp_path / "sofa.usdz"
    assert UsdUtils.CreateNewUsdzPackage(Sdf.AssetPath(str(assets["sofa"])), str(package))
    stage = Usd.Stage.Open(str(results["small"].path))
    stage.DefinePrim("/Home/Furniture/packaged_sofa").GetReferences().AddReference(str(package))
    assert _names(validators_for(stage)) == _names(validators())


def test_furnished_house_exports_and_validates(build, tmp_path):
    from homeloop.pipeline.furnish import furnish_house

    _, assets, _ = build
    cat = load_catalog()
    house = furnish_house(cat)
    result = export_home(house, cat, tmp_path / "house" / "home.usdc", assets=assets)
    assert result.errors == []
    counts = semantic_class_counts(_open(result.path))
    assert counts == result.prim_counts
    assert counts.get("camera", 0) == len(house.cameras) and counts.get("wall", 0) > 0
    assert counts.get(house.furniture[0].semantic_class, 0) >= 1


def test_fixtures_are_exported_as_labelled_static_colliders(build, tmp_path):
    from homeloop.core.home import Fixture

    _, assets, _ = build
    home = small_home()
    kitchen = next(r for r in home.rooms if r.type == "KITCHEN")
    counter = Fixture(id="kitchen_12", kind="counter", room=kitchen.id,
                      polygon=rings_from_polygon(box(1.0, 2.4, 3.4, 3.0)), height=0.9)
    home = home.model_copy(update={"fixtures": [counter]})
    result = export_home(home, load_catalog(), tmp_path / "home.usdc", assets=assets)
    assert result.errors == []
    stage = _open(result.path)
    prim = stage.GetPrimAtPath(f"/Home/Fixtures/{counter.id}")
    assert labels_of(prim) == [counter.kind] and labels_of(prim, "room_id") == [counter.room]
    assert prim.GetAttribute("homeloop:kind").Get() == counter.kind
    body = prim.GetChild("body")  # the prism: a guide that collides, as the geometric backend has it
    assert body.HasAPI(UsdPhysics.CollisionAPI) and UsdGeom.Imageable(body).ComputePurpose() == UsdGeom.Tokens.guide
    lo, hi = UsdGeom.Mesh(body).GetExtentAttr().Get()
    assert (lo[2], hi[2]) == pytest.approx((kitchen.floor_height, kitchen.floor_height + counter.height))
    parts = [p for p in Usd.PrimRange(prim.GetChild("visual")) if p.IsA(UsdGeom.Mesh)]
    assert len(parts) > 1  # cabinets, fronts, handles, a worktop: drawn inside the prism
    assert all(UsdGeom.Imageable(p).ComputePurpose() == UsdGeom.Tokens.render for p in parts)
    drawn = UsdGeom.BBoxCache(Usd.TimeCode.Default(), [UsdGeom.Tokens.render]).ComputeWorldBound(prim).ComputeAlignedRange()
    assert drawn.GetMin()[2] >= lo[2] - 1e-6 and drawn.GetMax()[2] <= hi[2] + 1e-6
    assert all(UsdShade.MaterialBindingAPI(p).GetDirectBinding().GetMaterial() for p in parts)
    assert semantic_class_counts(stage)[counter.kind] == 1


# --- homes that load cleanly: readable files, floors, cameras, objects, devices, physics, looks ---------


def test_outputs_are_readable_as_the_umask_allows(build, tmp_path):
    import stat

    import pandas as pd

    from homeloop.core.io import write_json, write_parquet
    from homeloop.pipeline.previews.home import render_home

    _, assets, _ = build
    cat, home = load_catalog(), small_home()
    for umask, mode in ((0o022, 0o644), (0o027, 0o640)):
        out = tmp_path / oct(umask)
        previous = os.umask(umask)
        try:
            files = [export_home(home, cat, out / "home.usdc", assets=assets, validate=False).path,
                     export_home(home, cat, out / "home.usda", assets=assets, usda=True, validate=False).path,
                     *write_catalog_assets(cat, out / "assets").values(),
                     write_json(out / "home.json", {"home": home.home_id}),
                     write_parquet(out / "table.parquet", pd.DataFrame({"home": [home.home_id]})),
                     render_home(home, out / "preview.png")]
        finally:
            os.umask(previous)
        assert {f.suffix for f in files} == {".usdc", ".usda", ".json", ".parquet", ".png"}
        assert {oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == {oct(mode)}
        assert not [p.name for p in out.rglob(".*")]  # no temporary file left behind


@pytest.fixture(scope="module")
def house(build, tmp_path_factory, house_home):
    """The benchmark house exported against the module's assets: (home, its stage's path)."""
    _, assets, _ = build
    out = tmp_path_factory.mktemp("house") / "homes" / "house" / "home.usdc"
    result = export_home(house_home, load_catalog(), out, assets=assets)
    assert result.errors == []
    return house_home, result.path


_FRESH_EXPORT = """
import sys
from pathlib import Path
from homeloop.core.catalog import load_catalog
from homeloop.core.home import Home
from homeloop.pipeline.usd import export_home, write_catalog_assets
out = Path(sys.argv[1])
cat = load_catalog()
home = Home.model_validate_json(Path(sys.argv[2]).read_text())
export_home(home, cat, out / "homes" / home.home_id / "home.usdc",
            assets=write_catalog_assets(cat, out / "assets"), validate=False)
"""


def test_a_long_lived_process_writes_the_bytes_a_fresh_one_does(house, tmp_path):
    """A Dask worker or a served deployment exports homes after other work (other builds'
    homes, stages opened to validate them): its files must be those a fresh process writes."""
    cat = load_catalog()
    assets = write_catalog_assets(cat, tmp_path / "here" / "assets")
    for home in (house[0],):
        here = export_home(home, cat, tmp_path / "here" / "homes" / home.home_id / "home.usdc",
                           assets=assets, validate=True)
        home_json = tmp_path / f"{home.home_id}.json"
        home_json.write_text(home.model_dump_json())
        subprocess.run([sys.executable, "-c", _FRESH_EXPORT, str(tmp_path / "fresh"), str(home_json)],
                       check=True, timeout=300)
        fresh = tmp_path / "fresh" / "homes" / home.home_id / "home.usdc"
        assert fresh.read_bytes() == here.path.read_bytes(), home.home_id


#: Run before the export above: small C allocations of seeded sizes, most freed again, so that
#: pxr's interned names land at other addresses, as in a worker that built homes first.
_FRAGMENTED_HEAP = """
import ctypes, random
rng = random.Random(int(sys.argv[3]))
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
for block in [libc.malloc(rng.randint(16, 160)) for _ in range(300_000)]:
    if rng.random() < 0.6:
        libc.free(block)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the heap is fragmented through glibc")
def test_the_bytes_do_not_depend_on_where_the_heap_put_pxr_names(house, tmp_path):
    """The default build's USD stage runs in Dask workers that built homes before: a spec
    whose fields were ordered by their names' addresses (Sdf.CopySpec does) gave other bytes
    in every build. The same home from processes whose heaps differ gives the same file."""
    home = house[0]
    home_json = tmp_path / f"{home.home_id}.json"
    home_json.write_text(home.model_dump_json())
    files = []
    for seed in (0, 1, 2):
        script = (_FRESH_EXPORT.replace("import sys\n", "import sys\n" + _FRAGMENTED_HEAP, 1) if seed
                  else _FRESH_EXPORT)
        subprocess.run([sys.executable, "-c", script, str(tmp_path / str(seed)), str(home_json), str(seed)],
                       check=True, timeout=300)
        files.append((tmp_path / str(seed) / "homes" / home.home_id / "home.usdc").read_bytes())
    assert files[1] == files[0] and files[2] == files[0]


def _session_edit(path, edit) -> Usd.Stage:
    """The stage at ``path`` with ``edit(stage)`` made in its session layer (the file is untouched)."""
    stage = _open(path)
    stage.SetEditTarget(stage.GetSessionLayer())
    edit(stage)
    return stage


def test_the_floor_runs_on_under_every_door(house):
    from homeloop.pipeline.usd.probes import floor_gaps

    home, path = house
    doors = [o for o in home.openings if o.sill == 0.0]
    assert len(doors) >= 10 and floor_gaps(_open(path), home) == []
    thresholds = [f"/Home/Openings/{o.id}/threshold" for o in doors]
    stage = _open(path)
    for p in thresholds:  # each is a static floor collider labelled floor
        prim = stage.GetPrimAtPath(p)
        assert prim.HasAPI(UsdPhysics.CollisionAPI) and labels_of(prim) == ["floor"], p
    # Without them, the rays cast down through each door find the slot the walls leave.
    cut = _session_edit(path, lambda s: [s.GetPrimAtPath(p).SetActive(False) for p in thresholds])
    assert floor_gaps(cut, home) == [o.id for o in doors]


def test_every_camera_sees_out_of_its_housing(house):
    from homeloop.pipeline.usd.probes import cameras_in_solids, near_plane_points

    home, path = house
    stage = _open(path)
    cameras = [p for p in stage.Traverse() if p.IsA(UsdGeom.Camera)]
    assert len(cameras) == len(home.cameras) and cameras_in_solids(stage) == {}
    for cam in home.cameras:  # the camera prim is the lens, just under the dome's housing
        housing = stage.GetPrimAtPath(f"/Home/Devices/{cam.id}/{DEVICE_BODY}")
        if not housing:  # a doorbell camera: no housing of its own
            continue
        bottom = min(p[2] for p in _world_points(housing))
        assert bottom == pytest.approx(cam.pose.z + CAMERA_LENS_CLEARANCE, abs=1e-4)
        # The dome a renderer draws lies inside the housing, so above the lens too.
        dome = stage.GetPrimAtPath(f"/Home/Devices/{cam.id}/{device_visual_name('dome_camera')}")
        assert min(p[2] for p in _world_points(dome)) >= bottom - 1e-4
        assert near_plane_points(stage.GetPrimAtPath(f"/Home/Cameras/{cam.id}"))[:, 2].max() < bottom
    # A camera raised into its housing is caught.
    cam = next(c for c in home.cameras if stage.GetPrimAtPath(f"/Home/Devices/{c.id}"))
    raised = _session_edit(path, lambda s: s.GetPrimAtPath(f"/Home/Cameras/{cam.id}").GetAttribute(
        "xformOp:translate").Set(Gf.Vec3d(cam.pose.x, cam.pose.y, cam.pose.z + 0.05)))
    device = f"/Home/Devices/{cam.id}"  # inside the housing's box and the dome drawn in it
    assert cameras_in_solids(raised) == {f"/Home/Cameras/{cam.id}": [
        f"{device}/{DEVICE_BODY}", f"{device}/{device_visual_name('dome_camera')}"]}


def test_objects_rest_on_shelves_and_in_cavities_clear_of_furniture(house):
    from homeloop.core.check import check_home
    from homeloop.pipeline.usd.probes import objects_in_furniture

    home, path = house
    stage = _open(path)
    assert objects_in_furniture(stage) == []
    assert not [f for f in check_home(home, load_catalog()) if f.rule == "object_inside_furniture"]
    book = home.object("book_1")
    shelf = home.furniture_item(book.location.furniture).surface(book.location.name)
    assert book.pose.z == pytest.approx(shelf.height)  # on the board, not in it
    # A vertical ray under the book meets the shelf board's top right at the book's base.
    shelving = home.furniture_item(book.location.furniture)
    collider = f"/Home/Furniture/{shelving.id}/{shelving.catalog_id}"  # the solid, guide purpose
    body = UsdGeom.Mesh(stage.GetPrimAtPath(collider))
    assert body and round(book.pose.z, 3) in {round(p[2], 3) for p in _world_points(body.GetPrim())}
    sunk = _session_edit(path, lambda s: s.GetPrimAtPath("/Home/Objects/book_1").GetAttribute(
        "xformOp:translate").Set(Gf.Vec3d(book.pose.x, book.pose.y, book.pose.z - 0.01)))
    assert objects_in_furniture(sunk) == [("/Home/Objects/book_1", collider)]
    garments = [o for o in home.objects if o.location.kind == "container"]
    assert garments and all(o.location.name == "drum" for o in garments)


def test_device_bodies_rest_on_their_mounts(house):
    home, path = house
    stage = _open(path)
    rooms = home.room_polygons()
    for d in home.devices:
        prim = stage.GetPrimAtPath(f"/Home/Devices/{d.id}")
        if d.mount in ("built_in", "worn"):  # its appliance (its wearer) is its body
            assert prim.GetTypeName() == "Xform" and not prim.GetChildren()
            continue
        pts = np.array(_world_points(prim.GetChild(DEVICE_BODY)))
        visual = np.array(_world_points(prim.GetChild(device_visual_name(d.type))))
        # Its visual lies in its body (the renderer fills the body's box with it).
        assert (visual.min(axis=0) >= pts.min(axis=0) - 1e-4).all(), d.id
        assert (visual.max(axis=0) <= pts.max(axis=0) + 1e-4).all(), d.id
        room = home.room(d.room) if d.room else None
        if d.mount == "ceiling":
            assert pts[:, 2].max() == pytest.approx(room.floor_height + room.ceiling_height, abs=1e-4), d.id
        elif d.mount in ("floor", "on_furniture"):
            assert pts[:, 2].min() == pytest.approx(d.pose.z, abs=1e-4), d.id
        elif d.mount in ("wall", "at_door", "on_window", "on_opening"):
            # Its back lies on the wall face (the room's edge), the rest stands out of it.
            back = min(rooms[d.room].exterior.distance(shapely.Point(p[:2])) for p in pts)
            assert back == pytest.approx(0.0, abs=2e-3), d.id


def test_one_light_per_ceiling_fitting_lit_as_the_home_says(house, build, tmp_path):
    from homeloop.pipeline.usd import LIGHT_RADIUS, light_intensity
    from homeloop.sim.dynamics.light import LUMENS_BY_MOUNT

    home, path = house
    stage = _open(path)
    fittings = [d for d in home.devices if d.type == "light" and d.mount == "ceiling"]
    lights = {p.GetAttribute("homeloop:device").Get(): p for p in stage.GetPrimAtPath("/Home/Lights").GetChildren()}
    assert sorted(lights) == sorted(d.id for d in fittings)
    assert all(p.IsA(UsdLux.SphereLight) for p in lights.values())
    for d in fittings:
        light = lights[d.id]
        assert UsdLux.SphereLight(light).GetIntensityAttr().Get() == 0.0  # every light off, as built
        at = UsdGeom.Xformable(light).ComputeLocalToWorldTransform(Usd.TimeCode.Default()).ExtractTranslation()
        body = min(p[2] for p in _world_points(stage.GetPrimAtPath(f"/Home/Devices/{d.id}/{DEVICE_BODY}")))
        assert at[2] + LIGHT_RADIUS < body and home.room_at(at[0], at[1]) == d.room
    # The kitchen's switch turned on lights its fitting at the simulator's ceiling flux.
    kitchen = next(d for d in fittings if home.room(d.room).type == "KITCHEN")
    switch = next(s for s in home.devices_of_type("light_switch") if kitchen.id in s.controls)
    devices = [s.model_copy(update={"fields": {**s.fields, "on": s.fields["on"].model_copy(update={"value": True})}})
               if s.id == switch.id else s for s in home.devices]
    lit = home.model_copy(update={"devices": devices})
    result = export_home(lit, load_catalog(), tmp_path / "lit" / "home.usdc", assets=build[1])
    lit_stage = _open(result.path)
    on = UsdLux.SphereLight(lit_stage.GetPrimAtPath(f"/Home/Lights/{kitchen.id}"))
    brightness = kitchen.value("brightness") / 100
    flux = on.GetIntensityAttr().Get() * 4 * math.pi ** 2 * LIGHT_RADIUS ** 2  # L = flux / (4 pi^2 r^2)
    assert flux == pytest.approx(LUMENS_BY_MOUNT["ceiling"] * brightness, rel=1e-3)
    assert light_intensity(kitchen, True) == pytest.approx(on.GetIntensityAttr().Get())


def test_physics_scene_and_only_moving_bodies_have_mass(house):
    home, path = house
    stage = _open(path)
    (scene,) = [p for p in stage.Traverse() if p.IsA(UsdPhysics.Scene)]
    scene = UsdPhysics.Scene(scene)
    assert tuple(scene.GetGravityDirectionAttr().Get()) == (0.0, 0.0, -1.0)
    assert scene.GetGravityMagnitudeAttr().Get() == pytest.approx(9.81)
    massive = [p for p in stage.Traverse() if p.HasAPI(UsdPhysics.MassAPI)]
    assert massive and all(p.HasAPI(UsdPhysics.RigidBodyAPI) for p in massive)
    for f in home.furniture:  # static furniture; its parts move on joints
        prim = stage.GetPrimAtPath(f"/Home/Furniture/{f.id}")
        assert not prim.HasAPI(UsdPhysics.RigidBodyAPI) and not prim.HasAPI(UsdPhysics.MassAPI), f.id
        for part in f.parts:
            assert prim.GetChild(part.name).HasAPI(UsdPhysics.RigidBodyAPI), (f.id, part.name)
    for obj in home.objects:
        assert stage.GetPrimAtPath(f"/Home/Objects/{obj.id}").HasAPI(UsdPhysics.RigidBodyAPI)


def _drawn_materials(stage: Usd.Stage, root: Usd.Prim) -> tuple[list[str], set[tuple[float, ...]]]:
    """Below ``root``: the meshes a renderer draws (not guides) with a face left without a
    UsdPreviewSurface material (their own, or their material subsets'), and the diffuse colours
    of the materials bound."""
    unbound, colours = [], set()
    for prim in Usd.PrimRange(root):
        if not prim.IsA(UsdGeom.Mesh) or UsdGeom.Imageable(prim).ComputePurpose() == UsdGeom.Tokens.guide:
            continue
        subsets = UsdShade.MaterialBindingAPI(prim).GetMaterialBindSubsets()
        for target in subsets or [prim]:
            material, _ = UsdShade.MaterialBindingAPI(target.GetPrim()).ComputeBoundMaterial()
            shader = material.ComputeSurfaceSource()[0] if material else None
            if not shader or shader.GetIdAttr().Get() != "UsdPreviewSurface":
                unbound.append(str(target.GetPath()))
                continue
            colours.add(tuple(round(c, 5) for c in shader.GetInput("diffuseColor").Get()))
    return unbound, colours


def test_every_drawn_surface_has_a_material_of_its_palette(house):
    """Every mesh a renderer draws has a UsdPreviewSurface (guides, the colliders, are not drawn);
    furniture, objects and devices show the catalog materials the CPU renderer picks for the home."""
    from homeloop.core.visuals import device_visual, furniture_visual, material_of, object_visual, variant_of
    from homeloop.pipeline.usd import body_placement

    home, path = house
    stage = _open(path)
    unbound, _ = _drawn_materials(stage, stage.GetPseudoRoot())
    assert unbound == []
    cat = load_catalog()

    def albedos(cls: str, parts, item_id: str) -> set[tuple[float, ...]]:
        v = variant_of(home.home_id, item_id)
        return {tuple(round(c, 5) for c in material_of(cat, cls, p.role, v).albedo) for p in parts}

    for f in home.furniture:
        entry = cat.furniture[f.catalog_id]
        drawn = _drawn_materials(stage, stage.GetPrimAtPath(f"/Home/Furniture/{f.id}"))[1]
        assert drawn == albedos(entry.semantic_class, furniture_visual(entry), f.id), f.id
    from homeloop.sim.render.materials import COLOUR_WORDS

    for obj in home.objects:  # a tinted part takes the object's colour word where it has one
        entry = cat.objects[obj.catalog_id]
        word = (obj.colour or entry.colour or "").strip().lower()
        tinted = [p for p in object_visual(entry) if p.role == "tinted" and word in COLOUR_WORDS]
        want = albedos(entry.semantic_class, [p for p in object_visual(entry) if p not in tinted], obj.id)
        want |= {tuple(round(c, 5) for c in COLOUR_WORDS[word])} if tinted else set()
        drawn = _drawn_materials(stage, stage.GetPrimAtPath(f"/Home/Objects/{obj.id}"))[1]
        assert drawn == want, obj.id
    from homeloop.core.geometry_assets import device_body
    for d in home.devices:
        body = device_body(home, d)
        if body is None:
            continue
        size, _ = body_placement(body)
        drawn = _drawn_materials(stage, stage.GetPrimAtPath(f"/Home/Devices/{d.id}"))[1]
        assert drawn == albedos(d.type, device_visual(d.type, size, d.mount), d.id), d.id


def _drawn_children(prim: Usd.Prim) -> list[Usd.Prim]:
    """The children an importer that leaves guides out (Blender) reads: imageable, not guides."""
    return [c for c in prim.GetChildren() if c.IsA(UsdGeom.Imageable)
            and UsdGeom.Imageable(c).ComputePurpose() != UsdGeom.Tokens.guide]


def test_names_survive_importers_that_merge_single_children(house):
    """Blender merges an Xform whose one drawn child is a mesh without a transform into one object
    named after the child. A piece of furniture is an Xform of its id whose drawn children are no
    meshes (its visual is an Xform: the item keeps its name); its solid, named after the catalog
    entry, is a guide.
    A device's one drawn child is its visual mesh, so a dome camera's device never takes the id
    its camera has."""
    home, path = house
    stage = _open(path)
    for f in home.furniture:
        prim = stage.GetPrimAtPath(f"/Home/Furniture/{f.id}")
        assert prim.IsA(UsdGeom.Xform) and prim.GetChild(f.catalog_id).IsA(UsdGeom.Mesh), f.id
        assert UsdGeom.Imageable(prim.GetChild(f.catalog_id)).ComputePurpose() == UsdGeom.Tokens.guide
        drawn = _drawn_children(prim)
        assert prim.GetChild("visual").IsA(UsdGeom.Xform) and prim.GetChild("visual") in drawn, f.id
        assert not [c for c in drawn if c.IsA(UsdGeom.Gprim)], f.id
    for cam in home.cameras:
        device = stage.GetPrimAtPath(f"/Home/Devices/{cam.id}")
        if not device or not device.GetChildren():
            continue
        (visual,) = _drawn_children(device)
        assert visual.IsA(UsdGeom.Mesh) and not UsdGeom.Xformable(visual).GetOrderedXformOps(), cam.id
        assert visual.GetName() != cam.id


@pytest.mark.slow
def test_a_built_home_set_loads_cleanly(tmp_path_factory):
    """Every home of the small reference build: readable files, floor under every door, cameras
    outside every mesh, no object in furniture, no validation error."""
    import stat
    from pathlib import Path

    import pandas as pd

    from build_fixtures import reference_build
    from homeloop.pipeline.usd.probes import cameras_in_solids, floor_gaps, objects_in_furniture, world_meshes

    out = Path(reference_build(tmp_path_factory)["out"])
    umask = os.umask(0o022)
    os.umask(umask)
    modes = {oct(stat.S_IMODE(p.stat().st_mode)) for p in out.rglob("*") if p.is_file()}
    assert modes == {oct(0o666 & ~umask)} and list(out.rglob("*.usdc"))  # as open() makes them
    table = pd.read_parquet(out / "usd.parquet")
    assert table["valid"].all() and (table["errors"] == "").all()
    doors = 0
    for file in table["file"]:
        stage = _open(out / file)
        home = Home.read((out / file).with_name("home.json"))
        meshes = world_meshes(stage)
        doors += sum(1 for o in home.openings if o.sill == 0.0)
        assert floor_gaps(stage, home, meshes) == [], file
        assert cameras_in_solids(stage, meshes) == {}, file
        assert objects_in_furniture(stage, meshes) == [], file
    assert doors > len(table)


# --- the geometry the meshes carry ---------------------------------------------------------------


@st.composite
def footprints(draw) -> Polygon:
    """A star-shaped polygon around a random centre (5-12 corners, each 1-3 m out, no two
    more than 0.6 pi apart, so every edge stays 0.58 m clear of the centre), sometimes with a
    square hole at the centre (corners 0.5 m out)."""
    n = draw(st.integers(5, 12))
    jitter = draw(st.lists(st.floats(-0.25, 0.25), min_size=n, max_size=n))
    radii = draw(st.lists(st.floats(1.0, 3.0), min_size=n, max_size=n))
    cx, cy = draw(st.floats(-50, 50)), draw(st.floats(-50, 50))
    angles = [2 * math.pi * (i + j) / n for i, j in enumerate(jitter)]
    ring = [(cx + r * math.cos(a), cy + r * math.sin(a)) for a, r in zip(angles, radii)]
    holes = [[(cx + x, cy + y) for x, y in ((-0.35, -0.35), (0.35, -0.35), (0.35, 0.35), (-0.35, 0.35))]]
    holes = holes if draw(st.booleans()) else []
    if draw(st.booleans()):  # either winding
        ring, holes = ring[::-1], [h[::-1] for h in holes]
    return Polygon(ring, holes)


def _faces(data: MeshData) -> list[np.ndarray]:
    starts = np.concatenate([[0], np.cumsum(data.counts)[:-1]])
    return [data.points[data.indices[s:s + n]] for s, n in zip(starts, data.counts)]


def _signed_volume(data: MeshData) -> float:
    """The volume a closed mesh bounds, positive when its faces point out (divergence theorem)."""
    return sum(float(np.dot(f[0], np.cross(f[i], f[i + 1]))) for f in _faces(data) for i in range(1, len(f) - 1)) / 6


@given(footprints(), st.floats(-1.0, 3.0), st.floats(0.05, 3.0))
def test_prisms_are_closed_solids_facing_out(poly, z0, height):
    data = prism(poly, z0, z0 + height)
    assert set(data.counts.tolist()) <= {3, 4} and len(data.indices) == data.counts.sum()
    # Closed and consistently wound: every edge, between the same two corners, is walked once each way.
    edges: dict[tuple, int] = {}
    for face in _faces(data):
        corners = [tuple(np.round(p, 9)) for p in face]
        for a, b in zip(corners, corners[1:] + corners[:1]):
            edges[(a, b)] = edges.get((a, b), 0) + 1
    assert all(edges.get((b, a)) == n == 1 for (a, b), n in edges.items())
    assert _signed_volume(data) == pytest.approx(poly.area * height, rel=1e-9)
    assert data.points[:, 2].min() == z0 and data.points[:, 2].max() == z0 + height


def _cross2(u: np.ndarray, v: np.ndarray) -> float:
    return float(u[0] * v[1] - u[1] * v[0])


@given(footprints(), st.floats(-1.0, 3.0))
def test_caps_cover_the_polygon_facing_up_or_down(poly, z):
    tri = Triangulation.of(poly)
    for up, sign in ((True, 1.0), (False, -1.0)):
        cap = tri.cap(z, up)
        assert set(cap.counts.tolist()) == {3} and set(cap.points[:, 2].tolist()) == {z}
        areas = [sign * _cross2(f[1] - f[0], f[2] - f[0]) / 2 for f in _faces(cap)]
        assert min(areas) >= 0.0  # every triangle faces the same way
        assert sum(areas) == pytest.approx(poly.area, rel=1e-9)

