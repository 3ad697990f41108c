"""The home as triangles, for the renderer (docs/skills.md, "Captures and perception").

A :class:`Scene` is made once per episode from the world and kept up to
date as things move. What it builds from the home alone (the static and glass
triangles, the codes given to them, the doors' and parts' movers unposed) is
kept per home, catalog and visuals (:class:`_HomePart`), and the next episode's
scene in the same home begins from it: its codes are numbered and its movers
ordered as a scene built from nothing, so it draws the same pixels.

Its triangles come from the same geometry as the USD export
(homeloop/pipeline/usd/):

- **architecture** (static): each room's floor, the ceilings of indoor
  rooms, walls extruded from their footprints less the openings, the wall
  over each opening's head and under a window's sill, a frame round every
  opening, the plan's fixtures as their visuals (a toilet's bowl and
  cistern, a counter's cabinets and worktop:
  :func:`homeloop.core.visuals.fixtures.fixture_visuals`), and a ground
  plane round the home;
- **furniture** (static body, moving parts): the visual parts of each item
  (:func:`homeloop.core.visuals.furniture_visual`: a sofa's cushions, a
  table's legs, a range's burners) at its pose; the parts that move with a
  catalog joint (a door, a drawer front, a porthole) turned about or slid
  along its axis to the joint's present state
  (:func:`homeloop.core.geometry_assets.part_transform`), and the joint's
  panel (:func:`homeloop.core.geometry_assets.part_panel_bounds`) where the
  visual draws none of it;
- **devices**: each device's visual (:func:`homeloop.core.visuals.device_visual`)
  in its body's box (:func:`homeloop.core.geometry_assets.device_body`);
  **places**: the solids the geometric visibility backend gives them
  (:mod:`homeloop.sim.visibility`);
- **movers**: door leaves (swung 90° about the hinge, a garage door lifted,
  when open), objects (their visuals), people (:mod:`homeloop.sim.render.figures`,
  posed), the robot, and the dome cameras' housings (a camera never images
  its own).
- **glass**: window panes, kept apart (a ray sees through them).

Every triangle carries a *code*: an index into :attr:`Scene.codes`, naming
the entity it belongs to (the ids the visibility backends use), its kind,
part, colour and texture. A visual part's colour and texture are the
material its role names in the class's palette (the catalog's ``palettes``),
each home and item choosing its own (:func:`homeloop.core.visuals.variant_of`);
an object's ``tinted`` parts take its colour word. A visual that cannot be
made falls back to the entry's solid, and a solid that cannot be made to
its bounding box (a device's to its body's box), with one warning naming
the asset.

:meth:`Scene.update` re-poses only the movers whose state changed (their
world vertices are rewritten in place) and bumps :attr:`Scene.version`, so
the ray caster rebuilds the small moving part of its acceleration structure
only when something moved. Doors and furniture parts move seldom: they are
*settled* movers, cast with the static triangles (:meth:`Scene.opaque`), and
moving one bumps :attr:`Scene.settled_version` instead.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Generic, Iterable, TypeVar

import numpy as np
import shapely
import trimesh
from shapely.geometry import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core.geometry import opening_axes
from homeloop.core.geometry_assets import BodySize, device_body, mesh_for, part_panel_bounds, part_transform
from homeloop.core.catalog import ArticulatedPart, FurnitureEntry, ObjectEntry
from homeloop.core.home import Device, Furniture, Home, Opening, polygon_from_rings
from homeloop.core.kept import Kept
from homeloop.core.visuals import (
    TINTED,
    VisualPart,
    device_visual,
    furniture_visual,
    material_of,
    object_visual,
    variant_of,
)
from homeloop.core.visuals.fixtures import fixture_visuals
from homeloop.sim.render import figures, materials, textures
from homeloop.sim.render.figures import box_mesh
from homeloop.sim.render.materials import RGB
from homeloop.sim.visibility import LEAF_KINDS, Entity, Solid, lies_tipped, rest_matrix
from homeloop.sim.world import PersonState, World

log = logging.getLogger(__name__)

#: Width of the frame round an opening (m), and how far it stands proud of the wall's faces.
FRAME_WIDTH_M = 0.05
FRAME_PROUD_M = 0.01
#: Door leaf thickness and the gap round it (m), window pane thickness (m): as the USD export.
DOOR_LEAF_THICKNESS_M = 0.04
DOOR_LEAF_GAP_M = 0.005
WINDOW_PANE_THICKNESS_M = 0.02
#: How far the ground plane reaches beyond the home's bounds (m), and how far under the floor it lies.
GROUND_MARGIN_M = 60.0
GROUND_DROP_M = 0.01


@dataclass(frozen=True)
class Code:
    """What a triangle belongs to: the entity (None for architecture), its kind, part and colour,
    and the procedural texture that varies the colour over its surface ("" for none)."""

    entity: str | None
    kind: str
    part: str
    rgb: RGB
    room: str | None = None
    texture: str = ""


@dataclass
class Mesh:
    """Triangles with a code each."""

    vertices: np.ndarray  # (V, 3)
    faces: np.ndarray  # (F, 3) int
    codes: np.ndarray  # (F,) int

    @classmethod
    def empty(cls) -> "Mesh":
        return cls(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64))

    @classmethod
    def of(cls, mesh: trimesh.Trimesh, code: int) -> "Mesh":
        faces = np.asarray(mesh.faces, dtype=np.int64)
        return cls(np.asarray(mesh.vertices, dtype=float), faces, np.full(len(faces), code, dtype=np.int64))

    @classmethod
    def concat(cls, parts: Iterable["Mesh"]) -> "Mesh":
        parts = [p for p in parts if len(p.faces)]
        if not parts:
            return cls.empty()
        offsets = np.cumsum([0] + [len(p.vertices) for p in parts[:-1]])
        return cls(np.vstack([p.vertices for p in parts]),
                   np.vstack([p.faces + o for p, o in zip(parts, offsets)]),
                   np.concatenate([p.codes for p in parts]))

    def subset(self, face_index: np.ndarray) -> "Mesh":
        return Mesh(self.vertices, self.faces[face_index], self.codes[face_index])


#: What decides a mover's pose (a door's open flag, a part's joint value, an object's position).
_State = TypeVar("_State")


@dataclass
class Mover(Generic[_State]):
    """Triangles that move together: their shape in their own frame, posed from a state of the world.

    ``state(world)`` reads what decides the pose (a door's open flag, a part's joint value, an
    object's position); ``pose(state)`` turns it into a 4x4 matrix. ``hide_as`` is the name a
    capture's ``hide`` uses for it (its entity, or the robot's camera for the robot).
    """

    hide_as: str | None
    local: np.ndarray
    faces: np.ndarray
    codes: np.ndarray
    state: Callable[[World], _State]
    pose: Callable[[_State], np.ndarray]
    settled: bool = False  # moves seldom (a door, a drawer): cast with the static scene
    shape: tuple[str, str, float, bool] | None = None  # what the local shape was made for (a person's pose)
    key: _State | None = None
    world: np.ndarray | None = None

    def place(self, world: World) -> bool:
        """Pose the mover (rewriting its world vertices in place) unless its state is unchanged;
        True if it moved."""
        key = self.state(world)
        if key == self.key and self.world is not None:
            return False
        matrix = self.pose(key)
        moved = self.local @ matrix[:3, :3].T + matrix[:3, 3]
        if self.world is None or self.world.shape != moved.shape:
            self.world = moved
        else:
            self.world[:] = moved
        self.key = key
        return True

    def mesh(self) -> Mesh:
        return Mesh(self.world if self.world is not None else self.local, self.faces, self.codes)


def pose_matrix(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0, x], [s, c, 0.0, y], [0.0, 0.0, 1.0, z], [0.0, 0.0, 0.0, 1.0]])


def _axis_rotation(axis: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    rot = {"x": [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]], "y": [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
           "z": [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]}[axis]
    out = np.eye(4)
    out[:3, :3] = rot
    return out


def _translation(dx: float, dy: float, dz: float) -> np.ndarray:
    out = np.eye(4)
    out[:3, 3] = (dx, dy, dz)
    return out


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    return [g for g in shapely.get_parts(geom) if g.geom_type == "Polygon" and g.area > 1e-6]


def prism(poly: Polygon, z0: float, z1: float) -> trimesh.Trimesh | None:
    """A polygon (holes allowed) extruded from ``z0`` to ``z1``."""
    if z1 - z0 <= 1e-6 or poly.is_empty or poly.area <= 1e-8:
        return None
    mesh = trimesh.creation.extrude_polygon(poly, z1 - z0, engine="earcut")
    mesh.apply_translation((0.0, 0.0, z0))
    return mesh


def flat(poly: Polygon, z: float) -> trimesh.Trimesh | None:
    """A polygon's triangulation at height ``z``."""
    if poly.is_empty or poly.area <= 1e-8:
        return None
    verts, faces = trimesh.creation.triangulate_polygon(poly, engine="earcut")
    return trimesh.Trimesh(np.column_stack([verts, np.full(len(verts), z)]), faces, process=False)


