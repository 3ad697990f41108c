"""USD visuals: the catalog assets' visual meshes (render purpose) beside their solids (guide
purpose, the colliders), their catalog materials and variant sets, jointed parts under their
hinges, a home's per-item material choices, the devices' looks, and byte-stable files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdShade, Vt

from homeloop.core.catalog import load_catalog
from homeloop.core.home import Home
from homeloop.core.geometry_assets import (DEVICE_BODIES_BY_TYPE, Box, device_body, device_body_size, mesh_for,
                                           part_transform)
from homeloop.core.visuals import device_visual, furniture_visual, material_of, object_visual, variant_of
from homeloop.pipeline.usd import (
    COLOUR_VARIANT,
    DEVICE_ASSETS,
    DEVICE_BODY,
    DEVICE_VISUALS,
    TINTED,
    VISUAL,
    body_placement,
    device_asset_key,
    device_visual_name,
    export_home,
    furniture_body_name,
    labels_of,
    role_choice,
    role_options,
    variant_roles,
    write_catalog_assets,
)
from homeloop.pipeline.usd.author import Names, valid_name
from homeloop.pipeline.usd.device_types import LOOK_SUFFIX
from homeloop.pipeline.usd.probes import things_without_visuals
from homeloop.sim.render.materials import COLOUR_WORDS

CATALOG = load_catalog()
FURNITURE = sorted(CATALOG.furniture)
OBJECTS = sorted(CATALOG.objects)
#: Points are written rounded to 10 µm, as float32.
POINT_TOLERANCE = 2e-5


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    return write_catalog_assets(CATALOG, tmp_path_factory.mktemp("build") / "assets")


@pytest.fixture(scope="module")
def house(assets, house_home):
    """The benchmark house exported against the module's assets: (home, its stage's path)."""
    path = next(iter(assets.values())).parent.parent / "homes" / "house" / "home.usdc"
    result = export_home(house_home, CATALOG, path, assets=assets)
    assert result.errors == [], result.errors
    return house_home, result.path


#: Stages opened by the tests, kept open while their prims are read.
_OPEN: list[Usd.Stage] = []


def _root(path) -> Usd.Prim:
    """The default prim of a fresh stage of ``path``, edits going to its session layer (the
    file's layer, shared by every stage of it, stays as written)."""
    stage = Usd.Stage.Open(str(path), Usd.Stage.LoadAll)
    assert stage is not None
    stage.SetEditTarget(stage.GetSessionLayer())
    _OPEN[:] = [*_OPEN[-8:], stage]
    return stage.GetDefaultPrim()


def _purpose(prim: Usd.Prim) -> str:
    return str(UsdGeom.Imageable(prim).ComputePurpose())


def _meshes(root: Usd.Prim, purpose: str) -> list[Usd.Prim]:
    return [p for p in Usd.PrimRange(root) if p.IsA(UsdGeom.Mesh) and _purpose(p) == purpose]


def _diffuse(prim: Usd.Prim) -> tuple[float, ...]:
    material, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial()
    assert material, prim.GetPath()
    shader = material.ComputeSurfaceSource()[0]
    assert shader.GetIdAttr().Get() == "UsdPreviewSurface"
    return tuple(shader.GetInput("diffuseColor").Get())


def _hinges(entry) -> dict[str, str]:
    """The name of each catalog joint's hinge Xform below the asset's root (after the solid's,
    ``visual`` and ``Looks``)."""
    names = Names()
    names(entry.id, "body")
    names(VISUAL, "part")
    names("Looks", "part")
    return {p.name: names(p.name, "part") for p in getattr(entry, "parts", [])}


def _expected_parts(entry, parts) -> dict[str, list[tuple[str, object]]]:
    """The group (below the asset's root) and prim name of each visual part, as the export names
    them: the parts that move with a catalog joint in the hinge's visual, the others in the root's."""
    joints = {p.name: p for p in getattr(entry, "parts", [])}
    hinge = _hinges(entry)
    groups: dict[str, list[tuple[str, object]]] = {}
    names: dict[str, Names] = {}
    for p in parts:
        where = f"{hinge[p.joint]}/{VISUAL}" if p.joint in joints else VISUAL
        groups.setdefault(where, []).append((names.setdefault(where, Names())(p.name, "part"), p))
    return groups


# --- the assets ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("catalog_id", FURNITURE + OBJECTS)
def test_every_asset_has_its_visual_drawn_and_its_solid_as_a_guide_collider(assets, catalog_id):
    furniture = catalog_id in CATALOG.furniture
    entry = CATALOG.furniture[catalog_id] if furniture else CATALOG.objects[catalog_id]
    root = _root(assets[catalog_id])
    drawn, guides = _meshes(root, UsdGeom.Tokens.render), _meshes(root, UsdGeom.Tokens.guide)
    assert drawn and guides
    assert not _meshes(root, UsdGeom.Tokens.default_)  # every mesh says what it is for
    # The colliders are the guides, and only they: a renderer draws no collider, physics meets no visual.
    assert all(p.HasAPI(UsdPhysics.CollisionAPI) for p in guides)
    assert not [p for p in drawn if p.HasAPI(UsdPhysics.CollisionAPI)]
    solid = root.GetChild(furniture_body_name(entry) if furniture else "geom")
    assert solid in guides
    approximation = UsdPhysics.MeshCollisionAPI(solid).GetApproximationAttr().Get()
    assert approximation == ("none" if furniture else "convexHull")  # static exact solid; object hull
    mesh = mesh_for(entry)
    points = np.asarray(UsdGeom.Mesh(solid).GetPointsAttr().Get())
    assert np.allclose(points, np.asarray(mesh.vertices), atol=POINT_TOLERANCE)
    # Furniture is static; an object a rigid body.
    assert root.HasAPI(UsdPhysics.RigidBodyAPI) is (not furniture)


@pytest.mark.parametrize("catalog_id", FURNITURE + OBJECTS)
def test_each_visual_part_is_its_builders_mesh_in_its_catalog_material(assets, catalog_id):
    """Every visual part of the entry's builder is one drawn mesh, in its frame below its group,
    bound to its role's catalog material (the asset's own choice: the palette's first)."""
    entry = CATALOG.furniture.get(catalog_id) or CATALOG.objects[catalog_id]
    parts = furniture_visual(entry) if catalog_id in CATALOG.furniture else object_visual(entry)
    root = _root(assets[catalog_id])
    expected = _expected_parts(entry, parts)
    joints = {p.name: p for p in getattr(entry, "parts", [])}
    panels = len(set(joints) - {p.joint for p in parts})  # a joint the visual draws none of shows its panel
    assert sum(len(v) for v in expected.values()) + panels == len(_meshes(root, UsdGeom.Tokens.render))
    for where, named in expected.items():
        for name, part in named:
            prim = root.GetPrimAtPath(f"{where}/{name}")
            assert prim.IsA(UsdGeom.Mesh) and _purpose(prim) == UsdGeom.Tokens.render, (where, name)
            closed = np.eye(4) if part.joint not in joints else np.linalg.inv(
                part_transform(joints[part.joint], joints[part.joint].range[0]))
            want = np.asarray(part.mesh.vertices) @ closed[:3, :3].T + closed[:3, 3]
            got = np.asarray(UsdGeom.Mesh(prim).GetPointsAttr().Get())
            assert np.allclose(got, want, atol=POINT_TOLERANCE), (where, name)
            colour = entry.colour if part.role == TINTED else None
            choice = role_choice(CATALOG, entry.semantic_class, part.role, 0, colour)
            option = next(o for o in role_options(CATALOG, entry.semantic_class, part.role) if o.name == choice)
            assert _diffuse(prim) == pytest.approx(option.albedo, abs=1e-6), (where, name)


@pytest.mark.parametrize("catalog_id", FURNITURE + OBJECTS)
def test_each_role_with_a_choice_is_a_variant_set_of_its_palettes_materials(assets, catalog_id):
    entry = CATALOG.furniture.get(catalog_id) or CATALOG.objects[catalog_id]
    parts = furniture_visual(entry) if catalog_id in CATALOG.furniture else object_visual(entry)
    root = _root(assets[catalog_id])
    roles = variant_roles(CATALOG, entry)
    assert sorted(root.GetVariantSets().GetNames()) == list(roles)
    by_role: dict[str, list[str]] = {}
    for where, named in _expected_parts(entry, parts).items():
        for name, part in named:
            by_role.setdefault(part.role, []).append(f"{where}/{name}")
    for role in roles:
        options = role_options(CATALOG, entry.semantic_class, role)
        vset = root.GetVariantSets().GetVariantSet(role)
        assert sorted(vset.GetVariantNames()) == sorted(o.name for o in options)
        for option in options:  # each variant binds every part of the role to its material
            vset.SetVariantSelection(option.name)
            for path in by_role[role]:
                assert _diffuse(root.GetPrimAtPath(path)) == pytest.approx(option.albedo, abs=1e-6), (role, path)
    # The options are the palette's: every pick material_of makes is one of them.
    for role in {p.role for p in parts}:
        names = {o.name for o in role_options(CATALOG, entry.semantic_class, role)}
        assert {valid_name(material_of(CATALOG, entry.semantic_class, role, v).id, "material")
                for v in range(24)} <= names


@pytest.mark.parametrize("catalog_id", [f for f in FURNITURE if CATALOG.furniture[f].parts])
def test_jointed_parts_open_with_their_visual(assets, catalog_id):
    """The visual parts of a jointed part lie below its hinge Xform (a rigid body with its guide
    panel): setting the joint op to the open state moves them as the CPU renderer moves them,
    ``T(open) T(closed)^-1`` applied to the part drawn closed in the item frame."""
    entry = CATALOG.furniture[catalog_id]
    root = _root(assets[catalog_id])
    groups = _expected_parts(entry, furniture_visual(entry))
    for joint in entry.parts:
        hinge = root.GetChild(_hinges(entry)[joint.name])
        assert hinge.HasAPI(UsdPhysics.RigidBodyAPI) and hinge.GetChild("panel").HasAPI(UsdPhysics.CollisionAPI)
        assert _purpose(hinge.GetChild("panel")) == UsdGeom.Tokens.guide
        drawn = _meshes(hinge.GetChild(VISUAL), UsdGeom.Tokens.render)
        moving = groups.get(f"{hinge.GetName()}/{VISUAL}", [])
        assert len(drawn) == max(len(moving), 1), joint.name  # its parts, or its panel where none moves
        opened = joint.range[1]
        (op,) = [o for o in UsdGeom.Xformable(hinge).GetOrderedXformOps() if o.GetOpName().endswith(":joint")]
        op.Set(math.degrees(opened) if joint.kind == "revolute"
               else Gf.Vec3d(*(opened * (axis == joint.axis) for axis in "xyz")))
        cache = UsdGeom.XformCache()
        want = part_transform(joint, opened) @ np.linalg.inv(part_transform(joint, joint.range[0]))
        for name, part in moving:
            prim = hinge.GetChild(VISUAL).GetChild(name)
            m = np.array(cache.GetLocalToWorldTransform(prim)).T  # column vectors: p' = M p
            local = np.asarray(UsdGeom.Mesh(prim).GetPointsAttr().Get(), dtype=float)
            expect = np.asarray(part.mesh.vertices) @ want[:3, :3].T + want[:3, 3]
            assert np.allclose(local @ m[:3, :3].T + m[:3, 3], expect, atol=1e-4), (joint.name, name)


def test_assets_and_homes_are_byte_stable(assets, house, tmp_path):
    again = write_catalog_assets(CATALOG, tmp_path / "assets")
    assert {k: p.read_bytes() for k, p in again.items()} == {k: p.read_bytes() for k, p in assets.items()}
    home, path = house
    for usda in (False, True):
        a = export_home(home, CATALOG, tmp_path / "a" / "home", assets=assets, usda=usda, validate=False)
        b = export_home(home, CATALOG, tmp_path / "b" / "home", assets=assets, usda=usda, validate=False)
        assert a.path.read_bytes() == b.path.read_bytes()
    first = path.read_bytes()  # written once more where it lies: its references stay the same
    assert export_home(home, CATALOG, path, assets=assets, validate=False).path.read_bytes() == first


# --- a home's choices -------------------------------------------------------------------------------------


def test_home_items_resolve_their_assets_and_take_the_homes_materials(house):
    home, path = house
    stage = Usd.Stage.Open(str(path))
    for group, items, catalog in (("Furniture", home.furniture, CATALOG.furniture),
                                  ("Objects", home.objects, CATALOG.objects)):
        for item in items:
            prim = stage.GetPrimAtPath(f"/Home/{group}/{item.id}")
            entry = catalog[item.catalog_id]
            assert prim.GetAttribute("homeloop:catalog_id").Get() == entry.id  # the reference composed
            assert _meshes(prim, UsdGeom.Tokens.render) and _meshes(prim, UsdGeom.Tokens.guide)
            colour = getattr(item, "colour", None) or getattr(entry, "colour", None)
            variant = variant_of(home.home_id, item.id)
            for role in variant_roles(CATALOG, entry):
                want = role_choice(CATALOG, entry.semantic_class, role, variant, colour)
                assert prim.GetVariantSet(role).GetVariantSelection() == want, (item.id, role)
            parts = furniture_visual(entry) if group == "Furniture" else object_visual(entry)
            for where, named in _expected_parts(entry, parts).items():
                for name, part in named:
                    word = (colour or "").strip().lower()
                    want_rgb = (COLOUR_WORDS[word] if part.role == TINTED and word in COLOUR_WORDS
                                else material_of(CATALOG, entry.semantic_class, part.role, variant).albedo)
                    got = _diffuse(prim.GetPrimAtPath(f"{where}/{name}"))
                    assert got == pytest.approx(want_rgb, abs=1e-6), (item.id, where, name)


def test_homes_vary_materials_without_copying_meshes(assets, house, tmp_path):
    """Two homes of other ids pick other materials for the same items by variant selection only:
    their files hold no mesh of any item."""
    home, _ = house
    selections = set()
    for k in range(6):
        other = home.model_copy(update={"home_id": f"home_{k}"})
        result = export_home(other, CATALOG, tmp_path / other.home_id / "home.usdc", assets=assets, validate=False)
        layer = Sdf.Layer.FindOrOpen(str(result.path))
        for group in ("Furniture", "Objects"):
            for spec in layer.GetPrimAtPath(f"/Home/{group}").nameChildren:
                assert not [p for p in _spec_tree(spec) if "points" in p.attributes], spec.path
        sofa = next(f for f in other.furniture if f.semantic_class == "sofa")
        selections.add(tuple(sorted(layer.GetPrimAtPath(f"/Home/Furniture/{sofa.id}").variantSelections.items())))
    assert len(selections) > 1


def _spec_tree(spec: Sdf.PrimSpec) -> list[Sdf.PrimSpec]:
    return [spec, *(s for child in spec.nameChildren for s in _spec_tree(child))]


def test_a_tinted_object_takes_its_colour_word(assets, house, tmp_path):
    home, _ = house
    pills = [o for o in home.objects if TINTED in {p.role for p in object_visual(CATALOG.objects[o.catalog_id])}]
    assert pills
    stage = _root(house[1]).GetStage()
    for obj in pills:
        word = (obj.colour or "").strip().lower()
        assert word in COLOUR_WORDS
        prim = stage.GetPrimAtPath(f"/Home/Objects/{obj.id}")
        assert prim.GetVariantSet(TINTED).GetVariantSelection() == f"{COLOUR_VARIANT}{word}"
    # The same object in another colour changes only the selection.
    obj = pills[0]
    other = next(w for w in ("green", "yellow", "purple") if w != obj.colour)
    recoloured = home.model_copy(update={"objects": [o.model_copy(update={"colour": other}) if o.id == obj.id else o
                                                     for o in home.objects]})
    result = export_home(recoloured, CATALOG, tmp_path / "home.usdc", assets=assets, validate=False)
    prim = _root(result.path).GetStage().GetPrimAtPath(f"/Home/Objects/{obj.id}")
    tinted = [p for p in _meshes(prim, UsdGeom.Tokens.render)
              if _diffuse(p) == pytest.approx(COLOUR_WORDS[other], abs=1e-6)]
    assert tinted


# --- devices ---------------------------------------------------------------------------------------------


def test_devices_reference_their_looks_visual_drawn_body_a_guide(house, assets):
    """A device references its type asset (its facts) and its look: the type asset's, or a
    prototype of the home's (the type's look moved to the body, or a look of its own); its
    prim holds no mesh, and composes its body (guide) and visual (render) in the materials the
    CPU renderer picks."""
    home, path = house
    stage = Usd.Stage.Open(str(path))
    layer = Sdf.Layer.FindOrOpen(str(path))
    looks = layer.GetPrimAtPath(f"/Home/{DEVICE_VISUALS}")
    assert looks.specifier == Sdf.SpecifierClass  # neither drawn nor traversed itself
    with_body = [d for d in home.devices if device_body(home, d) is not None]
    assert 0 < len(looks.nameChildren) < len(with_body)  # shared between devices
    from_assets = 0
    for d in home.devices:
        prim = stage.GetPrimAtPath(f"/Home/Devices/{d.id}")
        spec = layer.GetPrimAtPath(f"/Home/Devices/{d.id}")
        refs = list(spec.referenceList.GetAddedOrExplicitItems())
        type_asset = f"../../assets/{DEVICE_ASSETS}/{d.type}.usdc"
        assert refs[0].assetPath == type_asset and refs[0].primPath.isEmpty, d.id  # the type's facts
        assert not spec.nameChildren  # no copy of a mesh
        body = device_body(home, d)
        if body is None:
            assert len(refs) == 1 and not prim.GetChildren()
            continue
        (look,) = refs[1:]
        if look.assetPath:  # the type's look, straight
            assert look.assetPath == type_asset and look.primPath == Sdf.Path(f"/{d.type}{LOOK_SUFFIX}")
            from_assets += 1
        else:
            assert look.primPath.GetParentPath() == looks.path
        box, visual = prim.GetChild(DEVICE_BODY), prim.GetChild(device_visual_name(d.type))
        assert _purpose(box) == UsdGeom.Tokens.guide and _purpose(visual) == UsdGeom.Tokens.render
        lo, hi = np.array(UsdGeom.Mesh(box).GetExtentAttr().Get(), dtype=float)
        assert np.allclose(lo, body[:3], atol=POINT_TOLERANCE) and np.allclose(hi, body[3:], atol=POINT_TOLERANCE)
        # One material per part, the renderer's pick: the subsets' materials are the parts'.
        size, _ = body_placement(body)
        variant = variant_of(home.home_id, d.id)
        want = {tuple(round(c, 5) for c in material_of(CATALOG, d.type, p.role, variant).albedo)
                for p in device_visual(d.type, size, d.mount)}
        subsets = UsdShade.MaterialBindingAPI(visual).GetMaterialBindSubsets()
        got = {tuple(round(c, 5) for c in _diffuse(s.GetPrim())) for s in subsets}
        assert got == want, d.id
        faces = sorted(i for s in subsets for i in s.GetIndicesAttr().Get())
        assert faces == list(range(len(UsdGeom.Mesh(visual).GetFaceVertexCountsAttr().Get())))  # a partition
    assert from_assets  # standing devices take their type's look as it is


def _facts(prim: Usd.Prim) -> dict[str, object]:
    values = {a.GetName(): a.Get() for a in prim.GetAttributes() if a.GetName().startswith("homeloop:")}
    return {k: list(v) if isinstance(v, Vt.StringArray) else v for k, v in values.items()}


def test_device_facts_compose_from_the_type_asset_as_the_device_has_them(house, assets, tmp_path):
    """Each device prim composes the home file's facts of the device: its own (id, name, room,
    mount, what it controls and monitors, its fields' values) over its type asset's (category,
    Matter type, events, fields, what each field accepts, the type's usual name and mount). A device
    whose type facts are not its catalog type's authors them itself: the type asset is left out."""
    home, path = house
    stage = Usd.Stage.Open(str(path))
    layer = Sdf.Layer.FindOrOpen(str(path))
    own = {"homeloop:id", "homeloop:room", *(f"homeloop:field:{n}" for d in home.devices for n in d.fields)}
    for d in home.devices:
        facts = _facts(stage.GetPrimAtPath(f"/Home/Devices/{d.id}"))
        assert facts["homeloop:type"] == d.type and facts["homeloop:category"] == d.category, d.id
        assert facts["homeloop:name"] == d.name and facts["homeloop:mount"] == d.mount, d.id
        assert facts["homeloop:mounted_on"] == (d.mounted_on or "") and facts["homeloop:room"] == (d.room or "")
        assert facts["homeloop:controls"] == d.controls and facts["homeloop:monitors"] == d.monitors, d.id
        assert facts["homeloop:agent_visible"] is d.agent_visible and facts["homeloop:events"] == d.events
        assert facts["homeloop:fields"] == sorted(d.fields)
        for name, f in d.fields.items():
            assert facts.get(f"homeloop:field:{name}") == f.value, (d.id, name)
            accepts = json.loads(facts[f"homeloop:field:{name}:accepts"])
            assert accepts["type"] == f.type and accepts.get("settable", False) == f.settable, (d.id, name)
        authored = {a.name for a in layer.GetPrimAtPath(f"/Home/Devices/{d.id}").properties}
        assert not {a for a in authored if a.endswith(":accepts") or a in ("homeloop:events", "homeloop:category")}
        assert {a for a in authored if a.startswith("homeloop:field:")} <= own
    # A field without a value over its type's default holds none; a turned device turns.
    d = next(d for d in home.devices if d.type == "smoke_sensor")
    assert d.fields["battery_percent"].value is not None
    fields = {**d.fields, "battery_percent": d.fields["battery_percent"].model_copy(update={"value": None})}
    pose = d.pose.model_copy(update={"yaw": 0.5})
    changed = home.model_copy(update={"devices": [x.model_copy(update={"fields": fields, "pose": pose})
                                                  if x.id == d.id else x for x in home.devices]})
    result = export_home(changed, CATALOG, tmp_path / "homes" / "changed" / "home.usdc", assets=assets)
    assert result.valid, result.errors
    changed_stage = Usd.Stage.Open(str(result.path))
    prim = changed_stage.GetPrimAtPath(f"/Home/Devices/{d.id}")
    battery = prim.GetAttribute("homeloop:field:battery_percent")
    assert battery and battery.Get() is None and not battery.HasValue()
    xf = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    assert tuple(xf.TransformDir(Gf.Vec3d(1, 0, 0))) == pytest.approx((math.cos(0.5), math.sin(0.5), 0.0), abs=1e-5)
    assert tuple(xf.ExtractTranslation()) == pytest.approx((d.pose.x, d.pose.y, d.pose.z))
    # A device with an event its catalog type does not raise carries its own type facts.
    odd = home.model_copy(update={"devices": [x.model_copy(update={"events": [*x.events, "tamper"]}) if x.id == d.id
                                              else x for x in home.devices]})
    result = export_home(odd, CATALOG, tmp_path / "homes" / "odd" / "home.usdc", assets=assets, validate=False)
    odd_stage = Usd.Stage.Open(str(result.path))
    prim = odd_stage.GetPrimAtPath(f"/Home/Devices/{d.id}")
    assert _facts(prim)["homeloop:events"] == [*d.events, "tamper"] and labels_of(prim) == ["smoke_sensor"]
    refs = Sdf.Layer.FindOrOpen(str(result.path)).GetPrimAtPath(prim.GetPath()).referenceList.GetAddedOrExplicitItems()
    assert not any(r.assetPath and not r.primPath for r in refs)


def test_a_home_read_from_its_file_exports_the_bytes_of_the_home_as_built(house, house_file, assets):
    """The build exports homes read from their files, whose devices list their fields by name: each
    device still composes from its type asset, and the file is the one the built home gives."""
    beside = house[1].parent.parent / "house_read" / "home.usdc"  # the same way to the assets
    read = export_home(Home.read(house_file), CATALOG, beside, assets=assets, validate=False)
    assert read.path.read_bytes() == house[1].read_bytes()
    layer = Sdf.Layer.FindOrOpen(str(read.path))
    home = house[0]
    typed = [d for d in home.devices
             if any(r.assetPath and not r.primPath for r in
                    layer.GetPrimAtPath(f"/Home/Devices/{d.id}").referenceList.GetAddedOrExplicitItems())]
    assert len(typed) == len(home.devices)


def test_device_type_assets_are_written_once_per_build(assets):
    """One asset per catalog device type in assets/devices: its facts (the default prim) and,
    where the type has a body on its catalog mount, its look in the visual's frame, with a
    variant set per role of several materials."""
    for device_type, entry in CATALOG.devices.items():
        path = assets[device_asset_key(device_type)]
        assert path.parent.name == DEVICE_ASSETS and path.name == f"{device_type}.usdc"
        stage = Usd.Stage.Open(str(path))
        root = stage.GetDefaultPrim()
        assert root.GetName() == device_type and labels_of(root) == [device_type]
        assert root.GetAttribute("homeloop:category").Get() == entry.category
        assert list(root.GetAttribute("homeloop:fields").Get()) == sorted(entry.fields)
        look = stage.GetPrimAtPath(f"/{device_type}{LOOK_SUFFIX}")
        size = device_body_size(device_type, entry.placement.mount)
        assert bool(look) == (size is not None), device_type
        if not look:
            continue
        lo, hi = np.array(UsdGeom.Mesh(look.GetChild(DEVICE_BODY)).GetExtentAttr().Get(), dtype=float)
        assert np.allclose(hi - lo, (size.depth, size.width, size.height), atol=POINT_TOLERANCE)
        assert np.allclose(lo[2], 0.0) and np.allclose((lo + hi)[:2], 0.0, atol=POINT_TOLERANCE)
        choices = {r for r in look.GetVariantSets().GetNames()}
        roles = {p.role for p in device_visual(device_type, size, entry.placement.mount)}
        assert choices == {r for r in roles if len(role_options(CATALOG, device_type, r)) > 1}, device_type


def test_inspection_finds_things_without_a_visual_or_a_solid(house):
    home, path = house
    stage = _root(path).GetStage()
    assert things_without_visuals(stage) == {}
    sofa = next(f for f in home.furniture if f.semantic_class == "sofa")
    device = next(d for d in home.devices if device_body(home, d) is not None)
    stage.SetEditTarget(stage.GetSessionLayer())
    stage.GetPrimAtPath(f"/Home/Furniture/{sofa.id}/{VISUAL}").SetActive(False)
    stage.GetPrimAtPath(f"/Home/Devices/{device.id}/{DEVICE_BODY}").SetActive(False)
    assert things_without_visuals(stage) == {f"/Home/Furniture/{sofa.id}": ["render"],
                                             f"/Home/Devices/{device.id}": ["guide"]}


#: Every device type on its catalog mount, and the mounts that give a type a body of its own.
DEVICE_KINDS = sorted({(d.id, d.placement.mount) for d in CATALOG.devices.values()
                       if d.placement.mount not in ("built_in", "worn")} | set(DEVICE_BODIES_BY_TYPE))


@st.composite
def bodies(draw) -> tuple[str, str, Box]:
    """A device kind and its body's box in its pose's frame: its mount's size scaled by 0.7-1.4
    on each axis (a dome camera's housing is taller than its mount's body), anywhere near the pose."""
    device_type, mount = draw(st.sampled_from(DEVICE_KINDS))
    size = device_body_size(device_type, mount)
    width, depth, height = (v * draw(st.floats(0.7, 1.4)) for v in (size.width, size.depth, size.height))
    x, y, z = (draw(st.floats(-0.3, 0.3)) for _ in range(3))
    return device_type, mount, Box(x - depth / 2, y - width / 2, z, x + depth / 2, y + width / 2, z + height)


@given(bodies())
def test_a_device_visual_fills_its_body(kind):
    """The visual built at the body's size and moved to the body's origin lies in the body's box
    (the frame the export and the CPU renderer share)."""
    device_type, mount, body = kind
    size, origin = body_placement(body)
    assert (size.depth, size.width, size.height) == pytest.approx(
        (body.x1 - body.x0, body.y1 - body.y0, body.z1 - body.z0))
    for part in device_visual(device_type, size, mount):
        points = np.asarray(part.mesh.vertices) + np.asarray(origin)
        assert (points.min(axis=0) >= np.asarray(body[:3]) - 1e-6).all(), (device_type, part.name)
        assert (points.max(axis=0) <= np.asarray(body[3:]) + 1e-6).all(), (device_type, part.name)
