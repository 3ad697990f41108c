"""The simulator's shortcuts give the plain answers (docs/skills.md, docs/dynamics.md, docs/episodes.md).

A frame projects every solid at once and tests each ray only against the
occluders lying in its direction from the camera; a home's static part is
prepared once and shared by its episodes; smoke is read for a whole grid at
once and not asked for its sources while nothing smokes; results are copied
without dataclasses.asdict. Each shortcut is checked here against the plain
computation it replaces: every ray against every occluder, every solid on
its own, every point's own reading, asdict's copy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataclasses import asdict, dataclass

from homeloop.sim.dynamics.cooking import Cooking
from homeloop.sim.dynamics.smoke import Smoke, SmokeSource
from homeloop.sim.dynamics.smoke import _paths as smoke_paths
from homeloop.sim.episode import Episode, Result
from homeloop.sim.occlusion import RAY_END_SLACK_M, Faces, Occlusion, Prisms
from homeloop.sim.visibility import GeometricVisibility, Solid, Viewpoint, _Projection, pixel_box
from homeloop.sim.world import STEP_S, Placement, World, plain_copy

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- the plain computation: every ray against every occluder ------------------------------------------


def plain_blocked(origin, targets, ex, faces: Faces, prisms: Prisms) -> np.ndarray:
    """Each ray tested against every face and every prism, all pairs at once."""
    length = np.linalg.norm(targets - origin, axis=1)
    slack = np.minimum(RAY_END_SLACK_M / np.maximum(length, 1e-9), 0.49)
    return _plain_faces(origin, targets, slack, ex, faces) | _plain_prisms(origin, targets, slack, ex, prisms)


def _ignored(owner, ex):
    return (owner[None, :, None] == ex[:, None, :]).any(axis=-1)


def _plain_faces(origin, targets, slack, ex, faces):
    d = targets[:, :2] - origin[:2]
    e, w = faces.b - faces.a, faces.a - origin[:2]
    den = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[None, :, 0] * e[None, :, 1] - w[None, :, 1] * e[None, :, 0]) / den
        s = (w[None, :, 0] * d[:, None, 1] - w[None, :, 1] * d[:, None, 0]) / den
        z = origin[2] + t * (targets[:, None, 2] - origin[2])
    hit = (np.abs(den) > 1e-12) & (s >= 0) & (s <= 1) & (t > slack[:, None]) & (t < 1 - slack[:, None])
    hit &= (z >= faces.z0[None, :]) & (z <= faces.z1[None, :]) & ~_ignored(faces.owner, ex)
    return hit.any(axis=1)


def _plain_prisms(origin, targets, slack, ex, prisms):
    d = targets - origin
    num = prisms.offset - np.einsum("qej,j->qe", prisms.normal, origin[:2])
    den = np.einsum("qej,mj->mqe", prisms.normal, d[:, :2])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = num[None] / den
        za = (prisms.z0[None, :] - origin[2]) / d[:, 2:3]
        zb = (prisms.z1[None, :] - origin[2]) / d[:, 2:3]
    lower = np.where(den < 0, ratio, -np.inf).max(axis=2)
    upper = np.where(den > 0, ratio, np.inf).min(axis=2)
    never = ((den == 0) & (num[None] < 0)).any(axis=2)
    flat = np.abs(d[:, 2:3]) < 1e-12
    inside_z = (prisms.z0[None, :] <= origin[2]) & (origin[2] <= prisms.z1[None, :])
    lower = np.maximum(lower, np.where(flat, np.where(inside_z, -np.inf, np.inf), np.minimum(za, zb)))
    upper = np.minimum(upper, np.where(flat, np.inf, np.maximum(za, zb)))
    lower, upper = np.maximum(lower, slack[:, None]), np.minimum(upper, 1 - slack[:, None])
    return ((lower < upper) & ~never & ~_ignored(prisms.owner, ex)).any(axis=1)


# --- scenes: on a 5 cm grid, so rays run along faces, through corners and past edges exactly -----------

grid = st.integers(-60, 60).map(lambda i: i * 0.05)
height = st.integers(0, 56).map(lambda i: i * 0.05)
face = st.tuples(grid, grid, st.integers(-40, 40).map(lambda i: i * 0.05), st.booleans(), height, height,
                 st.integers(-1, 3))
box = st.tuples(grid, grid, st.floats(0, math.pi), st.floats(0.05, 2.0), st.floats(0.05, 2.0), height, height,
                st.integers(0, 3))


def faces_of(drawn) -> Faces:
    """Wall-like faces: along x or y from a grid point (a long wall, a short end, a door leaf)."""
    if not drawn:
        return Faces.empty()
    a = np.array([(x, y) for x, y, *_ in drawn])
    b = np.array([(x + run, y) if along_x else (x, y + run) for x, y, run, along_x, *_ in drawn])
    z0 = np.array([min(p, q) for *_, p, q, _ in drawn])
    z1 = np.array([max(p, q) for *_, p, q, _ in drawn])
    return Faces(a, b, z0, z1, np.array([owner for *_, owner in drawn], dtype=np.int64))


def prisms_of(drawn) -> Prisms:
    return Prisms.of([(owner, Solid.box(x, y, yaw, length, width, min(p, q), max(p, q) + 0.05))
                      for x, y, yaw, length, width, p, q, owner in drawn])


def grazing(origin, faces: Faces, prisms: Prisms, rng) -> np.ndarray:
    """Targets past the ends of every face and the corners of every prism, and just inside them:
    rays that graze an occluder's edge, at the edge of the directions it spans."""
    ends = [faces.a, faces.b, faces.a + 1e-3 * (faces.b - faces.a), faces.b + 1e-3 * (faces.a - faces.b)]
    if prisms.corners is not None and len(prisms.z0):
        centres = prisms.corners.mean(axis=1, keepdims=True)
        ends += [prisms.corners.reshape(-1, 2), (prisms.corners + 1e-3 * (centres - prisms.corners)).reshape(-1, 2)]
    points = np.vstack(ends)
    beyond = origin[:2] + rng.choice([1.5, 3.0], size=(len(points), 1)) * (points - origin[:2])
    return np.column_stack([beyond, rng.uniform(0.0, 2.8, len(points))])