def solid_mesh(solid: Solid) -> trimesh.Trimesh | None:
    """A visibility :class:`Solid` (a convex ring extruded) as triangles."""
    return prism(Polygon(solid.ring), solid.z0, solid.z1)


@dataclass(frozen=True)
class OpeningFrame:
    """An opening's rectangle as the USD export reads it: centre, direction along the wall (+x, or +y
    when vertical), normal through it, width and depth, and the floor height of its rooms."""

    centre: np.ndarray
    along: np.ndarray
    across: np.ndarray
    width: float
    depth: float

    @classmethod
    def of(cls, poly: Polygon) -> "OpeningFrame":
        centre, along, across, width, depth = opening_axes(poly)
        if along[0] < -1e-9 or (abs(along[0]) <= 1e-9 and along[1] < 0):
            along = -along
        return cls(centre, along, np.array([-along[1], along[0]]), max(width, 0.01), max(depth, 0.01))

    @property
    def yaw(self) -> float:
        return math.atan2(self.along[1], self.along[0])

    def hinge(self) -> np.ndarray:
        return self.centre - self.along * self.width / 2


#: Whether a scene starts from its home's part kept from an earlier scene of the same home
#: (:func:`_home_part`); False builds every scene from nothing, for the tests that compare the two.
KEPT = True
#: Homes whose part is kept: a worker plays a home's episodes one after another.
KEPT_HOMES = 2


