"""A user's own assets (``homeloop build --assets FILE.yaml``, docs/catalog.md "Your own assets").

The assets are made here with trimesh and pxr: a chair-like GLB (y up, front +z, as glTF has it),
a y-up OBJ in centimetres, a z-up USD file. One small build maps them (with one broken mapping
left to fall back); the tests read its library, its USD assets and a rendered frame of the house,
and run the command line on each kind of bad input.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from homeloop.cli import app
from homeloop.core.catalog import load_catalog
from homeloop.core.visuals.library import (FIT_TOLERANCE, MAX_SCALE, AssetMapping, AssetRejection, VisualLibrary,
                                           fit_to_size, library_folder, load_library, prepare_library,
                                           write_library)

#: From the item frame (x front, y left, z up) to glTF's (x left, y up, z front).
ITEM_TO_Y_UP = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
SEAT_Z = 0.47


def _box(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> trimesh.Trimesh:
    box = trimesh.creation.box((x1 - x0, y1 - y0, z1 - z0))
    box.apply_translation(((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2))
    return box


def chair_mesh() -> trimesh.Trimesh:
    """A chair in the item frame, a little larger than the catalog's dining chair: four legs, a
    seat, and a back on its -x (rear) side."""
    legs = [_box(x - 0.02, y - 0.02, 0.0, x + 0.02, y + 0.02, SEAT_Z) for x in (-0.24, 0.24) for y in (-0.2, 0.2)]
    seat = _box(-0.27, -0.23, SEAT_Z, 0.27, 0.23, SEAT_Z + 0.05)
    back = _box(-0.27, -0.23, SEAT_Z + 0.05, -0.22, 0.23, 0.95)
    return trimesh.util.concatenate([*legs, seat, back])


def write_usd_table(path: Path) -> None:
    """A z-up USD side table in metres, under a transformed Xform (the reader applies it)."""
    from pxr import Gf, Usd, UsdGeom

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    root = UsdGeom.Xform.Define(stage, "/Table")
    stage.SetDefaultPrim(root.GetPrim())
    UsdGeom.Xform(root).AddTranslateOp().Set(Gf.Vec3d(5.0, 5.0, 1.0))
    top = _box(-0.22, -0.22, 0.5, 0.22, 0.22, 0.55)
    leg = _box(-0.03, -0.03, 0.0, 0.03, 0.03, 0.5)
    for name, mesh in (("top", top), ("leg", leg)):
        prim = UsdGeom.Mesh.Define(stage, f"/Table/{name}")
        prim.CreatePointsAttr([Gf.Vec3f(*map(float, p)) for p in mesh.vertices])
        prim.CreateFaceVertexCountsAttr([3] * len(mesh.faces))
        prim.CreateFaceVertexIndicesAttr([int(i) for i in mesh.faces.ravel()])
    guide = UsdGeom.Mesh.Define(stage, "/Table/proxy")  # a guide: not part of what is drawn
    guide.CreatePointsAttr([Gf.Vec3f(0, 0, 0), Gf.Vec3f(9, 0, 0), Gf.Vec3f(0, 9, 0)])
    guide.CreateFaceVertexCountsAttr([3])
    guide.CreateFaceVertexIndicesAttr([0, 1, 2])
    guide.CreatePurposeAttr(UsdGeom.Tokens.guide)
    stage.Save()


@pytest.fixture(scope="module")
def assets(tmp_path_factory) -> Path:
    """The asset files: good ones and bad ones, in one folder."""
    folder = tmp_path_factory.mktemp("assets")
    chair = chair_mesh()
    chair.apply_transform(ITEM_TO_Y_UP)
    chair.export(folder / "chair.glb")
    armchair = trimesh.util.concatenate([_box(-0.44, -0.44, 0.0, 0.44, 0.44, 0.45),
                                         _box(-0.44, -0.44, 0.45, -0.3, 0.44, 0.95)])
    armchair.apply_transform(ITEM_TO_Y_UP)
    armchair.apply_scale(100.0)  # centimetres
    armchair.export(folder / "armchair_cm.obj")
    write_usd_table(folder / "side_table.usda")
    _box(-0.5, -0.5, 0.0, 0.5, 0.5, 1.0).export(folder / "cube.glb")
    (folder / "empty.obj").write_text("")
    (folder / "garbage.glb").write_bytes(b"glTF but not really" * 8)
    return folder


def mapping_file(folder: Path, name: str, lines: dict[str, str]) -> Path:
    path = folder / name
    path.write_text("assets:\n" + "".join(f"  {cid}: {{{spec}}}\n" for cid, spec in lines.items()))
    return path


GOOD = {"dining_chair": "file: chair.glb, up_axis: y, front: +z",
        "armchair": "file: armchair_cm.obj, up_axis: y, front: +z, units_per_metre: 100",
        "side_table": "file: side_table.usda, up_axis: z, front: +x"}


def _extents(mesh: trimesh.Trimesh) -> np.ndarray:
    return np.asarray(mesh.bounds[1] - mesh.bounds[0])


# --- the fit -----------------------------------------------------------------------------------------------


def test_each_asset_fills_its_entry_with_one_scale_in_homeloop_frame(assets):
    catalog = load_catalog()
    prepared = prepare_library(mapping_file(assets, "good.yaml", GOOD), catalog)
    assert prepared.rejected == ()
    assert [a.fit.catalog_id for a in prepared.fitted] == sorted(GOOD)
    for asset in prepared.fitted:
        d = catalog.furniture[asset.fit.catalog_id].dimensions
        target = np.array([d.depth, d.width, d.height])
        size = _extents(asset.mesh)
        assert np.all(np.abs(size / target - 1) <= FIT_TOLERANCE + 1e-9), (asset.fit.catalog_id, size, target)
        lo, hi = asset.mesh.bounds
        assert np.allclose([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]], 0.0, atol=1e-9)
        linear = np.asarray(asset.fit.matrix)[:3, :3]  # one scale: scale times a rotation
        units = asset.fit.units_per_metre
        assert np.allclose(linear @ linear.T, np.eye(3) * (asset.fit.scale / units) ** 2)
        assert np.isclose(np.linalg.det(linear), (asset.fit.scale / units) ** 3)
    chair = next(a for a in prepared.fitted if a.fit.catalog_id == "dining_chair")
    # proportions kept: the chair's own size, times one scale
    made = _extents(chair_mesh())
    assert np.allclose(_extents(chair.mesh), made * chair.fit.scale, atol=1e-9)
    # y up, front +z came out z up, front +x: the back (above the seat) is at the rear (-x)
    above = chair.mesh.vertices[chair.mesh.vertices[:, 2] > (SEAT_Z + 0.06) * chair.fit.scale]
    assert len(above) and above[:, 0].max() < 0
    # centimetres, y up came out metres, z up: 95 cm tall along y is the height
    armchair = next(a for a in prepared.fitted if a.fit.catalog_id == "armchair")
    assert np.isclose(_extents(armchair.mesh)[2], 0.95 * armchair.fit.scale)
    assert 1 / MAX_SCALE <= armchair.fit.scale <= MAX_SCALE
    # a USD file: its render meshes in their transform, not its guide
    table = next(a for a in prepared.fitted if a.fit.catalog_id == "side_table")
    assert np.isclose(_extents(table.mesh)[2], 0.55 * table.fit.scale)
    assert table.fit.usd_prim == "/Table"


_AXES = ["+x", "-x", "+y", "-y", "+z", "-z"]


@settings(max_examples=40, deadline=None)
@given(up=st.sampled_from(["y", "z"]), front=st.sampled_from(_AXES), units=st.sampled_from([1.0, 100.0, 1000.0]),
       size=st.sampled_from(sorted(load_catalog().furniture)), scale=st.floats(0.6, 1.6),
       stretch=st.tuples(*[st.floats(0.92, 1.08)] * 3))
def test_a_box_of_the_entry_s_proportions_fits_in_any_declared_frame(up, front, units, size, scale, stretch):
    if front[1] == up:
        return
    mapping = AssetMapping(file="x.glb", up_axis=up, front=front, units_per_metre=units)
    d = load_catalog().furniture[size].dimensions
    target = np.array([d.depth, d.width, d.height])
    item = _box(*(-target[:2] / 2 * stretch[:2] * scale), 0.0, *(target[:2] / 2 * stretch[:2] * scale),
                target[2] * stretch[2] * scale)
    into_file = np.eye(4)
    into_file[:3, :3] = mapping.rotation().T * units  # the inverse of the declared conversion
    item.apply_transform(into_file)
    matrix, fit_scale, fitted = fit_to_size(item, mapping, tuple(target))
    placed = item.vertices @ matrix[:3, :3].T + matrix[:3, 3]
    assert np.allclose(placed.max(axis=0) - placed.min(axis=0), fitted)
    thin = target < 0.1 * target.max()
    assert np.all(np.abs(np.asarray(fitted)[~thin] / target[~thin] - 1) <= FIT_TOLERANCE)
    assert np.isclose(fit_scale, 1 / scale, rtol=0.1)


def test_a_fit_written_twice_gives_the_same_bytes(assets, tmp_path):
    prepared = prepare_library(mapping_file(assets, "good.yaml", GOOD), load_catalog())
    first = write_library(prepared, tmp_path / "one")
    second = write_library(prepared, tmp_path / "two")
    assert [p.name for p in first] == [p.name for p in second]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second))
    library = load_library(tmp_path / "one")
    assert sorted(library.furniture) == sorted(GOOD) and not library.objects
    assert not load_library(tmp_path / "none") and load_library(tmp_path / "none") == VisualLibrary()


# --- bad input ---------------------------------------------------------------------------------------------

BAD = {
    "missing file": ("coffee_table", "file: nowhere.glb, up_axis: z, front: +x", "nowhere.glb", "no such file"),
    "empty file": ("side_table", "file: empty.obj, up_axis: z, front: +x", "empty.obj", "empty"),
    "garbage bytes": ("tv_unit", "file: garbage.glb, up_axis: z, front: +x", "garbage.glb", "unreadable"),
    "unknown id": ("hover_board", "file: chair.glb, up_axis: y, front: +z", "chair.glb", "no furniture or object"),
    "proportions": ("sofa", "file: cube.glb, up_axis: z, front: +x", "cube.glb", "proportions"),
    "wrong units": ("armchair", "file: armchair_cm.obj, up_axis: y, front: +z", "armchair_cm.obj", "another unit"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_input_is_one_line_naming_id_and_file_and_exit_2(assets, tmp_path, case):
    cid, spec, file, why = BAD[case]
    yaml_file = mapping_file(assets, f"bad-{cid}.yaml", {cid: spec})
    rejected = prepare_library(yaml_file, load_catalog()).rejected
    assert [r.catalog_id for r in rejected] == [cid] and why in rejected[0].reason
    out = tmp_path / "build"
    result = CliRunner().invoke(app, ["build", "--assets", str(yaml_file), "--out", str(out), "--plans", "8",
                                      "--sites", "4", "--homes", "1", "--no-verify"],
                                env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and cid in errors[0] and str(assets / file) in errors[0] and why in errors[0], errors
    assert "--assets-fallback" in errors[0]
    assert not out.exists()  # stopped before any work


def test_a_yaml_that_is_no_mapping_stops_with_one_line(assets, tmp_path):
    bad = assets / "wrong-key.yaml"
    bad.write_text("asset:\n  sofa: {file: cube.glb}\n")
    with pytest.raises(Exception) as raised:
        prepare_library(bad, load_catalog())
    assert "assets" in str(raised.value) and "\n" not in str(raised.value)
    extra = mapping_file(assets, "extra-key.yaml", {"sofa": "file: cube.glb, up_axis: z, front: +x, colour: red"})
    (rejection,) = prepare_library(extra, load_catalog()).rejected
    assert isinstance(rejection, AssetRejection) and "colour" in rejection.reason


# --- a build with them -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def build(assets, tmp_path_factory) -> Path:
    """A small build mapping the good assets and one broken one (it falls back)."""
    from homeloop.pipeline.stages import BuildConfig, run_build

    yaml_file = mapping_file(assets, "build.yaml", GOOD | {"sofa": "file: garbage.glb, up_axis: z, front: +x"})
    out = tmp_path_factory.mktemp("own-assets-build")
    run_build(BuildConfig(plans=8, sites=4, homes=1, seed=0, verify=False, out=out, workers=1, progress=False,
                          assets=yaml_file, assets_fallback=True), log=lambda msg: None)
    return out


def test_the_build_keeps_the_fitted_assets_and_records_the_fallback(build, assets):
    manifest = json.loads((build / "manifest.json").read_text())
    recorded = manifest["parameters"]["assets"]
    assert sorted(recorded["fitted"]) == sorted(GOOD) and recorded["fallback"] is True
    assert recorded["rejected"]["sofa"]["file"] == "garbage.glb" and "unreadable" in recorded["rejected"]["sofa"]["reason"]
    assert any("sofa" in w and "garbage.glb" in w for w in manifest["warnings"])
    index = json.loads((library_folder(build) / "index.json").read_text())
    assert index["rejected"]["sofa"] == recorded["rejected"]["sofa"]
    for cid, fit in index["assets"].items():
        assert fit["sha256"] == recorded["fitted"][cid]["sha256"]
        assert f"assets/external/{fit['mesh']}" in manifest["outputs"]
    assert "assets/external/side_table_source.usda" in manifest["outputs"]


def test_the_usd_asset_shows_the_user_mesh_as_render_and_the_catalog_solid_as_guide(build):
    from pxr import Usd, UsdGeom

    from homeloop.core.geometry_assets import mesh_for

    catalog = load_catalog()
    library = load_library(library_folder(build))
    for cid in ("dining_chair", "armchair"):
        stage = Usd.Stage.Open(str(build / "assets" / f"{cid}.usdc"))
        root = stage.GetDefaultPrim()
        body = UsdGeom.Mesh(root.GetChild(cid))
        assert UsdGeom.Imageable(body).ComputePurpose() == UsdGeom.Tokens.guide
        assert np.allclose(np.asarray(body.GetPointsAttr().Get()), mesh_for(catalog.furniture[cid]).vertices, atol=1e-6)
        drawn = [p for p in Usd.PrimRange(root.GetChild("visual")) if p.IsA(UsdGeom.Mesh)]
        assert len(drawn) == 1 and UsdGeom.Imageable(drawn[0]).ComputePurpose() == UsdGeom.Tokens.render
        points = np.asarray(UsdGeom.Mesh(drawn[0]).GetPointsAttr().Get(), dtype=float)
        assert np.allclose(points, library.furniture[cid][0].mesh.vertices, atol=1e-6)
    stage = Usd.Stage.Open(str(build / "assets" / "side_table.usdc"))
    source = stage.GetDefaultPrim().GetChild("visual").GetChild("source")
    meshes = [p for p in Usd.PrimRange(source) if p.IsA(UsdGeom.Mesh)]
    assert sorted(p.GetName() for p in meshes) == ["leg", "proxy", "top"]  # referenced from the copy
    drawn = [p for p in meshes if UsdGeom.Imageable(p).ComputePurpose() == UsdGeom.Tokens.render]
    assert sorted(p.GetName() for p in drawn) == ["leg", "top"]
    bound = UsdGeom.BBoxCache(Usd.TimeCode.Default(), [UsdGeom.Tokens.render]).ComputeWorldBound(source)
    box = bound.ComputeAlignedRange()
    assert np.allclose(np.asarray(box.GetMax()) - np.asarray(box.GetMin()),
                       library.fits["side_table"]["fitted"], atol=1e-4)
    # the built-in asset of an entry not mapped is unchanged: meshes of its own visual
    plain = Usd.Stage.Open(str(build / "assets" / "single_bed.usdc"))
    assert len([p for p in Usd.PrimRange(plain.GetDefaultPrim().GetChild("visual")) if p.IsA(UsdGeom.Mesh)]) > 1


def test_a_rendered_frame_differs_where_the_asset_stands_and_matches_elsewhere(build, tmp_path):
    from homeloop.cli.common import read_home
    from homeloop.core.visuals.library import library_for_home
    from homeloop.sim.render.still import render_still

    home_file = build / "homes" / "house" / "home.json"
    home = read_home(home_file)
    library = library_for_home(home_file)
    mapped = {f.id: f for f in home.furniture if f.catalog_id in library.furniture}
    cameras = {c.room: c.id for c in home.cameras}
    room = next(f.room for f in mapped.values() if f.catalog_id == "armchair")
    size = (160, 120)
    own = render_still(home, cameras[room], size=size, visuals=library)
    plain = render_still(home, cameras[room], size=size)
    png = tmp_path / "frame.png"  # `homeloop render` of a home of the build draws its assets, the same bytes
    result = CliRunner().invoke(app, ["render", str(home_file.parent), "--camera", cameras[room], "--size",
                                      f"{size[0]}x{size[1]}", "--out", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes() == base64.b64decode(own.png)
    change = np.abs(own.image.astype(int) - plain.image.astype(int)).max(axis=2)
    seen = {e.id for e in own.frame.entities} & set(mapped)
    assert seen, "the camera sees a mapped item"
    # where the mapped items stand the frames differ; away from them only their soft shadows and the
    # light they bounce change the floor a little, and beyond those the frames match
    from homeloop.sim.render.renderer import Renderer
    from homeloop.sim.render.still import camera_record, still_world

    world, _ = still_world(home, None, visuals=library)
    view, _ = camera_record(world, cameras[room], size=size)
    hits = Renderer(world).buffers(world, view, (cameras[room],)).hits
    points = hits.points().reshape(size[1], size[0], 3)
    centres = np.array([[f.pose.x, f.pose.y] for f in mapped.values()])
    away = np.min(np.linalg.norm(points[:, :, None, :2] - centres[None, None], axis=3), axis=2)
    away[~np.isfinite(points[:, :, 0])] = np.inf
    assert (change[away < 1.0] > 40).sum() > 50
    assert change[away >= 1.5].max() <= 8
    assert (away >= 3.0).sum() > 1000 and not change[away >= 3.0].any()


def test_the_usd_assets_written_again_give_the_same_bytes(build, tmp_path):
    import shutil

    from homeloop.pipeline.usd import write_catalog_assets

    shutil.copytree(library_folder(build), tmp_path / "external")  # where an asset references its USD source
    library = load_library(tmp_path / "external")
    written = write_catalog_assets(load_catalog(), tmp_path, library)
    for cid in sorted(GOOD):
        assert written[cid].read_bytes() == (build / "assets" / f"{cid}.usdc").read_bytes(), cid