@PROPERTY
@given(origin=st.tuples(grid, grid, height), faces=st.lists(face, max_size=30), boxes=st.lists(box, max_size=12),
       ends=st.lists(st.tuples(grid, grid, height), min_size=1, max_size=60), seed=st.integers(0, 2**16))
def test_sorting_occluders_by_direction_blocks_the_rays_testing_every_pair_blocks(origin, faces, boxes, ends,
                                                                                   seed):
    rng = np.random.default_rng(seed)
    origin = np.array(origin)
    walls, solids = faces_of(faces), prisms_of(boxes)
    targets = np.vstack([np.array(ends), grazing(origin, walls, solids, rng)])
    # some rays straight down, some along the camera's own x or y line
    targets[rng.random(len(targets)) < 0.1, :2] = origin[:2]
    targets[rng.random(len(targets)) < 0.1, 0] = origin[0]
    ex = rng.integers(-2, 4, size=(len(targets), 2))
    expected = plain_blocked(origin, targets, ex, walls, solids)
    assert (Occlusion(origin, walls, solids).blocked(targets, ex) == expected).all()


def test_a_camera_inside_a_solid_or_on_a_wall_is_still_blocked_by_them():
    origin = np.array([1.0, 0.0, 1.0])
    wall = Faces(np.array([[0.0, 0.0]]), np.array([[2.0, 0.0]]), np.zeros(1), np.full(1, 2.6),
                 np.array([-1]))
    table = Prisms.of([(0, Solid.box(1.0, 0.5, 0.0, 1.2, 1.2, 0.0, 1.5))])
    targets = np.array([[1.0, -3.0, 0.5], [1.0, 3.0, 0.5], [4.0, 0.0, 0.2], [1.0, 0.5, 0.0]])
    ex = np.full((len(targets), 1), -2)
    found = Occlusion(origin, wall, table).blocked(targets, ex)
    assert (found == plain_blocked(origin, targets, ex, wall, table)).all()
    assert found[1] and found[3]  # through the table around the camera


# --- projection: every solid at once ------------------------------------------------------------------

view_st = st.builds(lambda x, y, yaw, pitch: Viewpoint(x, y, 1.4, yaw, pitch, 69.0, 640, 360),
                    grid, grid, st.floats(-math.pi, math.pi), st.floats(-1.2, 0.4))
