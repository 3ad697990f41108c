"""The contact sheet of a home's cameras (homeloop/sim/render/sheet.py): ``homeloop render --sheet``
and the build report's gallery.

The sheet is checked against what it is made of, never against how a room looks: its size is the
grid of its tiles, each tile is the camera's own still at the tile's size, each label band differs
from its frame and from the other labels, and the same inputs give the same bytes. Cameras are
found as the benchmark finds them (the cameras service's list), in the house.
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from typer.testing import CliRunner

from homeloop.cli import app
from homeloop.sim.render.sheet import (EMPTY_RGB, TILE, NoCameras, band_height, compose, grid, render_sheet,
                                       sheet_cameras)
from homeloop.sim.render.still import ROBOT, render_still, still_world

#: A task whose scenario places the robot and withholds the kitchen's camera from the agent.
WITHHOLDING_TASK = "handle_smoke_alarm"
#: Small tiles: the renderer's set-up, not the pixels, is what a sheet costs.
SMALL = (96, 54)


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def png_pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


@pytest.fixture(scope="module")
def house_dir(house_file):
    return house_file.parent


@pytest.fixture(scope="module")
def task_sheet(house_home):
    return render_sheet(house_home, task=WITHHOLDING_TASK, tile=SMALL)


# --- the grid ------------------------------------------------------------------------------------------


@given(st.integers(min_value=1, max_value=400))
def test_the_grid_holds_every_tile_in_as_few_rows_as_its_columns_allow(count):
    columns, rows = grid(count)
    assert columns == math.ceil(math.sqrt(count))
    assert columns * rows >= count > columns * (rows - 1)  # every tile has a cell, and no row is empty
    assert rows <= columns


@settings(max_examples=40, deadline=None)
@given(count=st.integers(min_value=1, max_value=11), width=st.integers(min_value=16, max_value=64),
       height=st.integers(min_value=16, max_value=48), seed=st.integers(min_value=0, max_value=2**16))
def test_compose_lays_each_frame_in_its_cell_over_its_band(count, width, height, seed):
    frames = list(np.random.default_rng(seed).integers(0, 256, (count, height, width, 3), dtype=np.uint8))
    cameras = [(f"cam_{i}", f"cam_{i} (room {i})") for i in range(count)]
    image, tiles = compose(frames, cameras)
    columns, rows = grid(count)
    band = band_height(height)
    assert image.shape == (rows * (height + band), columns * width, 3)
    assert [t.camera for t in tiles] == [c for c, _ in cameras] and [t.label for t in tiles] == [l for _, l in cameras]
    for i, (frame, tile) in enumerate(zip(frames, tiles)):
        left, top, right, bottom = tile.box
        assert (left, top) == ((i % columns) * width, (i // columns) * (height + band))
        assert np.array_equal(image[top:bottom, left:right], frame)
    filled = np.zeros(image.shape[:2], dtype=bool)
    for left, top, right, bottom in (t.box for t in tiles):
        filled[top:bottom + band, left:right] = True
    assert (image[~filled] == EMPTY_RGB).all()  # the cells after the last camera


# --- the house's cameras --------------------------------------------------------------------------------


def test_the_sheet_shows_the_cameras_the_agent_may_use_in_the_services_order(house_home):
    from homeloop.sim.episode import Episode
    from homeloop.sim.services.cameras import agent_cameras

    episode = Episode(house_home, WITHHOLDING_TASK, seed=0, images=False)
    listed = [c.id for c in agent_cameras(episode.context)]
    assert [c for c, _ in sheet_cameras(episode.world)] == [*listed, ROBOT]
    withheld = [c.id for c in house_home.cameras if c.agent_visible and c.id not in listed]
    assert withheld, "the scenario withholds a camera the home shows the agent"
    built, _ = still_world(house_home, None)
    assert [c for c, _ in sheet_cameras(built)] == [c.id for c in house_home.cameras if c.agent_visible]
    rooms = {r.id: r.name for r in house_home.rooms}
    for camera, label in sheet_cameras(built):
        assert label == f"{camera} ({rooms[house_home.camera(camera).room]})"


def test_the_sheet_is_its_tiles_on_the_grid(house_home, task_sheet):
    from homeloop.sim.episode import Episode

    cameras = sheet_cameras(Episode(house_home, WITHHOLDING_TASK, seed=0, images=False).world)
    assert [(t.camera, t.label) for t in task_sheet.tiles] == cameras
    columns, rows = grid(len(cameras))
    assert (task_sheet.columns, task_sheet.rows) == (columns, rows)
    assert task_sheet.image.shape == (rows * (SMALL[1] + band_height(SMALL[1])), columns * SMALL[0], 3)
    assert all(t.box[2] - t.box[0] == SMALL[0] and t.box[3] - t.box[1] == SMALL[1] for t in task_sheet.tiles)


def test_each_tile_is_the_cameras_still_at_the_tile_size(house_home, task_sheet):
    for tile in task_sheet.tiles:
        left, top, right, bottom = tile.box
        still = render_still(house_home, tile.camera, task=WITHHOLDING_TASK, size=SMALL)
        assert still.image.shape == (SMALL[1], SMALL[0], 3)
        assert np.array_equal(task_sheet.image[top:bottom, left:right], still.image), tile.camera


def test_each_tile_has_a_label_band_of_its_own(task_sheet):
    band = band_height(SMALL[1])
    bands = []
    for tile in task_sheet.tiles:
        left, _, right, bottom = tile.box
        strip = task_sheet.image[bottom:bottom + band, left:right]
        colours = np.unique(strip.reshape(-1, 3), axis=0)
        assert len(colours) > 2, f"{tile.camera}: the band shows no text"
        frame_edge = task_sheet.image[bottom - band:bottom, left:right]
        assert not np.array_equal(strip, frame_edge), tile.camera
        bands.append(strip.tobytes())
    assert len(set(bands)) == len(bands)  # each label is drawn, and each differs


def test_privacy_applies_unless_turned_off(house_home):
    """The house shows the agent no blocked camera, so privacy changes nothing in its sheet as built;
    a home whose cameras all block their images shows blocked tiles until privacy is off."""
    blocked = house_home.model_copy(deep=True)
    for camera in blocked.cameras:
        camera.privacy_mode = "image_blocked"
    private, open_ = render_sheet(blocked, tile=SMALL), render_sheet(blocked, tile=SMALL, privacy=False)
    for tile in private.tiles:
        left, top, right, bottom = tile.box
        assert len(np.unique(private.image[top:bottom, left:right].reshape(-1, 3), axis=0)) == 1, tile.camera
    assert not np.array_equal(private.image, open_.image)


# --- the command --------------------------------------------------------------------------------------


def test_render_sheet_writes_the_same_bytes_as_the_sheet_each_time(house_home, house_dir, tmp_path):
    outs = [tmp_path / "a.png", tmp_path / "b.png"]
    for out in outs:
        result = invoke("render", house_dir, "--sheet", "--size", f"{SMALL[0]}x{SMALL[1]}", "--out", out)
        assert result.exit_code == 0, result.output[-3000:]
    sheet = render_sheet(house_home, tile=SMALL)
    assert outs[0].read_bytes() == outs[1].read_bytes() == sheet.png()
    assert f"{len(sheet.tiles)} cameras of {house_home.home_id}" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png"]  # written atomically: no temporary left


def test_the_default_tile_is_the_commands():
    from homeloop.cli.sim import SHEET_TILE

    assert SHEET_TILE == TILE


def test_a_home_with_no_agent_camera_has_no_sheet(house_home, house_dir, tmp_path):
    data = json.loads((house_dir / "home.json").read_text(encoding="utf-8"))
    cameras = {c["id"] for c in data["cameras"]}
    for item in data["cameras"] + [d for d in data["devices"] if d["id"] in cameras]:
        item["agent_visible"] = False
    (tmp_path / "home.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(NoCameras):
        render_sheet(house_home.model_validate(data), tile=SMALL)
    result = invoke("render", tmp_path, "--sheet", "--out", tmp_path / "s.png")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output[-3000:]
    (line,) = error_lines(result.output)
    assert f"home {data['home_id']} has no camera an agent may use" in line
    assert not (tmp_path / "s.png").exists()


@pytest.mark.parametrize("args, phrases", [
    (["--sheet", "--camera", "dome_camera_1_1"], ["--sheet with --camera dome_camera_1_1", "not both"]),
    ([], ["give --camera ID (one camera) or --sheet"]),
    (["--sheet", "--size", "320by180"], ["--size '320by180'", "WIDTHxHEIGHT"]),
    (["--sheet", "--size", "8x8"], ["--size '8x8'", "from 16 to"]),
    (["--sheet", "--robot", "pal_tiago"], ["--robot pal_tiago", "give --task too"]),
    (["--sheet", "--task", "no_such_task"], ["no_such_task"]),
])
def test_bad_sheet_options_are_one_line_and_no_file(house_dir, tmp_path, args, phrases):
    result = invoke("render", house_dir, *args, "--out", tmp_path / "s.png")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output[-3000:]
    (line,) = error_lines(result.output)
    assert all(p in line for p in phrases), line
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_home_folder_is_one_line(tmp_path):
    result = invoke("render", tmp_path / "nowhere", "--sheet", "--out", tmp_path / "s.png")
    assert result.exit_code == 2, result.output[-3000:]
    (line,) = error_lines(result.output)
    assert f"{tmp_path / 'nowhere' / 'home.json'}: no home file" in line
    assert list(tmp_path.iterdir()) == []


# --- the build report's gallery -------------------------------------------------------------------------


def _report_build(folder, house_file):
    """A build folder as far as the report reads it: the homes table and the house's folder."""
    (folder / "homes" / "house").mkdir(parents=True)
    (folder / "homes" / "house" / "home.json").write_bytes(house_file.read_bytes())
    columns = ["rooms", "indoor_area_m2", "devices", "agent_devices", "cameras", "agent_cameras", "furniture",
               "objects"]
    pd.DataFrame([{"plan": "h0", "kept": True, **{c: 1 for c in columns}}]).to_parquet(folder / "homes.parquet")
    return folder


def test_the_reports_gallery_shows_the_houses_sheet_the_same_each_time(house_home, house_file, tmp_path):
    from homeloop.pipeline.report import SHEET_FILE, write_report

    build = _report_build(tmp_path / "build", house_file)
    first = write_report(build, "try", {})
    sheet = build / "homes" / "house" / SHEET_FILE
    assert first == [build / "report.html", sheet]
    page, picture = (build / "report.html").read_bytes(), sheet.read_bytes()
    expected = render_sheet(house_home)
    assert picture == expected.png()
    assert f'src="homes/house/{SHEET_FILE}"'.encode() in page
    assert write_report(build, "try", {}) == first
    assert (build / "report.html").read_bytes() == page and sheet.read_bytes() == picture
    assert sorted(p.name for p in sheet.parent.iterdir()) == sorted(["home.json", SHEET_FILE])
    assert png_pixels(picture).shape[1] == expected.columns * TILE[0]
