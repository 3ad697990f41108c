"""Home previews: what the picture shows (room colours, device markers, view cones,
hatched tall furniture, the legend), read back from its pixels, and the raster
pieces it is painted with (PNG writer, dashes)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import shapely
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from homeloop.core.home import polygon_from_rings
from homeloop.pipeline.previews.raster import DASH_PATTERN, Canvas, dashes, png_bytes, rgb
from homeloop.pipeline.previews.plan import PALETTE, colour_class
from homeloop.pipeline.previews.home import (
    CONE_CLIP_GROWTH,
    CONE_LINE_WIDTH,
    CONE_RADIUS,
    DEVICE_STYLE,
    FURNITURE_EDGE,
    PRIVACY_COLOUR,
    legend_keys,
    plan_of_home,
    preview_canvas,
    render_home,
)

DPI, WIDTH_IN = 80, 8.0


def _pixels(canvas: Canvas) -> np.ndarray:
    return np.asarray(canvas.image).astype(int)


def _grid(geom, step: float = 0.1) -> np.ndarray:
    """Plan points on a grid inside ``geom``."""
    minx, miny, maxx, maxy = geom.bounds
    xs, ys = np.meshgrid(np.arange(minx, maxx, step), np.arange(miny, maxy, step))
    pts = np.column_stack([xs.ravel(), ys.ravel()])
    return pts[shapely.contains_xy(geom, pts[:, 0], pts[:, 1])]


def _at(canvas: Canvas, pixels: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The colours of ``pixels`` (the canvas's) at plan ``points``."""
    xy = np.floor(canvas.xy(points)).astype(int)
    return pixels[xy[:, 1], xy[:, 0]]


def _preview(home) -> tuple[Canvas, np.ndarray]:
    canvas = preview_canvas(home, title=home.home_id, dpi=DPI, width_in=WIDTH_IN)  # a title of one size
    return canvas, _pixels(canvas)


@pytest.fixture(scope="module")
def house(house_home):
    return house_home


def test_the_preview_is_a_deterministic_png_of_the_width_asked(house, tmp_path):
    a = render_home(house, tmp_path / "a" / "preview.png", dpi=DPI, width_in=WIDTH_IN).read_bytes()
    b = render_home(house, tmp_path / "b" / "preview.png", dpi=DPI, width_in=WIDTH_IN).read_bytes()
    assert a == b
    image = Image.open(io.BytesIO(a))
    assert image.format == "PNG" and image.mode == "RGB" and image.width == round(DPI * WIDTH_IN)
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["preview.png"]  # no temporary file left


def test_rooms_are_filled_in_their_class_colour(house):
    bare = house.model_copy(update={"cameras": []})  # no cone tints over the floors
    canvas, pixels = _preview(bare)
    plan = plan_of_home(bare)
    for space in plan.spaces:
        colours = _at(canvas, pixels, _grid(space.polygon.buffer(-0.2)))
        share = np.mean(np.all(colours == rgb(PALETTE[colour_class(space)]), axis=1))
        assert share > 0.3, f"{space.id} ({space.subtype}): {share:.0%} in its class colour"


def test_every_device_type_has_its_marker_colour_where_a_device_of_it_stands(house):
    canvas, pixels = _preview(house)
    for kind in {d.type for d in house.devices if d.room is not None} - {"dome_camera"}:
        _, colour, _ = DEVICE_STYLE[kind]
        found = []
        for d in (d for d in house.devices if d.type == kind):
            (x, y), = np.round(canvas.xy([d.pose.x, d.pose.y])).astype(int)
            window = pixels[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3)
            found.append(bool(np.any(np.all(np.abs(window - rgb(colour)) <= 8, axis=1))))
        assert any(found), kind


def _cone_change(house, cam) -> tuple[Canvas, np.ndarray]:
    """Where the preview with ``cam`` as the only camera differs from the one with none."""
    alone = house.model_copy(update={"cameras": [cam]})
    none = house.model_copy(update={"cameras": []})
    canvas, with_cam = _preview(alone)
    _, without = _preview(none)
    return canvas, np.any(with_cam != without, axis=2)


def _wedge(cam, radius: float = CONE_RADIUS):
    half = math.radians(cam.hfov_deg / 2)
    turns = np.linspace(cam.pose.yaw - half, cam.pose.yaw + half, 33)
    arc = [(cam.pose.x + radius * math.cos(t), cam.pose.y + radius * math.sin(t)) for t in turns]
    return shapely.Polygon([(cam.pose.x, cam.pose.y), *arc])