@dataclass(frozen=True)
class _HomePart:
    """What a scene builds from its home alone, before anything in the world is posed: the codes
    given so far, the static and glass triangles, each entity's faces among them, the movers of the
    doors, parts and camera housings (unposed) and the assets warned of. Every scene of the home
    starts from it, so they number their codes and order their movers as a scene built from nothing."""

    codes: tuple[Code, ...]
    static: Mesh
    glass: Mesh
    entity_faces: dict[str, dict[str, np.ndarray]]
    movers: tuple[tuple[str, Mover[Any]], ...]
    warned: frozenset[str]
    #: What the renderer's other parts keep of this part, for as long as it is kept (the caster's
    #: casts: :func:`homeloop.sim.render.raycast._home_casts`).
    kept: dict[str, Any] = field(default_factory=dict, compare=False)


#: The kept home parts, by what they were built from: the home's content (its file's JSON), the
#: catalog and the build's own visuals (none: the built-in ones), those two held. A home edited
#: between episodes reads otherwise.
_HOMES: "Kept[_HomePart]" = Kept(KEPT_HOMES)


def _home_part(world: World, build: Callable[[], "_HomePart"]) -> "_HomePart":
    """The home's part kept for ``world``'s home, catalog and visuals, else ``build()``'s, kept."""
    held = (world.catalog, world.visuals if world.visuals else None)
    return _HOMES.get_or_make(world.home.content_digest(), build, held)


