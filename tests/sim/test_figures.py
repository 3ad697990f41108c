"""People drawn as articulated figures posed by what they do (homeloop/sim/render/figures.py).

Each drawn activity's figure is closed, stays inside the solids the geometric visibility backend
gives the person (so both backends see the same person), keeps a head inside the head solid, and
shows a silhouette of its own from above and from the side; asleep in bed and collapsed on the
floor look different to the camera that sees them. Sizes come from the catalog's people and from
hypothesis; thresholds on silhouettes are shares of the silhouettes compared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from homeloop.core.catalog import load_catalog
from homeloop.sim.dynamics.people import ACTIVITIES
from homeloop.sim.episode import Episode
from homeloop.sim.render import figures, materials
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.roles import Roles
from homeloop.sim.services import perception
from homeloop.sim.visibility import LYING_THICKNESS_M, Solid, Viewpoint, person_solids

#: Every activity a person is drawn in (``away`` people are not at home).
DRAWN = sorted(a for a in ACTIVITIES if a != "away")
#: One activity per pose: those drawn in another activity's pose are left out of comparisons.
POSED = [a for a in DRAWN if a not in figures.SAME_POSE]
PEOPLE = sorted(load_catalog().people.values(), key=lambda p: p.id)
#: Occupancy grid cell (m) of the silhouettes.
CELL_M = 0.01
#: Silhouettes: (axes of the figure's frame drawn, lower and upper corner of the window).
TOP_VIEW = ((0, 1), (-1.05, -0.35), (1.05, 0.35))
SIDE_VIEW = ((0, 2), (-1.05, 0.0), (1.05, 2.05))


def pieces_of(activity: str, stature: float, shoulders: float, base: float = 0.0) -> list[figures.Piece]:
    return figures.person_pieces(ACTIVITIES[activity].posture, activity, stature, shoulders, base)


def silhouette(pieces: list[figures.Piece], view: tuple) -> np.ndarray:
    """Cells of the window that the figure covers, seen along the axis the view leaves out."""
    axes, lo, hi = view
    lo, hi = np.array(lo), np.array(hi)
    width, height = np.round((hi - lo) / CELL_M).astype(int)
    image = Image.new("1", (int(width), int(height)), 0)
    draw = ImageDraw.Draw(image)
    for piece in pieces:
        uv = (np.asarray(piece.mesh.vertices)[:, list(axes)] - lo) / CELL_M
        for face in np.asarray(piece.mesh.faces):
            draw.polygon([tuple(p) for p in uv[face]], fill=1)
    return np.asarray(image, dtype=bool)


def differing_share(a: np.ndarray, b: np.ndarray) -> float:
    """Cells covered by one silhouette and not the other, over the cells either covers."""
    return float((a ^ b).sum() / max((a | b).sum(), 1))


def inside(points: np.ndarray, solid: Solid, tol: float = 1e-7) -> bool:
    normals, offsets = solid.half_planes()
    across = (points[:, :2] @ normals.T <= offsets + tol).all()
    return bool(across and (points[:, 2] >= solid.z0 - tol).all() and (points[:, 2] <= solid.z1 + tol).all())


# --- the figures ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("activity", DRAWN)
def test_every_piece_of_every_figure_is_a_closed_outward_mesh(activity):
    for person in PEOPLE:
        for piece in pieces_of(activity, person.height, person.shoulder_width, 0.5):
            mesh = piece.mesh
            assert mesh.is_watertight and mesh.is_winding_consistent, (activity, person.id, piece.role)
            assert mesh.volume > 0, (activity, person.id, piece.role)  # faces wound outward


@settings(max_examples=60, deadline=None)
@given(activity=st.sampled_from(DRAWN), stature=st.floats(1.3, 1.95), build=st.floats(0.22, 0.28),
       x=st.floats(-20, 20), y=st.floats(-20, 20), yaw=st.floats(-math.pi, math.pi), base=st.floats(0.0, 0.8))
def test_a_figure_stays_inside_the_solids_the_geometric_backend_sees(activity, stature, build, x, y, yaw, base):
    """Posed where the scene poses it (turned by the heading, moved to the spot), every piece lies
    inside the body solid and every head piece inside the head solid of the person's posture."""
    posture, shoulders = ACTIVITIES[activity].posture, build * stature
    pieces = figures.person_pieces(posture, activity, stature, shoulders, base)
    body, head = person_solids(x, y, yaw, posture, stature, shoulders, base)
    c, s = math.cos(yaw), math.sin(yaw)
    turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    heads = [p for p in pieces if p.head]
    assert heads, activity
    for piece in pieces:
        placed = np.asarray(piece.mesh.vertices) @ turn.T + [x, y, 0.0]
        assert inside(placed, body), (activity, piece.role)
        assert not piece.head or inside(placed, head), (activity, piece.role)