polygon = st.tuples(grid, grid, st.integers(3, 8), st.floats(0.05, 1.5), height)


def solid_of(drawn) -> Solid:
    x, y, corners, radius, top = drawn
    angles = np.linspace(0, 2 * math.pi, corners, endpoint=False)
    ring = np.column_stack([x + radius * np.cos(angles), y + radius * np.sin(angles)])
    return Solid(ring, 0.0, top + 0.05)


@PROPERTY
@given(view=view_st, drawn=st.lists(polygon, min_size=1, max_size=30))
def test_projecting_every_solid_at_once_gives_each_solids_own_box(view, drawn):
    around = [(view.x, view.y, corners, radius, top) for _, _, corners, radius, top in drawn[:3]]
    solids = [solid_of(d) for d in drawn + around]  # some hold the camera: the near plane cuts them
    projection = _Projection(view, solids)
    assert projection.boxes == [pixel_box(view, s) for s in solids]
    ahead = [bool((view.camera_coords(s.corners())[:, 2] > 0).any()) for s in solids]
    assert projection.ahead.tolist() == ahead


# --- a home's static part, shared; what moves, followed ---------------------------------------------------


def test_episodes_in_one_home_share_its_static_part_and_see_the_same(house_home):
    first = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    second = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    a, b = GeometricVisibility(first.world), GeometricVisibility(second.world)
    assert a.static_entities is b.static_entities and a.walls is b.walls
    camera = next(c for c in house_home.cameras if c.agent_visible)
    view = Viewpoint.of(camera)
    assert a.frame(first.world, view, hide=(camera.id,)) == b.frame(second.world, view, hide=(camera.id,))
    b.code("something new")
    assert "something new" not in a._codes


@pytest.mark.parametrize("task_id", ["smoke_while_cooking", "watering_can_spill"])
def test_one_entity_is_seen_as_the_whole_frame_sees_it(house_home, task_id, monkeypatch):
    """What ``seen`` reports of one entity (the withheld cameras ask it) is the frame's own report of it,
    from every house camera and the robot's head, asked before the frame and after it (which keeps a
    house camera's view of the static part), and with no view kept at all."""
    from homeloop.sim import static_visibility

    ep = Episode(house_home, task_id, seed=0, images=False)
    world = ep.world
    robot = world.robot
    views = [(Viewpoint.of(c), (c.id,)) for c in house_home.cameras]
    views += [(Viewpoint(robot.x, robot.y, 1.2, robot.yaw + turn, -0.3, 90.0, 640, 360), ("robot",))
              for turn in (0.0, math.pi / 2, math.pi, -math.pi / 2)]
    for cached in (True, False):
        monkeypatch.setattr(static_visibility, "CACHED", cached)
        compared = 0
        for view, hide in views:
            fresh = GeometricVisibility(world)  # (its home's kept views are shared: some are made already)
            ids = [e.id for e in fresh.entities(world)]
            first = [fresh.seen(world, view, eid, hide=hide) for eid in ids]
            shown = {e.id: e for e in fresh.frame(world, view, hide=hide).entities}
            for eid, seen in zip(ids, first):
                assert seen == shown.get(eid) == fresh.seen(world, view, eid, hide=hide), (view, eid)
                compared += eid in shown
        assert compared > 100


def test_an_edited_home_is_prepared_again(house_home):
    home = house_home.model_copy(deep=True)
    world = Episode(home, "handle_smoke_alarm", seed=0, images=False).world
    before = GeometricVisibility(world)
    assert GeometricVisibility(world).static_entities is before.static_entities
    sofa = home.furniture[0]
    sofa.pose = sofa.pose.model_copy(update={"x": sofa.pose.x + 0.5})
    after = GeometricVisibility(world)
    assert after.static_entities is not before.static_entities
    assert next(e for e in after.static_entities if e.id == sofa.id).position[0] == sofa.pose.x
    door = next(o for o in home.openings if o.kind == "door")
    assert door.id in {opening for *_, opening in smoke_paths(home)}
    home.openings = [o for o in home.openings if o.id != door.id]
    assert door.id not in {opening for *_, opening in smoke_paths(home)}