class Scene:
    """The home's triangles, static and moving (see the module docstring)."""

    def __init__(self, world: World, entities: Iterable[Entity]):
        home: Home = world.home
        self.home, self.catalog = home, world.catalog
        self.visuals = world.visuals  # a build's own assets, drawn instead of built-in visuals
        self.rooms = {r.id: r for r in home.rooms}
        self.cameras = {c.id for c in home.cameras}
        builder = _HomeBuild(self)
        built = _home_part(world, lambda: builder.part(entities)) if KEPT else builder.part(entities)
        #: The home's part this scene began from (the caster keeps what it casts of it with it).
        self.part = built
        self.static, self.glass, self.entity_faces = built.static, built.glass, built.entity_faces
        self.codes: list[Code] = list(built.codes)
        self._code_index: dict[Code, int] = {c: i for i, c in enumerate(self.codes)}
        self._warned: set[str] = set(built.warned)
        # each mover has a state of its own kind; a copy unposed, as the home part keeps them unposed
        self.movers: dict[str, Mover[Any]] = {n: replace(m, key=None, world=None) for n, m in built.movers}
        self.version = 0  # bumped when a mover that is not settled moves
        self.settled_version = 0  # bumped when a door or a part moves
        self._dynamic: tuple[tuple[int, frozenset[str]], Mesh] | None = None
        self.update(world, {})

    # -- codes

    def code(self, entity: str | None, kind: str, part: str, rgb: RGB, room: str | None = None,
             texture: str = "") -> int:
        """The code of triangles of ``entity`` (None: architecture) of a kind, part, colour and texture."""
        key = Code(entity, kind, part, (float(rgb[0]), float(rgb[1]), float(rgb[2])), room, texture)
        if key not in self._code_index:
            self._code_index[key] = len(self.codes)
            self.codes.append(key)
        return self._code_index[key]

    def _warn_once(self, asset: str, what: str, exc: Exception, instead: str) -> None:
        """One warning per asset, however many of it the home holds and whatever else fails of it."""
        if asset not in self._warned:
            self._warned.add(asset)
            log.warning("render: %s of %r failed (%s); drawing %s", what, asset, exc, instead)

    def _part_code(self, entity: str, kind: str, palette: str, part: str, role: str, variant: int) -> int:
        """The code of a part of a visual: its role's material in the palette, this home's choice."""
        material = material_of(self.catalog, palette, role, variant)
        return self.code(entity, kind, part, material.albedo, texture=material.texture)

    # -- what moves

    def update(self, world: World, bases: dict[str, float]) -> None:
        """Re-pose what moved since the last call: doors, parts, objects, people, the robot.
        ``bases``: the height each lying person lies at (the geometric backend's solids say it)."""
        moved = self._sync_objects(world) | self._sync_people(world, bases) | self._sync_robot(world)
        settled = False
        for mover in self.movers.values():
            if mover.place(world):
                settled |= mover.settled
                moved |= not mover.settled
        if moved:
            self.version += 1
        if settled:
            self.settled_version += 1

    def _sync_objects(self, world: World) -> bool:
        changed = False
        yaws = {o.id: o.pose.yaw for o in self.home.objects}
        colours = {o.id: o.colour for o in self.home.objects}
        for oid, obj in world.objects.items():
            name = f"object:{oid}"
            if name in self.movers:
                continue
            entry = self.catalog.objects.get(obj.catalog_id)
            if entry is None:
                continue
            mesh = _object_mesh(self, oid, entry, colours.get(oid) or entry.colour)
            self.movers[name] = _object_mover(oid, entry, yaws.get(oid, 0.0), mesh)
            changed = True
        return self._drop("object:", set(world.objects)) or changed

    def _sync_people(self, world: World, bases: dict[str, float]) -> bool:
        changed = False
        present: set[str] = set()
        for pid, person in world.people.items():
            if person.room is None:
                continue
            present.add(pid)
            shape = (person.posture, person.activity, round(bases.get(pid, 0.0), 4), bool(person.holding))
            name = f"person:{pid}"
            if name in self.movers and self.movers[name].shape == shape:
                continue
            self.movers[name] = _person_mover(self, person, shape)
            changed = True
        return self._drop("person:", present) or changed

    def _sync_robot(self, world: World) -> bool:
        from homeloop.sim.services.robot_skills import ROBOT_CAMERA

        robot = world.robot
        if robot is None or "robot" in self.movers:
            return robot is None and self.movers.pop("robot", None) is not None
        body = robot.body
        pieces = figures.robot_pieces(body.form, body.body.width, body.base.length, body.body.height)
        verts, faces, spans = figures.merged(pieces)
        codes = np.concatenate([np.full(n, self.code(None, "robot", role, materials.ARCHITECTURE[role]))
                                for role, _, n in spans])
        self.movers["robot"] = Mover(ROBOT_CAMERA, verts, faces, codes, state=_robot_key,
                                     pose=lambda key: pose_matrix(key[0], key[1], 0.0, key[2]))
        return True

    def _drop(self, prefix: str, keep: set[str]) -> bool:
        """Remove the movers named ``prefix<id>`` whose id is no longer in ``keep``; True if any."""
        gone = [n for n in self.movers if n.startswith(prefix) and n[len(prefix):] not in keep]
        for name in gone:
            del self.movers[name]
        return bool(gone)

    # -- meshes for the ray caster

    def opaque(self) -> Mesh:
        """The static triangles with the settled movers (doors, parts) as they stand now."""
        return Mesh.concat([self.static, *(m.mesh() for m in self.movers.values() if m.settled)])

    def settled_state(self) -> tuple[tuple[str, object], ...]:
        """Where each settled mover (a door, a part) stands now: what :meth:`opaque` is made of
        besides the static triangles."""
        return tuple((name, m.key) for name, m in self.movers.items() if m.settled)

    def dynamic(self, hide: Iterable[str] = ()) -> Mesh:
        """The other movers' triangles now, less those ``hide`` names (cached per version and hide set)."""
        key = (self.version, frozenset(hide))
        if self._dynamic is None or self._dynamic[0] != key:
            hidden = key[1]
            self._dynamic = (key, Mesh.concat(m.mesh() for m in self.movers.values()
                                              if not m.settled and m.hide_as not in hidden))
        return self._dynamic[1]

    def entity_mesh(self, entity: str, part: str | None = None) -> Mesh:
        """Every triangle of one entity (opaque, glass and moving), posed as now; only those of one
        part (a person's ``head``) when ``part`` is given."""
        parts = [mesh.subset(self.entity_faces[name].get(entity, np.zeros(0, dtype=np.int64)))
                 for name, mesh in (("static", self.static), ("glass", self.glass))]
        parts += [m.mesh() for m in self.movers.values() if m.hide_as == entity]
        mesh = Mesh.concat(parts)
        if part is not None:
            mesh = mesh.subset(np.flatnonzero([self.codes[c].part == part for c in mesh.codes]))
        return mesh

    def entity_key(self, entity: str) -> tuple[object, ...]:
        """What an entity's triangles depend on (changes when it moves)."""
        return tuple((n, m.key, id(m)) for n, m in self.movers.items() if m.hide_as == entity)