def test_an_agent_camera_cone_is_filled_and_kept_to_its_room(house):
    rooms = house.room_polygons()
    cam = next(c for c in house.cameras if c.agent_visible and c.privacy_mode == "none"
               and _wedge(c).difference(rooms[c.room].buffer(CONE_CLIP_GROWTH + 0.3)).area > 1.0)
    canvas, changed = _cone_change(house, cam)
    inner = _wedge(cam, CONE_RADIUS - 0.3).intersection(rooms[cam.room].buffer(-0.3))
    inner = inner.difference(shapely.Point(cam.pose.x, cam.pose.y).buffer(0.3))
    outside = _wedge(cam, CONE_RADIUS - 0.3).difference(rooms[cam.room].buffer(CONE_CLIP_GROWTH + 0.3))
    assert _at(canvas, changed[..., None], _grid(inner)).mean() > 0.95  # the fill tints the room
    assert _at(canvas, changed[..., None], _grid(outside)).mean() == 0.0  # nothing beyond its walls


def test_an_evaluation_camera_cone_is_an_outline_in_dashes(house):
    cam = next(c for c in house.cameras if not c.agent_visible)
    canvas, changed = _cone_change(house, cam)
    room = house.room_polygons()[cam.room]
    inner = _wedge(cam, CONE_RADIUS - 0.3).intersection(room.buffer(-0.3))
    inner = inner.difference(shapely.Point(cam.pose.x, cam.pose.y).buffer(0.3))
    assert _at(canvas, changed[..., None], _grid(inner)).mean() < 0.05  # not filled
    # Along one straight side of the cone, in its room: dashes and gaps in the dash pattern.
    side = shapely.LineString([(cam.pose.x, cam.pose.y), list(_wedge(cam).exterior.coords)[1]]).intersection(room)
    assert side.length > 1.0
    start, end = canvas.xy(side.coords)
    along = (end - start) / np.linalg.norm(end - start)
    ys, xs = np.nonzero(changed)
    offset = np.column_stack([xs, ys]) + 0.5 - start
    t, d = offset @ along, np.abs(offset @ np.array([-along[1], along[0]]))
    margin = 0.3 * canvas.k
    on_side = (d <= 1.5) & (t > margin) & (t < np.linalg.norm(end - start) - margin)
    steps = np.arange(math.ceil(margin), math.floor(np.linalg.norm(end - start) - margin))
    drawn = np.isin(steps, np.floor(t[on_side]).astype(int))
    gaps = int(np.sum(drawn[:-1] & ~drawn[1:]))
    period = sum(DASH_PATTERN) * CONE_LINE_WIDTH * canvas.px_per_pt
    assert drawn.mean() > 0.6 and gaps >= 0.8 * len(steps) / period  # a gap after (nearly) every dash


def test_cone_colours_follow_privacy_modes(house):
    canvas, pixels = _preview(house)
    view = pixels[canvas.view[1]:canvas.view[3], canvas.view[0]:canvas.view[2]].reshape(-1, 3)
    for mode in {c.privacy_mode for c in house.cameras}:
        assert np.any(np.all(view == rgb(PRIVACY_COLOUR[mode]), axis=1)), mode


def test_tall_furniture_is_hatched_and_low_furniture_is_not(house):
    canvas, pixels = _preview(house.model_copy(update={"cameras": []}))
    edge = rgb(FURNITURE_EDGE)

    def hatch_share(item) -> float:
        inner = polygon_from_rings(item.footprint).buffer(-0.08)
        colours = _at(canvas, pixels, _grid(inner, 0.02))
        return float(np.mean(np.all(np.abs(colours - edge) <= 10, axis=1))) if len(colours) else 0.0

    def alone(item) -> bool:  # no other piece over it (a television on its unit) to draw its outline there
        own = polygon_from_rings(item.footprint)
        return not any(polygon_from_rings(g.footprint).intersects(own) for g in house.furniture if g is not item)

    big = [f for f in house.furniture if polygon_from_rings(f.footprint).area > 0.3 and alone(f)]
    tall, low = [f for f in big if f.tall], [f for f in big if not f.tall]
    assert tall and low
    assert all(hatch_share(f) > 0.1 for f in tall)
    assert all(hatch_share(f) < 0.03 for f in low)  # its label only


def test_nothing_is_drawn_beside_the_framed_plan(house):
    minx, miny, _, maxy = shapely.total_bounds(list(house.room_polygons().values()))
    cam = house.cameras[0]
    outward = cam.model_copy(update={"pose": cam.pose.model_copy(update={"x": minx - 0.2, "y": (miny + maxy) / 2,
                                                                          "yaw": math.pi})})
    canvas, pixels = _preview(house.model_copy(update={"cameras": [outward]}))  # its cone reaches 4 m out
    x0, y0, x1, y1 = canvas.view
    assert x0 > 0 and np.all(pixels[y0:y1, :x0] == 255) and np.all(pixels[y0:y1, x1:] == 255)
    assert np.any(pixels[y0:y1, x0:x0 + 3] != 255)  # it is cut at the frame