def test_an_object_that_moves_is_seen_where_it_is_now(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False)
    vis = GeometricVisibility(ep.world)
    obj = next(iter(ep.world.objects.values()))
    before = next(e for e in vis.entities(ep.world) if e.id == obj.id).solid
    obj.x += 1.0
    after = next(e for e in vis.entities(ep.world) if e.id == obj.id).solid
    assert np.allclose(after.ring.mean(axis=0) - before.ring.mean(axis=0), [1.0, 0.0])
    obj.x -= 1.0
    assert np.allclose(next(e for e in vis.entities(ep.world) if e.id == obj.id).solid.ring, before.ring)


def _behind_a_fixture(home, k: int, angle: float, rise: float):
    """A camera and a floor point on either side of one of the home's fixtures, through its middle:
    the camera ``rise`` of the way up the fixture's height, both a little off its sides."""
    from homeloop.core.home import polygon_from_rings

    x = home.fixtures[k % len(home.fixtures)]
    poly = polygon_from_rings(x.polygon)
    inner = poly.buffer(-0.1)
    centre = (inner if not inner.is_empty else poly).representative_point()
    u = np.array([math.cos(angle), math.sin(angle)])

    def off_side(sign: float, gap: float) -> np.ndarray:
        t = 0.0
        while poly.buffer(gap).covers(shapely.Point(*(np.array(centre.coords[0]) + sign * t * u))):
            t += 0.02
        return np.array(centre.coords[0]) + sign * t * u

    return x, off_side(1.0, 0.3), rise * x.height, off_side(-1.0, 0.08)


_WORLDS: dict[int, World] = {}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(0, 100), angle=st.floats(-math.pi, math.pi), rise=st.floats(0.2, 0.9))
def test_a_point_behind_a_fixture_is_not_seen(house_home, catalog, k, angle, rise):
    """A low camera looking across a fixture (a counter run, a built-in wardrobe) at an object on
    the floor behind it sees none of it: fixtures hide what is behind them, as the renderer draws them."""
    world = _WORLDS.get(id(house_home)) or _WORLDS.setdefault(id(house_home), World(house_home, catalog, seed=0))
    mug = next(o for o in world.objects.values() if o.semantic_class == "mug")
    fixture, camera, z, spot = _behind_a_fixture(house_home, k, angle, rise)
    mug.x, mug.y, mug.z = float(spot[0]), float(spot[1]), 0.0
    mug.placement = Placement(kind="floor", room=fixture.room)
    dx, dy = spot - camera
    view = Viewpoint(float(camera[0]), float(camera[1]), z, math.atan2(dy, dx), -math.atan2(z, math.hypot(dx, dy)),
                     69.0, 640, 360)
    seen = {s.id: s for s in GeometricVisibility(world).frame(world, view).entities}
    assert mug.id not in seen or seen[mug.id].unoccluded == 0.0


def test_a_tipped_can_lies_on_its_side_for_both_backends(house_home, catalog):
    """The watering can a scenario tips over lies on its side: lower than it is long and wide,
    both as the geometric backend's solid and as the renderer's triangles (its drawn shape, as wide
    as it was standing, is now that high)."""
    world = World(house_home, catalog, seed=0)
    can = next(o for o in world.objects.values() if o.semantic_class == "watering_can")
    size = catalog.objects[can.catalog_id].dimensions
    vis = GeometricVisibility(world)
    upright = next(e for e in vis.entities(world) if e.id == can.id).solid
    assert upright.z1 - upright.z0 == pytest.approx(size.height)
    standing = _drawn_extent(world, vis, can.id)
    can.props["tipped"] = True
    tipped = next(e for e in vis.entities(world) if e.id == can.id).solid
    assert tipped.z1 - tipped.z0 == pytest.approx(size.width)  # lying on its side
    footprint = shapely.Polygon(tipped.ring)
    assert footprint.area == pytest.approx(size.depth * size.height)  # its height now lies along the floor
    lying = _drawn_extent(world, vis, can.id)
    # a quarter turn about its length: the same three extents, the drawn width now its height
    assert sorted(lying) == pytest.approx(sorted(standing), abs=1e-5)
    assert lying[2] == pytest.approx(min(standing[:2]), abs=1e-5) and lying[2] < standing[2]
    assert lying[2] <= size.width + 1e-6