class _HomeBuild:
    """Builds a scene's home part (:class:`_HomePart`) from nothing: the architecture, the openings
    (their leaves as movers), the fixtures, the furniture (its moving parts as movers) and the
    devices and places, each triangle given its code by the scene."""

    def __init__(self, scene: Scene):
        self.scene = scene

    def part(self, entities: Iterable[Entity]) -> _HomePart:
        """The home's part of the scene, worked out from nothing (the scene's codes, movers and
        warnings start empty and hold the part's when it returns)."""
        scene, home = self.scene, self.scene.home
        scene.codes, scene._code_index, scene._warned, scene.movers = [], {}, set(), {}
        panes: list[Mesh] = []
        static = Mesh.concat([*self._architecture(home), *self._openings(home, panes), *self._fixtures(home),
                              *self._furniture(home), *self._solids(entities)])
        glass = Mesh.concat(panes)
        entity_faces = {name: _faces_by_entity(scene, mesh) for name, mesh in (("static", static), ("glass", glass))}
        return _HomePart(tuple(scene.codes), static, glass, entity_faces, tuple(scene.movers.items()),
                         frozenset(scene._warned))

    # -- architecture

    def _floor_z(self, room_ids: Iterable[str]) -> float:
        zs = [self.scene.rooms[r].floor_height for r in room_ids if r in self.scene.rooms]
        return min(zs) if zs else 0.0

    def _floor_colour(self, room_id: str) -> RGB:
        return materials.ARCHITECTURE["outdoor_floor" if self.scene.rooms[room_id].outdoor else "floor"]

    def _architecture(self, home: Home) -> list[Mesh]:
        out: list[Mesh] = []
        for room in home.rooms:
            for poly in _polygons(polygon_from_rings(room.polygon).buffer(0)):
                floor = self.scene.code(None, "floor", room.id, self._floor_colour(room.id), room.id,
                                        textures.floor_texture(room.type, room.outdoor))
                out.append(_mesh(flat(poly, room.floor_height), floor))
                if room.space_class in ("indoor", "ancillary"):
                    top = room.floor_height + room.ceiling_height
                    ceiling = self.scene.code(None, "ceiling", room.id, materials.ARCHITECTURE["ceiling"], room.id)
                    out.append(_mesh(flat(poly, top), ceiling))
        openings = [polygon_from_rings(o.polygon).buffer(0) for o in home.openings]
        holes = shapely.union_all(openings) if openings else None
        base = self._floor_z(self.scene.rooms)
        wall = self.scene.code(None, "wall", "wall", materials.ARCHITECTURE["wall"])
        for w in home.walls:
            poly = polygon_from_rings(w.polygon).buffer(0)
            solid = poly.difference(holes) if holes is not None else poly
            out.extend(_mesh(prism(p, base, base + w.height), wall) for p in _polygons(solid))
        x0, y0, x1, y1 = shapely.union_all([polygon_from_rings(r.polygon) for r in home.rooms]).bounds
        m = GROUND_MARGIN_M
        ground = flat(shapely.box(x0 - m, y0 - m, x1 + m, y1 + m), base - GROUND_DROP_M)
        out.append(_mesh(ground, self.scene.code(None, "ground", "ground", materials.ARCHITECTURE["ground"])))
        return out

    def _openings(self, home: Home, panes: list[Mesh]) -> list[Mesh]:
        out: list[Mesh] = []
        walls = [(polygon_from_rings(w.polygon).buffer(0), w) for w in home.walls]
        wall_code = self.scene.code(None, "wall", "wall", materials.ARCHITECTURE["wall"])
        for o in home.openings:
            poly = polygon_from_rings(o.polygon).buffer(0)
            frame, base = OpeningFrame.of(poly), self._floor_z(o.connects)
            tops = [w.height for p, w in walls if w.kind == "WALL" and p.intersects(poly)]
            wall_top = max(tops, default=0.0) or max(
                (self.scene.rooms[r].ceiling_height for r in o.connects if r in self.scene.rooms), default=2.6)
            head = o.sill + o.height
            low = min(o.connects, key=lambda r: self.scene.rooms[r].floor_height if r in self.scene.rooms else 0.0,
                      default=None)
            floor = (self.scene.code(None, "floor", low, self._floor_colour(low), low) if low in self.scene.rooms
                     else None)
            for p in _polygons(poly):  # the wall over the head and under the sill, the floor across
                out.append(_mesh(prism(p, base + head, base + wall_top), wall_code))
                out.append(_mesh(prism(p, base, base + o.sill), wall_code))
                if o.sill <= 1e-6 and floor is not None:
                    out.append(_mesh(flat(p, base), floor))
            place = pose_matrix(frame.centre[0], frame.centre[1], base, frame.yaw)
            trim = self.scene.code(o.id, "opening", "frame", materials.ARCHITECTURE["door_frame"])
            out.extend(_placed(m, place, trim) for m in _frame_pieces(frame, o.sill, head, o.kind == "window"))
            if o.kind == "window":
                pane = box_mesh(-frame.width / 2, -WINDOW_PANE_THICKNESS_M / 2, o.sill, frame.width / 2,
                            WINDOW_PANE_THICKNESS_M / 2, head)
                glass = self.scene.code(o.id, "opening", "pane", materials.ARCHITECTURE["glass"])
                panes.append(_placed(pane, place, glass))
            elif o.kind in LEAF_KINDS:
                self._leaf(o, frame, base)
        return out

    def _leaf(self, o: Opening, frame: OpeningFrame, base: float) -> None:
        """A door leaf: a mover hinged at one end of the opening (it swings or lifts when open)."""
        gap, half = DOOR_LEAF_GAP_M, DOOR_LEAF_THICKNESS_M / 2
        leaf = box_mesh(gap, -half, o.sill + gap, frame.width - gap, half, o.sill + o.height - gap)
        colour = materials.ARCHITECTURE["garage_door" if o.kind == "garage_door" else "door"]
        code = self.scene.code(o.id, "opening", "leaf", colour)
        faces = np.asarray(leaf.faces, dtype=np.int64)
        hinge = frame.hinge()
        at = pose_matrix(hinge[0], hinge[1], base, frame.yaw)
        opened = _translation(0, 0, o.height) if o.kind == "garage_door" else _axis_rotation("z", math.pi / 2)
        self.scene.movers[f"leaf:{o.id}"] = Mover(
            o.id, np.asarray(leaf.vertices, dtype=float), faces, np.full(len(faces), code),
            state=lambda world: world.openings[o.id].open,
            pose=lambda is_open: at @ opened if is_open else at, settled=True)

    def _fixtures(self, home: Home) -> list[Mesh]:
        """Fixtures as their visuals (:func:`homeloop.core.visuals.fixtures.fixture_visuals`), drawn
        inside the prisms of :func:`homeloop.core.navigation.fixture_solids` that the geometric
        backend holds, each part in its role's material as the home picks it."""
        out: list[Mesh] = []
        for x, parts in fixture_visuals(home):
            lift = np.eye(4)
            lift[2, 3] = self._floor_z([x.room])
            variant = variant_of(home.home_id, x.id)
            for part in parts:
                m = material_of(self.scene.catalog, x.kind, part.role, variant)
                code = self.scene.code(None, "fixture", x.kind, m.albedo, texture=m.texture)
                out.append(_placed(part.mesh, lift, code))
        return out

    def _furniture(self, home: Home) -> list[Mesh]:
        """Each item's visual parts at its pose; the parts that move with a catalog joint become
        that joint's mover (its panel where the visual has none of them)."""
        out: list[Mesh] = []
        for f in home.furniture:
            entry = self.scene.catalog.furniture.get(f.catalog_id)
            variant = variant_of(home.home_id, f.id)
            if entry is None:
                body = self.scene._part_code(f.id, "furniture", f.semantic_class, "body", "body", variant)
                out.extend(_mesh(prism(p, f.pose.z, f.pose.z + f.height), body)
                           for p in _polygons(polygon_from_rings(f.footprint)))
                continue
            place = pose_matrix(f.pose.x, f.pose.y, f.pose.z, f.pose.yaw)
            joints = {p.name for p in entry.parts}
            moving: dict[str, list[Mesh]] = {}
            for part in _visual(self.scene, entry):
                code = self.scene._part_code(f.id, "furniture", entry.semantic_class, part.name, part.role, variant)
                if part.joint in joints:
                    moving.setdefault(part.joint, []).append(Mesh.of(part.mesh, code))
                else:
                    out.append(_placed(part.mesh, place, code))
            for joint in entry.parts:
                shown = moving.get(joint.name) or [_part_panel(self.scene, f, entry, joint, variant)]
                self.scene.movers[f"part:{f.id}/{joint.name}"] = _part_mover(f, joint, place, Mesh.concat(shown))
        return out

    def _solids(self, entities: Iterable[Entity]) -> list[Mesh]:
        """Devices as their visuals in their bodies' frames (the geometric backend's solid where a
        device has no body or its visual fails), places as their solids; camera housings move with
        nothing but are movers, so a camera can leave its own out."""
        out: list[Mesh] = []
        devices = {d.id: d for d in self.scene.home.devices}
        for e in entities:
            if e.kind not in ("device", "place"):
                continue
            mesh = _device_mesh(self.scene, devices[e.id]) if e.kind == "device" and e.id in devices else None
            if mesh is None:
                colour = materials.ARCHITECTURE["doormat" if e.kind == "place" else "device"]
                mesh = _mesh(solid_mesh(e.solid), self.scene.code(e.id, e.kind, "body", colour))
            if e.id in self.scene.cameras:
                self.scene.movers[f"device:{e.id}"] = Mover(e.id, mesh.vertices, mesh.faces, mesh.codes,
                                                            state=lambda world: None, pose=lambda _: np.eye(4))
            else:
                out.append(mesh)
        return out