def test_the_legend_names_what_the_home_shows(house):
    labels = [k.label for k in legend_keys(house)]
    types = {d.type for d in house.devices if d.room is not None} - {"dome_camera"}
    assert set(labels[:len(types)]) == {DEVICE_STYLE[t][2] for t in types}
    modes = {f"camera: {c.privacy_mode.replace('_', ' ')}" for c in house.cameras}
    assert modes <= set(labels)
    assert "evaluation-only" in labels and "tall" in labels
    plain = house.model_copy(update={"cameras": [], "furniture": [f for f in house.furniture if not f.tall]})
    assert not {"evaluation-only", "tall"} & {k.label for k in legend_keys(plain)}
    assert not any(k.label.startswith("camera:") for k in legend_keys(plain))


def test_a_long_title_shrinks_to_the_width(house):
    canvas = preview_canvas(house, title="x" * 300, dpi=DPI, width_in=WIDTH_IN)
    top = _pixels(canvas)[:canvas.view[1] // 2]
    inked = np.flatnonzero(np.any(top < 200, axis=(0, 2)))
    assert len(inked) and inked.min() > 0 and inked.max() < top.shape[1] - 1


# --- raster pieces ---------------------------------------------------------------------------


def test_png_bytes_decode_to_the_same_pixels_and_resolution():
    rng = np.random.default_rng(3)
    image = Image.fromarray(rng.integers(0, 256, (37, 53, 3), dtype=np.uint8))
    decoded = Image.open(io.BytesIO(png_bytes(image, 80)))
    assert decoded.mode == "RGB" and np.array_equal(np.asarray(decoded), np.asarray(image))
    assert decoded.info["dpi"] == pytest.approx((80, 80), abs=0.01)


#: A coordinate on a drawing, to a thousandth of a pixel (a line shorter than that is no line to dash).
_PIXEL = st.integers(0, 500_000).map(lambda v: v / 1000)


@given(st.lists(st.tuples(_PIXEL, _PIXEL), min_size=2, max_size=8), st.floats(1, 20), st.floats(0.5, 10))
def test_dashes_lie_on_the_line_in_the_pattern(points, on, off):
    line = np.array(points)
    pieces = dashes(line, on, off)
    total = float(np.hypot(*np.diff(line, axis=0).T).sum())
    assert len(pieces) == (math.ceil(total / (on + off)) if total > 0 else 0)
    path = shapely.LineString(line) if total > 0 else None
    for x0, y0, x1, y1 in pieces:
        assert math.hypot(x1 - x0, y1 - y0) <= on + 1e-6  # a dash is at most ``on`` long (straight)
        assert path.distance(shapely.Point(x0, y0)) < 1e-6 and path.distance(shapely.Point(x1, y1)) < 1e-6


def _framed_canvas() -> Canvas:
    canvas = Canvas((200, 200), 72)
    canvas.frame((0.0, 0.0, 10.0, 10.0), (0, 0, 200, 200))  # 20 px a metre, 40 drawn
    return canvas


def test_a_polygon_with_a_hole_leaves_the_hole_unpainted():
    canvas = _framed_canvas()
    ring = shapely.box(1, 1, 9, 9).difference(shapely.box(4, 4, 6, 6))
    (rings,), = canvas.rings([ring])
    canvas.polygon(rings, "#ff0000", None, 1)
    pixels = _pixels(canvas)
    assert tuple(_at(canvas, pixels, np.array([[5.0, 5.0]]))[0]) == (255, 255, 255)
    assert tuple(_at(canvas, pixels, np.array([[2.0, 5.0]]))[0]) == (255, 0, 0)


def test_a_turned_label_reads_upwards():
    from homeloop.pipeline.previews.plan import Label

    upright, turned = _framed_canvas(), _framed_canvas()
    upright.label(Label(5, 5, "wardrobe", 12, 0, "black"))
    turned.label(Label(5, 5, "wardrobe", 12, 90, "black"))

    def ink(canvas) -> tuple[int, int, float, float]:
        ys, xs = np.nonzero(np.any(_pixels(canvas) < 128, axis=2))
        return np.ptp(xs), np.ptp(ys), xs.mean(), ys.mean()

    (w0, h0, x0, y0), (w1, h1, x1, y1) = ink(upright), ink(turned)
    assert w0 > 2 * h0 and h1 > 2 * w1  # the same word, on its side
    assert abs(w0 - h1) <= 3 and abs(x1 - x0) < 5 and abs(y1 - y0) < 5  # as long, about the same point