@pytest.mark.parametrize("activity", DRAWN)
def test_the_head_is_at_the_top_or_at_the_head_end(activity):
    """Head pieces (skin, and hair or hood) reach the highest point of an upright figure, and the
    point farthest toward the heading of a lying one (where the head solid is; a collapsed
    person's arm flung past the head reaches as far)."""
    pieces = pieces_of(activity, 1.7, 0.45)
    roles = {p.role for p in pieces if p.head}
    assert "skin" in roles and roles & {"hair", "hood"}, roles
    axis = 0 if ACTIVITIES[activity].posture == "lying" else 2
    reach = {p.head: 0.0 for p in pieces}
    for p in pieces:
        reach[p.head] = max(reach[p.head], float(np.asarray(p.mesh.vertices)[:, axis].max()))
    assert reach[True] >= reach[False] - 0.03, reach


def test_the_catalogs_people_are_drawn_in_their_poses_with_little_squeezing():
    """Placing a figure squeezes it into its solids where a pose reaches out of them; for the
    catalog's people no pose is squeezed to less than half its reach."""
    for person in PEOPLE:
        build = figures.Build(person.height, person.shoulder_width)
        for name, pose in figures.POSES.items():
            squeeze = figures.placed(build, pose, 0.5).squeeze
            assert min(squeeze) >= 0.5, (person.id, name, squeeze)


def test_the_same_person_and_activity_give_the_same_figure():
    one, two = pieces_of("collapsed", 1.62, 0.40, 0.3), pieces_of("collapsed", 1.62, 0.40, 0.3)
    assert [(p.role, p.head) for p in one] == [(p.role, p.head) for p in two]
    for a, b in zip(one, two):
        assert np.asarray(a.mesh.vertices).tobytes() == np.asarray(b.mesh.vertices).tobytes()
        assert np.asarray(a.mesh.faces).tobytes() == np.asarray(b.mesh.faces).tobytes()


def test_each_activity_has_its_pose_and_a_posture_without_one_falls_back_to_its_own():
    assert set(DRAWN) <= set(figures.POSES) | set(figures.SAME_POSE)
    assert figures.pose_of("standing", "leaving_home") is figures.POSES["walking"]
    for activity in DRAWN:
        posture = ACTIVITIES[activity].posture
        assert figures.pose_of(posture, activity) is figures.POSES[figures.SAME_POSE.get(activity, activity)]
    # a posture that does not match the activity's pose (the world says how they are) wins
    assert figures.pose_of("lying", "cooking").lie and figures.pose_of("sitting", "walking").seated


def test_every_role_a_figure_draws_has_a_colour_for_every_character():
    roles = {p.role for a in DRAWN for p in pieces_of(a, 1.7, 0.45)}
    for person in PEOPLE:
        assert roles <= set(materials.person_colours(person.appearance)), person.id


def test_clothes_follow_the_appearance_text():
    intruder = materials.person_colours("black hooded jacket, hood up, gloves, dark trousers")
    assert intruder["hood"] == intruder["top"] == materials.COLOUR_WORDS["black"]
    assert intruder["hands"] == materials.GLOVES
    courier = materials.person_colours("yellow courier polo, cap, shorts, hand scanner")
    assert courier["forearms"] == courier["shins"] == materials.SKIN != courier["top"]
    visitor = materials.person_colours("navy jacket, jeans, brown shoes; a family friend")
    assert visitor["shoes"] == materials.COLOUR_WORDS["brown"] and visitor["bottom"] == materials.COLOUR_WORDS["jeans"]


def test_props_go_with_their_activity():
    props = {a: {p.role for p in pieces_of(a, 1.77, 0.46)} & {"parcel", "hood", "blanket"} for a in DRAWN}
    assert props.pop("delivering") == {"parcel"}
    assert props.pop("breaking_in") == {"hood"}
    assert props.pop("sleeping") == {"blanket"}
    assert all(not found for found in props.values()), props


# --- silhouettes ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def silhouettes() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Top and side silhouettes of each pose, for one person (the house's resident)."""
    margaret = load_catalog().people["resident_margaret"]
    out = {}
    for activity in POSED:
        pieces = pieces_of(activity, margaret.height, margaret.shoulder_width)
        out[activity] = (silhouette(pieces, TOP_VIEW), silhouette(pieces, SIDE_VIEW))
    return out


def test_each_activity_shows_a_silhouette_of_its_own(silhouettes):
    """Every two poses differ, from above or from the side, in at least a sixth of what they cover."""
    for i, a in enumerate(POSED):
        for b in POSED[i + 1:]:
            top = differing_share(silhouettes[a][0], silhouettes[b][0])
            side = differing_share(silhouettes[a][1], silhouettes[b][1])
            assert max(top, side) >= 1 / 6, (a, b, top, side)