def _visual(scene: Scene, entry: FurnitureEntry | ObjectEntry) -> list[VisualPart]:
    """The entry's visual parts: the build's own asset where its library maps the entry
    (:mod:`homeloop.core.visuals.library`), else the built-in one (homeloop/core/visuals), or its
    solid as one part (one warning per asset) when its builder fails; an object's solid plays
    ``tinted``, so its colour word colours it."""
    external = scene.visuals.visual(entry)
    if external is not None:
        return external
    try:
        return furniture_visual(entry) if isinstance(entry, FurnitureEntry) else object_visual(entry)
    except Exception as exc:  # a broken builder must not stop an episode
        scene._warn_once(entry.id, "visual", exc, "its solid")
        role = "body" if isinstance(entry, FurnitureEntry) else TINTED
        return [VisualPart("body", _catalog_mesh(scene, entry), role)]


def _catalog_mesh(scene: Scene, entry: FurnitureEntry | ObjectEntry) -> trimesh.Trimesh:
    """The entry's catalog mesh (its solid), or its bounding box (one warning per asset) when it
    cannot be made."""
    try:
        return mesh_for(entry)
    except Exception as exc:  # a broken asset must not stop an episode
        scene._warn_once(entry.id, "catalog mesh", exc, "its bounding box")
        d = entry.dimensions
        return box_mesh(-d.depth / 2, -d.width / 2, 0.0, d.depth / 2, d.width / 2, max(d.height, 0.01))


