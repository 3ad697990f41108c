"""Plan previews: PNGs that are valid, deterministic and written atomically."""

from __future__ import annotations

import struct

import pytest
from matplotlib.figure import Figure

from conftest import FIXTURES, load_fixture_plans
from homeloop.pipeline.previews.plan import PALETTE, colour_class, draw_plan, render_plan, render_sheet

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def two_rooms():
    (plan,) = load_fixture_plans(FIXTURES / "two_rooms.csv")
    return plan


def test_render_plan_writes_a_png(two_rooms, tmp_path):
    out = render_plan(two_rooms, tmp_path / "plan.png")
    assert out == tmp_path / "plan.png"
    width, height = _png_size(out.read_bytes())
    assert 600 <= width <= 3000 and 300 <= height <= 3000
    assert [p.name for p in tmp_path.iterdir()] == ["plan.png"]  # no temp file left


def test_the_same_plan_renders_to_the_same_bytes(two_rooms, tmp_path):
    door = two_rooms.doors[0].id
    a = render_plan(two_rooms, tmp_path / "a.png", highlight=[door]).read_bytes()
    b = render_plan(two_rooms, tmp_path / "b.png", highlight=[door]).read_bytes()
    assert a == b
    assert b"Matplotlib" not in a


def test_highlight_changes_the_picture(two_rooms, tmp_path):
    plain = render_plan(two_rooms, tmp_path / "a.png").read_bytes()
    marked = render_plan(two_rooms, tmp_path / "b.png",
                         highlight=[two_rooms.spaces[0].id, two_rooms.entrance_doors[0].id]).read_bytes()
    assert plain != marked


def test_highlight_of_an_unknown_element_names_it(two_rooms, tmp_path):
    unknown = "door_" + str(1 + max(o.row for o in two_rooms.openings))
    with pytest.raises(ValueError, match=unknown):
        render_plan(two_rooms, tmp_path / "x.png", highlight=[unknown])
    assert not list(tmp_path.iterdir())


def test_draw_plan_returns_the_axes_for_more_layers(two_rooms):
    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    assert draw_plan(ax, two_rooms, labels=False) is ax
    x0, x1 = ax.get_xlim()
    assert x0 < -0.2 and x1 > 7.2


def test_render_sheet_writes_one_png(two_rooms, tmp_path):
    from homeloop.core.house import load_house

    house = load_house()
    plans = [two_rooms, house, two_rooms, house, two_rooms]
    out = render_sheet(
        plans, tmp_path / "sheet.png", columns=3, highlights={house.key: [house.doors[0].id]}, title="sheet"
    )
    width, height = _png_size(out.read_bytes())
    assert width > height > 0
    assert [p.name for p in tmp_path.iterdir()] == ["sheet.png"]


def test_render_sheet_rejects_unknown_highlights(two_rooms, tmp_path):
    with pytest.raises(ValueError, match="no-such-plan"):
        render_sheet([two_rooms], tmp_path / "s.png", highlights={"no-such-plan": [two_rooms.spaces[0].id]})


def test_every_space_class_has_a_colour(two_rooms):
    assert {colour_class(s) for s in two_rooms.spaces} == {"living", "bedroom"}
    assert all(c.startswith("#") for c in PALETTE.values())


def test_a_plan_with_broken_shapes_still_draws(tmp_path):
    from shapely import Polygon
    from shapely.geometry import box

    from homeloop.core.plan import Feature, Opening, Plan, PlanIds, Space

    bow_tie = Polygon([(0, 0), (1, 1), (1, 0), (0, 1)])
    plan = Plan(
        PlanIds(1, 1, 1, 1, "b" * 32),
        (Space("1", "ROOM", box(0, 0, 3, 3)), Space("2", "NOT_DEFINED", bow_tie), Space("3", "VOID", Polygon())),
        openings=(Opening("door_5", "DOOR", Polygon(), ("1",)), Opening("window_6", "WINDOW", box(3, 1, 3.2, 2))),
        features=(Feature("sink_7", "SINK", bow_tie, "1"),),
    )
    out = render_plan(plan, tmp_path / "broken.png", highlight=["2", "door_5"])
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_draw_plan_draws_the_shared_layers_and_labels(two_rooms):
    from homeloop.pipeline.previews.plan import _points_per_metre, plan_extent, plan_labels, plan_layers, short_space_name

    fig = Figure(figsize=(6, 4))
    ax = fig.add_axes((0, 0, 1, 1))
    door = two_rooms.doors[0].id
    draw_plan(ax, two_rooms, highlight=[door])
    layers = plan_layers(two_rooms, [door])
    assert len(ax.collections) == len(layers)
    assert [c.get_zorder() for c in ax.collections] == [layer.z for layer in layers]
    labels = plan_labels(two_rooms, _points_per_metre(ax, plan_extent(two_rooms)))
    assert [t.get_text() for t in ax.texts][:-1] == [label.text for label in labels]  # then the scale bar's
    assert {short_space_name(s.subtype) for s in two_rooms.spaces} <= {label.text.split("\n")[0] for label in labels}