def test_asleep_and_collapsed_differ_in_a_large_share_from_above_and_from_the_side(silhouettes):
    """Straight under a blanket against bent in clothes: from above (the dome cameras look down) and
    from the side the two cover largely different cells; from above, the blanket fills much of what
    the fallen person's limbs leave open."""
    asleep, collapsed = silhouettes["sleeping"], silhouettes["collapsed"]
    assert differing_share(asleep[0], collapsed[0]) >= 0.3
    assert differing_share(asleep[1], collapsed[1]) >= 0.3
    assert (asleep[0] & ~collapsed[0]).sum() >= 0.25 * asleep[0].sum()


def test_a_sleeper_lies_straight_under_a_blanket_up_to_the_shoulders_and_a_fallen_person_does_not():
    asleep, fallen = pieces_of("sleeping", 1.62, 0.40, 0.55), pieces_of("collapsed", 1.62, 0.40, 0.0)
    blanket = next(p for p in asleep if p.role == "blanket").mesh
    head = np.vstack([p.mesh.vertices for p in asleep if p.head])
    covered = np.vstack([p.mesh.vertices for p in asleep if p.role in ("bottom", "shins", "shoes")])
    assert blanket.bounds[1, 0] < head[:, 0].min()  # the face stays out
    assert blanket.bounds[0, 0] <= covered[:, 0].min()  # the feet are under it
    assert np.isclose(blanket.bounds[0, 2], 0.55, atol=0.01)  # on what they lie on
    assert min(np.asarray(p.mesh.vertices)[:, 2].min() for p in fallen) < 0.01  # on the floor
    assert not any(p.role == "blanket" for p in fallen)


# --- in the house ----------------------------------------------------------------------------------------


def person_pixels(renderer: Renderer, world, view: Viewpoint, camera: str, pid: str) -> tuple[np.ndarray, ...]:
    """The id buffer's pixels of a person, those of their blanket, and each pixel's height (m)."""
    hits = renderer.buffers(world, view, (camera,)).hits
    codes = renderer.scene.codes
    theirs = np.array([c.entity == pid for c in codes] + [False])[hits.code]
    blanket = np.array([c.entity == pid and c.rgb == materials.BLANKET for c in codes] + [False])[hits.code]
    height = view.z + np.where(np.isfinite(hits.depth), hits.depth, 0.0) * hits.directions[:, 2]
    return theirs, blanket, height


def test_the_bedroom_camera_tells_asleep_in_bed_from_collapsed_on_the_floor(house_home):
    """fall_false_alarm's resident asleep in bed, then collapsed on the floor between the bed and the
    bedroom's camera, then asleep at that same spot: the id buffer shows the sleeper at the bed's
    height under their blanket, the fallen person low and in their clothes, and at one spot the two
    lying figures cover different pixels."""
    ep = Episode(house_home, "fall_false_alarm", seed=0, images=False)
    world = ep.world
    person = next(p for p in world.people.values() if p.activity == "sleeping")
    bed = next(f for f in house_home.furniture if f.semantic_class == "bed" and f.room == person.room)
    camera = next(c for c in house_home.cameras if c.room == person.room)
    view, renderer = Viewpoint.of(camera), Renderer(world)

    in_bed, blanket, height = person_pixels(renderer, world, view, camera.id, person.id)
    assert in_bed.sum() >= perception.MIN_BOX_AREA_PX
    assert blanket.sum() >= 0.5 * in_bed.sum()
    assert np.median(height[in_bed]) >= max(s.height for s in bed.surfaces)

    between = ((camera.pose.x + bed.pose.x) / 2, (camera.pose.y + bed.pose.y) / 2)
    spot = Roles(house_home, "fall_false_alarm").floor_spot(person.room, near=between)
    person.x, person.y, person.activity = spot.x, spot.y, "collapsed"
    fallen, blanket, height = person_pixels(renderer, world, view, camera.id, person.id)
    assert fallen.sum() >= perception.MIN_BOX_AREA_PX
    assert not blanket.any() and np.median(height[fallen]) <= LYING_THICKNESS_M
    assert (fallen & in_bed).sum() <= 0.1 * (fallen | in_bed).sum()

    person.activity = "sleeping"
    asleep_there, blanket, _ = person_pixels(renderer, world, view, camera.id, person.id)
    assert blanket.sum() >= 0.5 * asleep_there.sum()
    assert (asleep_there ^ fallen).sum() >= 0.3 * (asleep_there | fallen).sum()