def _part_panel(scene: Scene, f: Furniture, entry: FurnitureEntry, part: ArticulatedPart, variant: int) -> Mesh:
    """An articulated part's panel (:func:`part_panel_bounds`), closed, in the item frame: what
    stands for the part where the item's visual draws none of it."""
    code = scene._part_code(f.id, "furniture", entry.semantic_class, part.name, "front", variant)
    panel = Mesh.of(box_mesh(*part_panel_bounds(entry, part)), code)
    at = part_transform(part, part.range[0])
    panel.vertices = panel.vertices @ at[:3, :3].T + at[:3, 3]
    return panel


def _part_mover(f: Furniture, part: ArticulatedPart, place: np.ndarray, shown: Mesh) -> Mover[float]:
    """A catalog part's mover: what ``shown`` draws of it (closed, in the item frame) turned about
    or slid along its axis to the part's present state, as :func:`part_transform` has it."""
    closed = part.range[0]
    local = np.linalg.inv(part_transform(part, closed))
    vertices = shown.vertices @ local[:3, :3].T + local[:3, 3]
    key = (f.id, part.name)

    def pose(state: float) -> np.ndarray:
        matrix: np.ndarray = place @ part_transform(part, state)
        return matrix

    return Mover(f.id, vertices, shown.faces, shown.codes, state=lambda world: float(world.parts.get(key, closed)),
                 pose=pose, settled=True)


def _device_mesh(scene: Scene, d: Device) -> Mesh | None:
    """A device's visual (:func:`device_visual`) in its body's box (:func:`device_body`), placed;
    None where it has no body or its builder fails (one warning per device type)."""
    body = device_body(scene.home, d)
    if body is None:
        return None
    size = BodySize(width=body.y1 - body.y0, depth=body.x1 - body.x0, height=body.z1 - body.z0)
    try:
        parts = device_visual(d.type, size, d.mount)
    except Exception as exc:  # a broken builder must not stop an episode
        scene._warn_once(d.type, "visual", exc, "its body's box")
        return None
    at = pose_matrix(d.pose.x, d.pose.y, d.pose.z, d.pose.yaw) @ _translation(
        (body.x0 + body.x1) / 2, (body.y0 + body.y1) / 2, body.z0)
    variant = variant_of(scene.home.home_id, d.id)
    return Mesh.concat(_placed(p.mesh, at, scene._part_code(d.id, "device", d.type, p.name, p.role, variant))
                       for p in parts)


