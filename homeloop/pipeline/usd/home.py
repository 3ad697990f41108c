"""A home as one USD stage: architecture, furniture and objects by reference, devices, cameras
and lights (the package docstring says what the stage holds)."""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import shapely
from pxr import Gf, Sdf, Vt
from shapely import Polygon, affinity

from homeloop.core.catalog import Catalog, FurnitureEntry, ObjectEntry
from homeloop.core.geometry import rectangle_frames
from homeloop.core.geometry_assets import Box, device_body
from homeloop.core.home import Camera, Device, Home, Opening, Wall, polygon_from_rings
from homeloop.core.visuals import material_of, variant_of
from homeloop.core.visuals.fixtures import fixture_visuals
from homeloop.pipeline.usd.author import (
    BINDING_API,
    GUIDE,
    RGB,
    TYPES,
    MeshData,
    Names,
    Triangulation,
    UsdExportError,
    apply_apis,
    attr,
    bind,
    box_mesh,
    collider,
    deg,
    joint,
    label,
    layer_file,
    mesh_prim,
    polygons,
    pose_ops,
    preview_material,
    prim_spec,
    prism,
    purpose,
    relationship,
    rigid_body,
    valid_name,
)
from homeloop.pipeline.usd.assets import JOINT_AXIS, asset_names, joint_op_name, variant_roles
from homeloop.pipeline.usd.device_types import (TypeFacts, catalog_defaults, catalog_facts, device_asset_key,
                                                device_facts, type_facts)
from homeloop.pipeline.usd.devices import HOME_MATERIALS, DeviceVisuals, HomeMaterials
from homeloop.pipeline.usd.looks import PartMesh, part_meshes, role_choice, visual_group
from homeloop.pipeline.usd.validate import validate_stage_report
from homeloop.sim.dynamics.light import DEFAULT_LUMENS, LUMENS_BY_MOUNT
from homeloop.sim.render import materials


#: The home's root prim (the stage's default prim).
HOME_ROOT = "Home"
#: A fixture's prism under its prim (guide purpose: the collider).
FIXTURE_BODY = "body"

#: Leaf thickness (m) of a house door, and the gap (m) left around it in its opening.
DOOR_LEAF_THICKNESS = 0.04
DOOR_LEAF_GAP = 0.005
#: Mass (kg) of a door leaf per m² (a hollow-core interior door is ~10 kg/m²;
#: entrance and garage doors are heavier).
DOOR_LEAF_KG_PER_M2 = {"door": 10.0, "entrance_door": 25.0, "garage_door": 15.0}
#: Window pane thickness (m).
WINDOW_PANE_THICKNESS = 0.02
#: An opening whose sill is this low (m) is at floor level: the floor runs on through it.
FLOOR_LEVEL_SILL = 1e-6
#: Opening angle (deg) of a house door's revolute joint: 0 closed, 90 open.
DOOR_OPEN_DEG = 90.0
#: Camera clipping range (m): from just outside a dome camera's housing to beyond any room.
CAMERA_CLIPPING = (0.01, 100.0)
#: Horizontal aperture of every exported camera (USD's default, a 35 mm film
#: back's width in tenths of a unit); the focal length follows from the FOV.
CAMERA_HORIZONTAL_APERTURE = 20.955
#: Ceiling light emitters: radius (m), gap (m) under the fitting's body, colour temperature (K).
LIGHT_RADIUS = 0.05
LIGHT_GAP = 0.01
LIGHT_COLOUR_TEMPERATURE = 3000.0
#: Standard gravity (m/s²) of the physics scene, along -Z.
GRAVITY = 9.81
#: Materials: roughness of every surface, opacity of window glass.
MATERIAL_ROUGHNESS = 0.8
GLASS_OPACITY = 0.25

#: Label taxonomies a thing's prim leaves to what it has them from (``_HomeLabels.thing``): its
#: class to the asset it references (whose root carries it), its rooms to its parent (a room's
#: floor and ceiling, the wall and floor pieces of an opening, in the same rooms), or none.
FROM_ASSET = frozenset({"class"})
FROM_PARENT = frozenset({"room", "room_id"})
NONE: frozenset[str] = frozenset()

#: Colour (and material) of the architecture's classes: the CPU renderer's.
_ARCHITECTURE_LOOK = {"floor": "floor", "ceiling": "ceiling", "wall": "wall", "door": "door",
                      "entrance_door": "door", "garage_door": "garage_door", "window": "glass"}


@lru_cache(maxsize=1024)
def look_of(cls: str, kind: str) -> tuple[str, RGB]:
    """The material name and colour of a thing of semantic class ``cls`` and ``kind``
    (architecture or fixture), as the CPU renderer colours it. Furniture, objects and devices
    are made of the catalog's materials (:class:`AssetLooks`, :class:`HomeMaterials`)."""
    if kind == "architecture":
        return cls, materials.ARCHITECTURE[_ARCHITECTURE_LOOK.get(cls, "wall")]
    return cls, materials.fixture_colour(cls)