def _drawn_extent(world: World, vis: GeometricVisibility, entity: str) -> np.ndarray:
    """Length, width and height of an entity's drawn triangles (objects stand square to the axes)."""
    from homeloop.sim.render.scene import Scene

    scene = Scene(world, vis.entities(world))
    scene.update(world, {})
    points = scene.entity_mesh(entity).vertices
    extent: np.ndarray = points.max(axis=0) - points.min(axis=0)
    return extent


# --- smoke read for a whole grid at once --------------------------------------------------------------


def test_a_rooms_smoke_read_at_once_is_each_points_own_reading(house_home, catalog):
    cooking, smoke = Cooking(), Smoke()
    world = World(house_home, catalog, seed=0)
    world.add_module(cooking)
    world.add_module(smoke)
    pan = world.objects_of_class("pan")[0]
    stove = world.devices_of_type("stove")[0]
    range_ = next(f for f in house_home.furniture if f.id == pan.placement.furniture)
    burner = min(range_.burners, key=lambda b: math.hypot(b.position[0] - pan.x, b.position[1] - pan.y)).name
    cooking.add_pan(world, pan.id, stove.id, burner, "on_fire")
    world.devices[stove.id].values[burner] = True
    room = pan.placement.room
    x0, y0, x1, y1 = house_home.room_polygon(room).bounds
    points = np.column_stack([np.linspace(x0, x1, 40), np.linspace(y0, y1, 40)])
    spreading = 0
    for _ in range(int(30 / STEP_S)):
        world.advance(STEP_S)
        readings = [smoke.density_at(room, x, y) for x, y in points]
        assert smoke.densities_at(room, points).tolist() == readings
        spreading += min(readings) == 0.0 < max(readings)
    assert spreading > 0  # the front was caught crossing the room


class OnlySources:
    """A smoke provider with ``sources()`` alone: smoke asks it each step."""

    name, makes_smoke = "only_sources", True

    def __init__(self, source: SmokeSource):
        self.source = source

    def sources(self):
        return [self.source]

    def step(self, world, dt):
        pass

    def snapshot(self):
        return {}


def test_a_provider_without_a_smoking_question_still_starts_the_smoke(house_home, catalog):
    room = house_home.rooms[0]
    x, y = house_home.room_polygon(room.id).representative_point().coords[0]
    provider, smoke = OnlySources(SmokeSource("candle", room.id, x, y, smoking=False)), Smoke()
    world = World(house_home, catalog, seed=0)
    world.add_module(provider)
    world.add_module(smoke)
    world.advance(1.0)
    assert smoke.room_density(room.id) == 0.0 and not smoke.snapshot()["active"]
    provider.source.smoking = True
    world.advance(1.0)
    assert smoke.room_density(room.id) > 0.0 and smoke.snapshot()["active"]


# --- copies as asdict makes them ------------------------------------------------------------------------


@dataclass
class Reading:
    name: str
    values: tuple[float, ...]


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    | st.tuples(inner, inner) | st.builds(Reading, st.text(max_size=4), st.tuples(st.floats(allow_nan=False))),
    max_leaves=25)


@PROPERTY
@given(data=json_like, arguments=st.dictionaries(st.text(max_size=4), json_like, max_size=3))
def test_a_result_copies_as_asdict_copies_it(data, arguments):
    result = Result("robot_status", arguments, data=data, events=[{"t": 0.5, "kind": "x", "data": data}])
    copied = result.to_dict()
    assert copied == asdict(result)
    assert repr(copied) == repr(asdict(result))  # the same types, tuples and all
    assert plain_copy(data) is not data or isinstance(data, (str, int, float, bool, type(None)))


# --- tool schemas, worked out once ------------------------------------------------------------------


def test_tool_schemas_are_each_skills_own_and_an_agent_may_change_its_copy(house_home):
    ep = Episode(house_home, "handle_smoke_alarm", seed=0, images=False, show_costs=True)
    tools = ep.tools()
    assert tools == [s.tool_schema(True) for s in ep.skills.values()]
    tools[0]["function"]["parameters"]["properties"]["changed"] = {}
    assert ep.tools()[0] == next(iter(ep.skills.values())).tool_schema(True)