def _object_mesh(scene: Scene, oid: str, entry: ObjectEntry, colour: str | None) -> Mesh:
    """An object's visual parts in its own frame: a ``tinted`` part takes the object's colour word
    where it names one (a red, a blue, a white pill box), every other part its palette's."""
    word = (colour or "").strip().lower()
    variant = variant_of(scene.home.home_id, oid)
    meshes = []
    for part in _visual(scene, entry):
        if part.role == TINTED and word in materials.COLOUR_WORDS:
            code = scene.code(oid, "object", part.name, materials.COLOUR_WORDS[word])
        else:
            code = scene._part_code(oid, "object", entry.semantic_class, part.name, part.role, variant)
        meshes.append(Mesh.of(part.mesh, code))
    return Mesh.concat(meshes)


def _person_mover(scene: Scene, person: PersonState, shape: tuple[str, str, float, bool]
                  ) -> Mover[tuple[float, float, float]]:
    """A person's mover: the figure of their posture and activity, posed where they stand."""
    entry = scene.catalog.people.get(person.catalog_id)
    stature = entry.height if entry is not None else 1.7
    shoulders = entry.shoulder_width if entry is not None else 0.45
    colours = materials.person_colours(entry.appearance if entry is not None else "")
    posture, activity, base, carrying = shape
    pieces = figures.person_pieces(posture, activity, stature, shoulders, base, carrying)
    verts, faces, spans = figures.merged(pieces)
    codes = np.concatenate([np.full(n, scene.code(person.id, "person", "head" if head else "body", colours[role]))
                            for role, head, n in spans])
    pid = person.id
    return Mover(pid, verts, faces, codes, shape=shape,
                 state=lambda w: (w.people[pid].x, w.people[pid].y, w.people[pid].yaw),
                 pose=lambda key: pose_matrix(key[0], key[1], 0.0, key[2]))


def _object_mover(oid: str, entry: ObjectEntry, yaw: float, mesh: Mesh) -> Mover[tuple[float, float, float, bool]]:
    """An object's mover: posed where it is, upright or tipped over (a scene drops it once the
    object is gone, before it is placed again)."""
    def key(world: World) -> tuple[float, float, float, bool]:
        obj = world.objects[oid]
        return obj.x, obj.y, obj.z, lies_tipped(obj)

    def pose(key: tuple[float, float, float, bool]) -> np.ndarray:
        matrix: np.ndarray = pose_matrix(key[0], key[1], key[2], yaw) @ rest_matrix(entry, key[3])
        return matrix

    return Mover(oid, mesh.vertices, mesh.faces, mesh.codes, state=key, pose=pose)


def _robot_key(world: World) -> tuple[float, float, float]:
    """Where the robot's mover stands (a scene drops it once the robot is gone)."""
    if world.robot is None:
        raise RuntimeError("render: the robot's mover is placed in a world without a robot")
    return world.robot.x, world.robot.y, world.robot.yaw


def _mesh(mesh: trimesh.Trimesh | None, code: int) -> Mesh:
    return Mesh.empty() if mesh is None else Mesh.of(mesh, code)


def _placed(mesh: trimesh.Trimesh, matrix: np.ndarray, code: int) -> Mesh:
    out = Mesh.of(mesh, code)
    out.vertices = out.vertices @ matrix[:3, :3].T + matrix[:3, 3]
    return out


def _frame_pieces(frame: OpeningFrame, sill: float, head: float, window: bool) -> list[trimesh.Trimesh]:
    """The frame round an opening, in its frame (centre, along +x): two jambs and a head, and a sill
    board under a window, standing :data:`FRAME_PROUD_M` proud of both faces of the wall."""
    w, fw = frame.width / 2, FRAME_WIDTH_M
    d = frame.depth / 2 + FRAME_PROUD_M
    pieces = [box_mesh(-w, -d, sill, -w + fw, d, head), box_mesh(w - fw, -d, sill, w, d, head),
              box_mesh(-w, -d, head - fw, w, d, head)]
    if window:
        pieces.append(box_mesh(-w, -d, sill, w, d, sill + fw))
    return pieces


def _faces_by_entity(scene: Scene, mesh: Mesh) -> dict[str, np.ndarray]:
    """The face indices of each entity in a mesh."""
    owners = np.array([scene.codes[c].entity or "" for c in mesh.codes], dtype=object)
    out: dict[str, np.ndarray] = {}
    for entity in set(owners) - {""}:
        out[entity] = np.flatnonzero(owners == entity)
    return out