@dataclass(frozen=True)
class _Frame:
    """An opening's rectangle: centre, unit direction along the wall, width along it, depth through it."""

    centre: tuple[float, float]
    along: tuple[float, float]
    width: float
    depth: float

    @property
    def yaw(self) -> float:
        return math.atan2(self.along[1], self.along[0])

    def end(self, sign: float = -1.0) -> tuple[float, float]:
        return (self.centre[0] + sign * self.along[0] * self.width / 2,
                self.centre[1] + sign * self.along[1] * self.width / 2)


def _opening_frames(polys: list[Polygon]) -> list[_Frame]:
    """Each opening's frame (:func:`homeloop.core.geometry.rectangle_frames`: all in one call)."""
    centres, alongs, _, widths, depths = rectangle_frames(polys)
    return [_opening_frame(*frame) for frame in zip(polys, centres, alongs, widths.tolist(), depths.tolist())]


def _opening_frame(poly: Polygon, centre: np.ndarray, u: np.ndarray, width: float, depth: float) -> _Frame:
    if width <= 0:  # no rectangle to speak of
        c = poly.centroid
        return _Frame((c.x, c.y), (1.0, 0.0), max(poly.length / 2, 0.01), 0.01)
    # A fixed direction for the same rectangle whatever its vertex order: +x, or +y when vertical.
    if u[0] < -1e-9 or (abs(u[0]) <= 1e-9 and u[1] < 0):
        u = -u
    return _Frame((float(centre[0]), float(centre[1])), (float(u[0]), float(u[1])), width, depth)


# --- homes -----------------------------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What :func:`export_home` wrote.

    ``prim_counts``: things by semantic class (the top-most prim of each
    class, see :func:`semantic_class_counts`). ``errors`` / ``warnings``:
    validation messages (:func:`validate_stage_report`), ``None`` when the
    export was not validated. ``seconds``: time to build and write the file;
    ``validation_seconds``: time to validate it.
    """

    path: Path
    bytes: int
    prim_counts: dict[str, int]
    errors: list[str] | None
    warnings: list[str] | None
    seconds: float
    validation_seconds: float = 0.0

    @property
    def valid(self) -> bool:
        return self.errors is not None and not self.errors


_GARAGE_LEAF_ORDER = Vt.TokenArray(["xformOp:translate:joint"])
_DOOR_LEAF_ORDER = Vt.TokenArray(["xformOp:rotateZ:joint"])


def _door_leaf(parent: Sdf.PrimSpec, o: Opening, w: float) -> None:
    """A door's leaf, ``w`` wide, as a rigid body on a joint: hinged at the prim's origin,
    or sliding up for a garage door; open by its ``is_open``."""
    leaf = prim_spec(parent, "leaf")
    half, gap, head = DOOR_LEAF_THICKNESS / 2, DOOR_LEAF_GAP, o.sill + o.height
    garage = o.kind == "garage_door"
    if garage:
        attr(leaf, "xformOp:translate:joint", TYPES.Double3,
             Gf.Vec3d(0.0, 0.0, float(o.height) if o.is_open else 0.0))
        attr(leaf, "xformOpOrder", TYPES.TokenArray, _GARAGE_LEAF_ORDER, uniform=True)
    else:
        attr(leaf, "xformOp:rotateZ:joint", TYPES.Float, DOOR_OPEN_DEG if o.is_open else 0.0)
        attr(leaf, "xformOpOrder", TYPES.TokenArray, _DOOR_LEAF_ORDER, uniform=True)
    apply_apis(leaf, *rigid_body(leaf, DOOR_LEAF_KG_PER_M2.get(o.kind, 10.0) * w * o.height))
    _, colour = look_of(o.kind, "architecture")
    panel = mesh_prim(leaf, "panel", box_mesh(gap, -half, o.sill + gap, w - gap, half, head - gap), colour=colour)
    apply_apis(panel, *collider(panel, "convexHull"))
    if garage:
        joint(parent, "joint", "prismatic", body0=parent.path, body1=leaf.path, axis="z",
              lower=0.0, upper=o.height, local_pos0=(0.0, 0.0, 0.0))
    else:
        joint(parent, "joint", "revolute", body0=parent.path, body1=leaf.path, axis="z",
              lower=0.0, upper=DOOR_OPEN_DEG, local_pos0=(0.0, 0.0, 0.0))


def light_is_on(home: Home, d: Device) -> bool:
    """Whether a light is lit in the home file: its ``on`` field, or a light switch bound to it
    that is on (as the simulator's light model reads them, homeloop.sim.dynamics.light)."""
    if d.fields.get("on") is not None and d.value("on"):
        return True
    return any(s.type == "light_switch" and d.id in s.controls and "on" in s.fields and s.value("on")
               for s in home.devices)


def light_intensity(d: Device, lit: bool) -> float:
    """The SphereLight intensity (nits) of a light device's emitter: its fitting's flux at the
    device's brightness spread over a sphere of :data:`LIGHT_RADIUS` (Lambertian: L = Φ / (4π² r²))."""
    if not lit:
        return 0.0
    brightness = float(d.value("brightness")) / 100.0 if "brightness" in d.fields else 1.0
    flux = LUMENS_BY_MOUNT.get(d.mount, DEFAULT_LUMENS) * brightness
    return round(flux / (4.0 * math.pi ** 2 * LIGHT_RADIUS ** 2), 1)


class _HomeLabels:
    """A home's labels and the materials of its own classes: the rooms' labels of a thing, its
    class counts, and the ``Looks`` material of each class (written once per home)."""

    def __init__(self, home: Home) -> None:
        self.counts: Counter[str] = Counter()
        self.rooms = {r.id: r for r in home.rooms}
        self.looks: dict[str, RGB] = {}
        self.look_paths: dict[str, Sdf.Path] = {}
        self._room_labels_of: dict[tuple[str | None, ...], dict[str, list[str]]] = {}

    def room_labels(self, room_ids: Iterable[str | None]) -> dict[str, list[str]]:
        key = tuple(room_ids)
        found = self._room_labels_of.get(key)
        if found is None:
            rooms = [self.rooms[r] for r in dict.fromkeys(key) if r is not None and r in self.rooms]
            found = {"room": list(dict.fromkeys(r.type.lower() for r in rooms)), "room_id": [r.id for r in rooms]}
            self._room_labels_of[key] = found
        return found

    def thing(self, owner: Sdf.PrimSpec, cls: str, room_ids: Iterable[str | None] = (), counted: bool = True,
              look: tuple[str, RGB] | None = None, apis: tuple[str, ...] = (),
              inherited: frozenset[str] = frozenset()) -> dict[str, list[str]]:
        """Label a thing's top prim (applying ``apis`` first) but for the ``inherited`` taxonomies,
        which it has from the asset it references (:data:`FROM_ASSET`) or from its parent
        (:data:`FROM_PARENT`); with ``look``, bind it the material of that name and colour."""
        labels = {"class": [cls], **self.room_labels(room_ids)}
        own = {k: v for k, v in labels.items() if k not in inherited} if inherited else labels
        if counted:
            self.counts[cls] += 1
        if look is None:
            label(owner, own, before=apis)
            return labels
        label(owner, own, before=apis, after=("MaterialBindingAPI",))
        relationship(owner, "material:binding", self.look_path(*look))
        return labels

    def look_path(self, name: str, colour: RGB) -> Sdf.Path:
        """The path of the ``Looks`` material of this name (each written once per home, after the things)."""
        path = self.look_paths.get(name)
        if path is None:
            prim_name = valid_name(name, "look")
            self.looks.setdefault(prim_name, colour)
            path = self.look_paths[name] = Sdf.Path(f"/{HOME_ROOT}/Looks/{prim_name}")
        return path

    def group(self, parent: Sdf.PrimSpec | Sdf.Layer, name: str) -> Sdf.PrimSpec:
        group = prim_spec(parent, name)
        group.kind = "group" if not isinstance(parent, Sdf.Layer) else "assembly"
        label(group, {"group": [name.lower()]})
        return group

    def floor_z(self, room_ids: Iterable[str]) -> float:
        zs = [self.rooms[r].floor_height for r in room_ids if r in self.rooms]
        return min(zs) if zs else 0.0


class _HomeWriter:
    """Authors one home into an Sdf layer."""

    def __init__(self, home: Home, catalog: Catalog, out_path: Path, assets: dict[str, Path],
                 layer: Sdf.Layer) -> None:
        self.home, self.catalog, self.out_path, self.assets, self.layer = home, catalog, out_path, assets, layer
        self.labels = _HomeLabels(home)
        self.rooms = self.labels.rooms
        self.wall_polys = _footprints(home.walls)
        self.opening_polys = _footprints(home.openings)
        self.bodies = [device_body(home, d) for d in home.devices]
        self._references: dict[str, Sdf.Reference] = {}
        self._folders: dict[Path, str] = {}
        self.materials = HomeMaterials(Sdf.Path(f"/{HOME_ROOT}"))

    # -- the home

    def write(self) -> None:
        home = self.home
        with Sdf.ChangeBlock():
            root = self.labels.group(self.layer, HOME_ROOT)
            attr(root, "homeloop:home_id", TYPES.String, home.home_id, custom=True)
            attr(root, "homeloop:schema_version", TYPES.String, home.schema_version, custom=True)
            attr(root, "homeloop:source", TYPES.String,
                 json.dumps(home.source.model_dump(mode="json"), sort_keys=True), custom=True)
            _physics_scene(root)
            looks = self.labels.group(root, "Looks")
            catalog_materials = self.labels.group(root, HOME_MATERIALS)
            device_visuals = DeviceVisuals(self.catalog, home.home_id, root, self.materials, self._asset_path)
            self._rooms(self.labels.group(root, "Rooms"))
            self._walls(self.labels.group(root, "Walls"))
            self._openings(self.labels.group(root, "Openings"))
            self._fixtures(self.labels.group(root, "Fixtures"))
            self._furniture(self.labels.group(root, "Furniture"))
            self._objects(self.labels.group(root, "Objects"))
            self._devices(self.labels.group(root, "Devices"), device_visuals)
            self._lights(self.labels.group(root, "Lights"))
            self._cameras(self.labels.group(root, "Cameras"))
            for name, colour in sorted(self.labels.looks.items()):
                _material(looks, name, colour)
            self.materials.write(catalog_materials)

    def _rooms(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for room, footprint in zip(self.home.rooms, _footprints(self.home.rooms)):
            owner = prim_spec(group, names(f"room_{room.id}", "room"))
            label(owner, {"group": ["room"], **self.labels.room_labels([room.id])})
            attr(owner, "homeloop:id", TYPES.String, room.id, custom=True)
            attr(owner, "homeloop:name", TYPES.String, room.name, custom=True)
            attr(owner, "homeloop:type", TYPES.String, room.type, custom=True)
            attr(owner, "homeloop:space_class", TYPES.String, room.space_class, custom=True)
            polys = polygons(footprint)
            if not polys:
                continue
            tris = [Triangulation.of(p) for p in polys]  # one triangulation for the floor and the ceiling
            self._surface(owner, "floor", tris, room.floor_height, True, [room.id])
            if room.space_class in ("indoor", "ancillary"):
                self._surface(owner, "ceiling", tris, room.floor_height + room.ceiling_height, False, [room.id])

    def _surface(self, parent: Sdf.PrimSpec, cls: str, tris: list[Triangulation], z: float, up: bool,
                 room_ids: list[str]) -> None:
        """A floor (facing up) or ceiling (facing down) at height ``z``: a static triangle collider."""
        look = look_of(cls, "architecture")
        surface = mesh_prim(parent, cls, MeshData.concat(t.cap(z, up) for t in tris), colour=look[1])
        self.labels.thing(surface, cls, room_ids, look=look, apis=collider(surface, "none"), inherited=FROM_PARENT)

    def _wall_solids(self) -> list[Any]:
        """Each wall's footprint less the openings through it."""
        solids = list(self.wall_polys)
        cuts = _intersecting(self.wall_polys, self.opening_polys)
        for i, near in cuts.items():
            solids[i] = shapely.difference(solids[i], shapely.union_all([self.opening_polys[j] for j in near]))
        return solids

    def _walls(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        look = look_of("wall", "architecture")
        base = self.labels.floor_z(self.rooms)
        for wall, solid in zip(self.home.walls, self._wall_solids()):
            data = MeshData.concat(prism(p, base, base + wall.height) for p in polygons(solid))
            if not len(data.counts):
                continue
            owner = mesh_prim(group, names(wall.id, "wall"), data, colour=look[1])
            self.labels.thing(owner, "wall", look=look, apis=collider(owner, "none"))
            attr(owner, "homeloop:id", TYPES.String, wall.id, custom=True)
            attr(owner, "homeloop:kind", TYPES.String, wall.kind, custom=True)

    def _openings(self, group: Sdf.PrimSpec) -> None:
        walls = self.home.walls
        near = _intersecting(self.opening_polys, self.wall_polys)
        frames = _opening_frames(self.opening_polys)
        names = Names()
        for i, (opening, poly) in enumerate(zip(self.home.openings, self.opening_polys)):
            self._opening(group, names(opening.id, "opening"), opening, poly, frames[i],
                          [walls[j] for j in near.get(i, ())])

    def _opening(self, group: Sdf.PrimSpec, name: str, o: Opening, poly: Polygon, frame: _Frame,
                 walls: list[Wall]) -> None:
        """A door or window: its prim at the hinge (doors) or centre (windows), the wall
        around it, the floor through it, and a pane or a hinged (garage doors: sliding) leaf."""
        cls = "window" if o.kind == "window" else o.kind
        owner = prim_spec(group, name)
        self.labels.thing(owner, cls, o.connects, look=look_of(cls, "architecture"))
        is_door = o.kind != "window"
        # Doors stand at the hinge (one end of the opening, mid-thickness); windows at the centre.
        origin = frame.end(-1.0) if is_door else frame.centre
        pose_ops(owner, (origin[0], origin[1], self.labels.floor_z(o.connects)), frame.yaw)
        _opening_attrs(owner, o)
        # The opening's own footprint, in the prim's frame.
        local = polygons(affinity.rotate(affinity.translate(poly, -origin[0], -origin[1]),
                                         -frame.yaw, origin=(0, 0), use_radians=True))
        self._opening_surround(owner, o, local, walls)
        if o.sill <= FLOOR_LEVEL_SILL and local:
            self._threshold(owner, o, local)
        if is_door:
            _door_leaf(owner, o, frame.width)
            return
        half, w, gap = WINDOW_PANE_THICKNESS / 2, frame.width, DOOR_LEAF_GAP
        pane = mesh_prim(owner, "pane", box_mesh(-w / 2 + gap, -half, o.sill, w / 2 - gap, half, o.sill + o.height),
                         colour=look_of("window", "architecture")[1])
        apply_apis(pane, *collider(pane, "convexHull"))

    def _threshold(self, parent: Sdf.PrimSpec, o: Opening, local: list[Polygon]) -> None:
        """The floor through an opening at floor level (its footprint at the prim's base, the
        lower room's floor), part of the floor collider: no slot the wall's thickness deep."""
        look = look_of("floor", "architecture")
        floor = mesh_prim(parent, "threshold", MeshData.concat(Triangulation.of(p).cap(0.0, up=True) for p in local),
                          colour=look[1])
        self.labels.thing(floor, "floor", o.connects, look=look, apis=collider(floor, "none"), inherited=FROM_PARENT)

    def _opening_surround(self, parent: Sdf.PrimSpec, o: Opening, local: list[Polygon], walls: list[Wall]) -> None:
        """The wall around an opening (footprint ``local``, in its prim's frame): above the head
        up to the walls' top, and below the sill of windows."""
        wall_top = max((w.height for w in walls if w.kind == "WALL"), default=0.0) or max(
            (self.rooms[r].ceiling_height for r in o.connects if r in self.rooms), default=2.6)
        head = o.sill + o.height
        pieces = []
        for p in local:
            if head < wall_top - 1e-6:
                pieces.append(prism(p, head, wall_top))
            if o.sill > 1e-6:
                pieces.append(prism(p, 0.0, o.sill))
        surround = MeshData.concat(pieces)
        if len(surround.counts):
            look = look_of("wall", "architecture")
            wall = mesh_prim(parent, "wall", surround, colour=look[1])
            self.labels.thing(wall, "wall", o.connects, look=look, apis=collider(wall, "none"), inherited=FROM_PARENT)

    def _fixtures(self, group: Sdf.PrimSpec) -> None:
        """Each fixture as an ``Xform``: its prism (guide purpose, the collider the geometric
        backend and navigation hold) and its visual (render purpose,
        :func:`homeloop.core.visuals.fixtures.fixture_visuals`): its parts of one catalog material,
        as the home picks each role's, one mesh named after the material and bound to it (no
        fixture part moves, so none needs a prim of its own)."""
        names = Names()
        visuals = {x.id: parts for x, parts in fixture_visuals(self.home)}
        for x, footprint in zip(self.home.fixtures, _footprints(self.home.fixtures)):
            base = self.labels.floor_z([x.room])
            data = MeshData.concat(prism(p, base, base + x.height) for p in polygons(footprint))
            if not len(data.counts):
                continue
            owner = prim_spec(group, names(x.id, "fixture"))
            self.labels.thing(owner, x.kind, [x.room])
            look = look_of(x.kind, "fixture")
            body = mesh_prim(owner, FIXTURE_BODY, data, colour=look[1])
            purpose(body, GUIDE)
            apply_apis(body, *collider(body, "none"), BINDING_API)
            bind(body, self.labels.look_path(*look))
            lift = np.eye(4)
            lift[2, 3] = base
            chosen = _Chosen(self, x.kind, variant_of(self.home.home_id, x.id))
            visual_group(owner, chosen.merged(part_meshes(visuals.get(x.id, []))), chosen, lift)
            attr(owner, "homeloop:id", TYPES.String, x.id, custom=True)
            attr(owner, "homeloop:kind", TYPES.String, x.kind, custom=True)
            attr(owner, "homeloop:room", TYPES.String, x.room, custom=True)

    def _asset_path(self, key: str) -> str:
        """The path of the build's asset of ``key`` (a catalog id, or a device type's
        :func:`~homeloop.pipeline.usd.device_types.device_asset_key`) relative to the home's file."""
        if key not in self.assets:
            raise UsdExportError(f"home {self.home.home_id}: no USD asset for catalog id {key!r}")
        asset = self.assets[key]
        folder = self._folders.get(asset.parent)
        if folder is None:  # the assets share a folder or a few: one relative path each
            folder = self._folders[asset.parent] = os.path.relpath(asset.parent, self.out_path.parent)
        rel = os.path.join(folder, asset.name).replace(os.sep, "/")
        return rel if rel.startswith(".") else f"./{rel}"

    def _reference(self, group: Sdf.PrimSpec, name: str, catalog_id: str) -> Sdf.PrimSpec:
        """A prim referencing the catalog asset (by a path relative to the home's file)."""
        ref = self._references.get(catalog_id)
        if ref is None:
            ref = self._references[catalog_id] = Sdf.Reference(self._asset_path(catalog_id))
        owner = prim_spec(group, name, "")
        owner.referenceList.Prepend(ref)
        return owner

    def _furniture(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for f in self.home.furniture:
            owner = self._reference(group, names(f.id, "item"), f.catalog_id)
            pose_ops(owner, (f.pose.x, f.pose.y, f.pose.z), f.pose.yaw, order_from_asset=True)
            entry = self.catalog.furniture.get(f.catalog_id)
            # The asset's root carries its entry's class: the item's, as made from the catalog.
            same = entry is not None and entry.semantic_class == f.semantic_class
            self.labels.thing(owner, f.semantic_class, [f.room], inherited=FROM_ASSET if same else NONE)
            attr(owner, "homeloop:id", TYPES.String, f.id, custom=True)
            attr(owner, "homeloop:room", TYPES.String, f.room, custom=True)
            if entry is not None:
                _choose_materials(owner, self.catalog, self.home.home_id, entry, f.id)
                _part_states(owner, entry, f)

    def _objects(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for obj in self.home.objects:
            owner = self._reference(group, names(obj.id, "item"), obj.catalog_id)
            pose_ops(owner, (obj.pose.x, obj.pose.y, obj.pose.z), obj.pose.yaw, order_from_asset=True)
            entry = self.catalog.objects.get(obj.catalog_id)
            same = entry is not None and entry.semantic_class == obj.semantic_class
            self.labels.thing(owner, obj.semantic_class, [obj.location.room], inherited=FROM_ASSET if same else NONE)
            if entry is not None:
                _choose_materials(owner, self.catalog, self.home.home_id, entry, obj.id, obj.colour or entry.colour)
            attr(owner, "homeloop:id", TYPES.String, obj.id, custom=True)
            attr(owner, "homeloop:room", TYPES.String, obj.location.room, custom=True)
            attr(owner, "homeloop:location", TYPES.String,
                 json.dumps(obj.location.model_dump(mode="json"), sort_keys=True), custom=True)

    def _devices(self, group: Sdf.PrimSpec, visuals: DeviceVisuals) -> None:
        """Each device as an ``Xform`` named after it at its pose, referencing its type's facts
        (its type asset, :mod:`.device_types`) and its look, body box and visual
        (:class:`DeviceVisuals`, materials by variant selection); without a look where it has no
        body (a built-in or worn device). A device whose type facts are not its catalog type's
        authors them itself."""
        names = Names()
        for d, body in zip(self.home.devices, self.bodies):
            owner = prim_spec(group, names(d.id, "device"))
            facts = TypeFacts.of(d)
            typed = facts == catalog_facts(self.catalog, d.type)
            pose_ops(owner, (d.pose.x, d.pose.y, d.pose.z), d.pose.yaw, order_from_asset=typed)
            refs = [self._type_reference(d.type)] if typed else []
            if body is not None:
                look, chosen = visuals.reference(d, body)
                refs.append(look)
                for role, option in chosen.items():
                    owner.variantSelections[role] = option
            owner.referenceList.prependedItems = refs
            self.labels.thing(owner, d.type, [d.room], inherited=FROM_ASSET if typed else NONE)
            if not typed:
                type_facts(owner, facts)
            device_facts(owner, d, catalog_defaults(self.catalog, d.type) if typed else None)

    def _type_reference(self, device_type: str) -> Sdf.Reference:
        """The reference to a device type's asset (its facts, the default prim)."""
        key = device_asset_key(device_type)
        ref = self._references.get(key)
        if ref is None:
            ref = self._references[key] = Sdf.Reference(self._asset_path(key))
        return ref

    def _lights(self, group: Sdf.PrimSpec) -> None:
        """A SphereLight just under each ceiling light's body, lit as the home file says."""
        names = Names()
        for d, body in zip(self.home.devices, self.bodies):
            if d.type != "light" or d.mount != "ceiling":
                continue
            _light(prim_spec(group, names(d.id, "light"), "SphereLight"), d, body,
                   self.labels.room_labels([d.room]), light_is_on(self.home, d))

    def _cameras(self, group: Sdf.PrimSpec) -> None:
        names = Names()
        for cam in self.home.cameras:
            owner = prim_spec(group, names(cam.id, "camera"), "Camera")
            _camera(owner, cam)
            self.labels.thing(owner, "camera", [cam.room])
            attr(owner, "homeloop:room", TYPES.String, cam.room, custom=True)


@dataclass(frozen=True)
class _Chosen:
    """Binds a fixture's visual parts to the catalog materials the home picks for its kind."""

    writer: "_HomeWriter"
    kind: str
    variant: int

    def bind(self, part: Sdf.PrimSpec, role: str) -> None:
        w = self.writer
        bind(part, w.materials.path(material_of(w.catalog, self.kind, role, self.variant)))

    def merged(self, parts: list[PartMesh]) -> list[PartMesh]:
        """The parts of one chosen material as one, named after it (in the order first met)."""
        by_material: dict[str, list[PartMesh]] = {}
        for p in parts:
            by_material.setdefault(material_of(self.writer.catalog, self.kind, p.role, self.variant).id, []).append(p)
        return [PartMesh(material, same[0].role, None, MeshData.concat(p.data for p in same))
                for material, same in by_material.items()]


def _choose_materials(owner: Sdf.PrimSpec, catalog: Catalog, home_id: str, entry: FurnitureEntry | ObjectEntry,
                      item_id: str, colour: str | None = None) -> None:
    """An item's material of each role its asset offers a choice of: a variant selection, the
    palette's pick by the home's and the item's ids (:func:`role_choice`, as the CPU renderer)."""
    roles = variant_roles(catalog, entry)
    if roles:
        variant = variant_of(home_id, item_id)
        for role in roles:
            owner.variantSelections[role] = role_choice(catalog, entry.semantic_class, role, variant, colour)


def _part_states(owner: Sdf.PrimSpec, entry: FurnitureEntry, f: Any) -> None:
    """Each articulated part's present state, over the asset's part prims (named as there)."""
    part_names = asset_names(entry)
    for part in f.parts:
        spec = next((p for p in entry.parts if p.name == part.name), None)
        pname = part_names(part.name, "part")
        if spec is None:
            continue
        over = prim_spec(owner, pname, "", Sdf.SpecifierOver)
        attr(over, "homeloop:state", TYPES.Float, float(part.state), custom=True)
        if part.is_open:
            op = joint_op_name(spec.kind, spec.axis)
            if spec.kind == "revolute":
                attr(over, op, TYPES.Float, deg(part.state))
            else:
                attr(over, op, TYPES.Double3, JOINT_AXIS[spec.axis] * float(part.state))


def _footprints(items: Sequence[Any]) -> list[Any]:
    """The items' home-file polygons made valid (``buffer(0)``), in one vectorised call."""
    polys = np.array([polygon_from_rings(x.polygon) for x in items], dtype=object)
    return shapely.buffer(polys, 0).tolist() if len(polys) else []


def _intersecting(geoms: list[Any], others: list[Any]) -> dict[int, list[int]]:
    """For each of ``geoms`` that meets some of ``others``: their indices, in query order."""
    found: dict[int, list[int]] = {}
    if geoms and others:
        for i, j in shapely.STRtree(others).query(geoms, predicate="intersects").T.tolist():
            found.setdefault(i, []).append(j)
    return found


def _opening_attrs(owner: Sdf.PrimSpec, o: Opening) -> None:
    for key, value, t in (("id", o.id, TYPES.String), ("kind", o.kind, TYPES.String),
                          ("width", o.width, TYPES.Double), ("sill", o.sill, TYPES.Double),
                          ("height", o.height, TYPES.Double), ("lockable", o.lockable, TYPES.Bool),
                          ("openable", o.openable, TYPES.Bool), ("exterior", o.exterior, TYPES.Bool),
                          ("is_open", o.is_open, TYPES.Bool)):
        attr(owner, f"homeloop:{key}", t, value, custom=True)
    attr(owner, "homeloop:connects", TYPES.StringArray, Vt.StringArray(list(o.connects)), custom=True)


def _light(owner: Sdf.PrimSpec, d: Device, body: Box | None, room_labels: dict[str, list[str]], lit: bool) -> None:
    """A ceiling light's emitter just under its body (``body``, in the device's frame)."""
    below = (body[2] if body is not None else 0.0) - LIGHT_GAP - LIGHT_RADIUS
    pose_ops(owner, (d.pose.x, d.pose.y, d.pose.z + below))
    label(owner, {"group": ["light"], **room_labels})
    attr(owner, "inputs:radius", TYPES.Float, LIGHT_RADIUS)
    attr(owner, "inputs:intensity", TYPES.Float, light_intensity(d, lit))
    attr(owner, "inputs:enableColorTemperature", TYPES.Bool, True)
    attr(owner, "inputs:colorTemperature", TYPES.Float, LIGHT_COLOUR_TEMPERATURE)
    attr(owner, "homeloop:device", TYPES.String, d.id, custom=True)
    attr(owner, "homeloop:room", TYPES.String, d.room or "", custom=True)
    attr(owner, "homeloop:on", TYPES.Bool, lit, custom=True)


def _physics_scene(root: Sdf.PrimSpec) -> None:
    """The home's physics scene: gravity along -Z at :data:`GRAVITY` (the stage is in metres)."""
    scene = prim_spec(root, "PhysicsScene", "PhysicsScene")
    attr(scene, "physics:gravityDirection", TYPES.Vector3f, Gf.Vec3f(0.0, 0.0, -1.0))
    attr(scene, "physics:gravityMagnitude", TYPES.Float, GRAVITY)
    label(scene, {"group": ["physics"]})


def _material(looks: Sdf.PrimSpec, name: str, colour: RGB) -> None:
    """A class's UsdPreviewSurface material of one colour (translucent for glass), authored
    afresh in every home (:func:`homeloop.pipeline.usd.author.preview_material`)."""
    preview_material(looks, name, colour, MATERIAL_ROUGHNESS, opacity=GLASS_OPACITY if name == "window" else None)


def camera_rotate_xyz(yaw: float, pitch: float) -> tuple[float, float, float]:
    """``xformOp:rotateXYZ`` (degrees) that points a USD camera (looking down -Z,
    +Y up) along heading ``yaw`` and tilt ``pitch`` (radians, negative looks down)."""
    return (deg(math.pi / 2 + pitch), 0.0, deg(yaw - math.pi / 2))


def focal_length_for(hfov_deg: float, horizontal_aperture: float = CAMERA_HORIZONTAL_APERTURE) -> float:
    """The focal length giving ``hfov_deg`` across ``horizontal_aperture``."""
    return horizontal_aperture / (2.0 * math.tan(math.radians(hfov_deg) / 2.0))


_CAMERA_OP_ORDER = Vt.TokenArray(["xformOp:translate", "xformOp:rotateXYZ"])


def _camera(owner: Sdf.PrimSpec, cam: Camera) -> None:
    p = cam.pose
    attr(owner, "xformOp:translate", TYPES.Double3, Gf.Vec3d(p.x, p.y, p.z))
    attr(owner, "xformOp:rotateXYZ", TYPES.Float3, Gf.Vec3f(*camera_rotate_xyz(p.yaw, p.pitch)))
    attr(owner, "xformOpOrder", TYPES.TokenArray, _CAMERA_OP_ORDER, uniform=True)
    width, height = cam.resolution
    attr(owner, "projection", TYPES.Token, "perspective")
    attr(owner, "horizontalAperture", TYPES.Float, CAMERA_HORIZONTAL_APERTURE)
    attr(owner, "verticalAperture", TYPES.Float, round(CAMERA_HORIZONTAL_APERTURE * height / width, 5))
    attr(owner, "focalLength", TYPES.Float, round(focal_length_for(cam.hfov_deg), 5))
    attr(owner, "clippingRange", TYPES.Float2, Gf.Vec2f(*CAMERA_CLIPPING))
    attr(owner, "homeloop:id", TYPES.String, cam.id, custom=True)
    attr(owner, "homeloop:resolution", TYPES.Int2, Gf.Vec2i(int(width), int(height)), custom=True)
    attr(owner, "homeloop:hfov_deg", TYPES.Double, float(cam.hfov_deg), custom=True)
    attr(owner, "homeloop:privacy_mode", TYPES.String, cam.privacy_mode, custom=True)
    attr(owner, "homeloop:agent_visible", TYPES.Bool, cam.agent_visible, custom=True)



def home_usd_path(homes_dir: str | os.PathLike[str], home_id: str, usda: bool = False) -> Path:
    """``<homes_dir>/<home_id>/home.usdc`` (or ``.usda``)."""
    return Path(homes_dir) / home_id / ("home.usda" if usda else "home.usdc")


def export_home(home: Home, catalog: Catalog, out_path: str | os.PathLike[str], *, assets: dict[str, Path],
                usda: bool = False, validate: bool = True) -> ExportResult:
    """Write ``home`` as a USD stage at ``out_path`` referencing ``assets``
    (from :func:`write_catalog_assets`, written beforehand).

    ``out_path`` gets the extension ``.usdc`` (or ``.usda`` with ``usda``).
    With ``validate``, the written file is checked by :func:`validate_stage_report`
    and the result carries its errors and warnings.
    """
    start = time.perf_counter()
    path = Path(out_path).with_suffix(".usda" if usda else ".usdc")
    with layer_file(path, HOME_ROOT) as layer:
        writer = _HomeWriter(home, catalog, path, {k: Path(v) for k, v in assets.items()}, layer)
        writer.write()
    size = path.stat().st_size
    seconds = time.perf_counter() - start
    result = ExportResult(path=path, bytes=size, prim_counts=dict(sorted(writer.labels.counts.items())),
                          errors=None, warnings=None, seconds=seconds)
    if validate:
        t0 = time.perf_counter()
        report = validate_stage_report(path)
        result.errors, result.warnings = report.errors, report.warnings
        result.validation_seconds = time.perf_counter() - t0
    return result
