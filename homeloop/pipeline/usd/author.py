"""Sdf authoring for the USD export (homeloop/pipeline/usd/): prims, attributes, API
schemas, semantic labels, transforms, meshes, colliders, rigid bodies, joints,
purposes, ``UsdPreviewSurface`` materials, material face subsets and variant
sets written straight into Sdf layers, and the mesh geometry (boxes, polygon
caps, extruded prisms) they carry. docs/pipeline.md ("USD homes")
says what the files hold.

How it stays fast (a home is thousands of specs; benchmarks/usd_export.py
measures it):

- Sdf specs, not Usd stages or schema classes: an order of magnitude faster,
  and the layer is written exactly as authored.
- A prim's API schemas go into one list op (:func:`label` takes the
  others with the label schemas): reading the op back and rewriting it per
  schema costs more than the prim's attributes.
- Values reach Sdf as the Gf / Vt type of their attribute: Sdf converts a
  Python tuple by trying type after type, which doubles an attribute's cost.
- Mesh arrays go to Vt from numpy in one call each; a prism is triangulated
  once for both its caps.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import mapbox_earcut
import numpy as np
import shapely
from pxr import Gf, Sdf, Tf, Usd, Vt
from shapely import Polygon
from shapely.geometry.base import BaseGeometry

from homeloop.core.io import atomic_path

TYPES = Sdf.ValueTypeNames
RGB = tuple[float, float, float]

#: Layer metadata written on every file (and nothing else: no doc string, no timestamps).
STAGE_METERS_PER_UNIT = 1.0
STAGE_UP_AXIS = "Z"

#: API schemas of a collider mesh, and of a rigid body with a mass (see :func:`collider`, :func:`rigid_body`).
COLLIDER_APIS = ("PhysicsCollisionAPI", "PhysicsMeshCollisionAPI")
RIGID_BODY_APIS = ("PhysicsRigidBodyAPI", "PhysicsMassAPI")

_TRANSLATE = "xformOp:translate"
_ORDER_TRANSLATE = Vt.TokenArray([_TRANSLATE])
_ORDER_TRANSLATE_YAW = Vt.TokenArray([_TRANSLATE, "xformOp:rotateZ"])
#: The transform of a thing at its pose (:func:`pose_ops`): ``translate`` then ``rotateZ``.
POSE_OP_ORDER = _ORDER_TRANSLATE_YAW


class UsdExportError(RuntimeError):
    """A home or asset that cannot be exported (missing catalog entry or asset, a file not written)."""


# --- names, prims, attributes ---------------------------------------------------------------------


@lru_cache(maxsize=8192)
def valid_name(text: str, prefix: str) -> str:
    """A prim name for an id: ids such as "1" or "bath-2" are not valid USD identifiers."""
    name = Tf.MakeValidIdentifier(str(text))
    return name if name[0].isalpha() else f"{prefix}_{name}".replace("__", "_")


class Names:
    """Unique, valid child names within one parent."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def __call__(self, text: str, prefix: str) -> str:
        base = valid_name(text, prefix)
        name, n = base, 1
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._used.add(name)
        return name


def prim_spec(parent: Sdf.PrimSpec | Sdf.Layer, name: str, type_name: str = "Xform",
              specifier: Sdf.Specifier = Sdf.SpecifierDef) -> Sdf.PrimSpec:
    owner = parent.pseudoRoot if isinstance(parent, Sdf.Layer) else parent
    return Sdf.PrimSpec(owner, name, specifier, type_name)


def attr(owner: Sdf.PrimSpec, name: str, type_name: Sdf.ValueTypeName, value: Any = None, *,
         uniform: bool = False, custom: bool = False) -> Sdf.AttributeSpec:
    """An attribute with its default ``value`` (none when None): pass vectors as Gf values."""
    spec = Sdf.AttributeSpec(owner, name, type_name,
                             Sdf.VariabilityUniform if uniform else Sdf.VariabilityVarying, custom)
    if value is not None:
        spec.default = value
    return spec


def relationship(owner: Sdf.PrimSpec, name: str, target: Sdf.Path) -> None:
    spec = Sdf.RelationshipSpec(owner, name, False)
    spec.targetPathList.explicitItems = [target]


@lru_cache(maxsize=1024)
def _prepended(schemas: tuple[str, ...]) -> Sdf.TokenListOp:
    return Sdf.TokenListOp.Create(prependedItems=list(dict.fromkeys(schemas)))


def apply_apis(owner: Sdf.PrimSpec, *schemas: str) -> None:
    """Apply API schemas (prepended, as Usd's Apply() authors them) after any already applied."""
    if not schemas:
        return
    if owner.HasInfo("apiSchemas"):
        current = tuple(owner.GetInfo("apiSchemas").prependedItems)
        schemas = current + tuple(s for s in schemas if s not in current)
    owner.SetInfo("apiSchemas", _prepended(schemas))


def label(owner: Sdf.PrimSpec, values: dict[str, list[str]], *, before: Sequence[str] = (),
          after: Sequence[str] = ()) -> None:
    """UsdSemantics LabelsAPI instances, one per taxonomy with labels. Sets the prim's API
    schemas in one list op: ``before``, the label schemas, ``after`` (label a prim once, before
    any :func:`apply_apis`)."""
    taxonomies = tuple(t for t in values if values[t])
    owner.SetInfo("apiSchemas", _prepended((*before, *_label_apis(taxonomies), *after)))
    for t in taxonomies:
        attr(owner, f"semantics:labels:{t}", TYPES.TokenArray, values[t])


@lru_cache(maxsize=64)
def _label_apis(taxonomies: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"SemanticsLabelsAPI:{t}" for t in taxonomies)


# --- purposes, materials, subsets, variants ----------------------------------------------------------

#: Purposes (UsdGeom.Imageable): what renderers draw, and what only tools show (the colliders).
RENDER = "render"
GUIDE = "guide"
#: The API schema of a prim with a ``material:binding``.
BINDING_API = "MaterialBindingAPI"


def purpose(owner: Sdf.PrimSpec, value: str) -> None:
    """The prim's purpose (inherited by the prims below it that author none)."""
    attr(owner, "purpose", TYPES.Token, value, uniform=True)


def bind(owner: Sdf.PrimSpec, material: Sdf.Path) -> None:
    """Bind a material (the caller applies :data:`BINDING_API` with the prim's other schemas)."""
    relationship(owner, "material:binding", material)


def preview_material(parent: Sdf.PrimSpec, name: str, colour: Sequence[float], roughness: float, *,
                     metallic: float | None = None, opacity: float | None = None,
                     labels: dict[str, list[str]] | None = None) -> Sdf.PrimSpec:
    """A ``UsdPreviewSurface`` material (a Material with its ``surface`` shader; labelled where
    ``labels`` are given, else its group's labels are its), authored afresh:
    a spec copied with Sdf.CopySpec gets its fields in the order of their tokens' addresses, which
    differ between processes, and so would the crate bytes."""
    material = prim_spec(parent, name, "Material")
    shader = prim_spec(material, "surface", "Shader")
    attr(shader, "info:id", TYPES.Token, "UsdPreviewSurface", uniform=True)
    attr(shader, "inputs:diffuseColor", TYPES.Color3f, Gf.Vec3f(*(float(c) for c in colour)))
    attr(shader, "inputs:roughness", TYPES.Float, float(roughness))
    if metallic is not None:
        attr(shader, "inputs:metallic", TYPES.Float, float(metallic))
    if opacity is not None:
        attr(shader, "inputs:opacity", TYPES.Float, float(opacity))
    out = attr(shader, "outputs:surface", TYPES.Token)
    surface = attr(material, "outputs:surface", TYPES.Token)
    surface.connectionPathList.explicitItems = [out.path.StripAllVariantSelections()]
    if labels:
        label(material, labels)
    return material


def face_ranges(counts: Sequence[int]) -> list[Vt.IntArray]:
    """The face indices of pieces of a mesh laid one after the other, ``counts`` faces each."""
    starts = np.cumsum([0, *counts])
    return [Vt.IntArray.FromNumpy(np.arange(a, b, dtype=np.int32)) for a, b in zip(starts[:-1], starts[1:])]


def material_subsets(mesh: Sdf.PrimSpec, pieces: Sequence[tuple[str, Vt.IntArray, Sdf.Path]]) -> None:
    """Face subsets of a mesh: each piece (its name, its faces, its material) one ``GeomSubset``
    of the ``materialBind`` family bound to its material (a partition: every face in exactly one;
    the mesh's labels are theirs)."""
    attr(mesh, "subsetFamily:materialBind:familyType", TYPES.Token, "partition", uniform=True)
    for name, faces, material in pieces:
        subset = prim_spec(mesh, name, "GeomSubset")
        attr(subset, "elementType", TYPES.Token, "face", uniform=True)
        attr(subset, "familyName", TYPES.Token, "materialBind", uniform=True)
        attr(subset, "indices", TYPES.IntArray, faces)
        apply_apis(subset, BINDING_API)
        bind(subset, material)


def variant_over(root: Sdf.PrimSpec, variant_set: str, variant: str, path: Sequence[str]) -> Sdf.PrimSpec:
    """The ``over`` of the prim at ``path`` (names below ``root``) inside ``root``'s variant
    ``variant`` of ``variant_set``, made with the set, the variant and the overs above it where
    they are missing."""
    sets = root.variantSets
    vset = sets[variant_set] if variant_set in sets else Sdf.VariantSetSpec(root, variant_set)
    found = [v for v in vset.variants if v.name == variant]
    spec = (found[0] if found else Sdf.VariantSpec(vset, variant)).primSpec
    for name in path:
        children = spec.nameChildren
        spec = children[name] if name in children else Sdf.PrimSpec(spec, name, Sdf.SpecifierOver)
    return spec


def deg(rad: float) -> float:
    return round(math.degrees(rad), 4) + 0.0


def pose_defaults(owner: Sdf.PrimSpec) -> None:
    """An asset root's pose ops at rest (no translation, no turn, :data:`POSE_OP_ORDER`): a prim
    referencing it authors its translate and a turn other than zero (:func:`pose_ops`)."""
    attr(owner, _TRANSLATE, TYPES.Double3, Gf.Vec3d(0.0, 0.0, 0.0))
    attr(owner, "xformOp:rotateZ", TYPES.Float, 0.0)
    attr(owner, "xformOpOrder", TYPES.TokenArray, POSE_OP_ORDER, uniform=True)


def pose_ops(owner: Sdf.PrimSpec, translate: Sequence[float], yaw_rad: float | None = None, *,
             order_from_asset: bool = False) -> None:
    """``translate`` then, with a yaw, ``rotateZ`` (degrees). With ``order_from_asset``, the op
    order (:data:`POSE_OP_ORDER`) and a zero turn come from an asset the prim references
    (:func:`pose_defaults`): only the translate, and a turn other than zero, are authored."""
    attr(owner, _TRANSLATE, TYPES.Double3, Gf.Vec3d(*translate))
    if order_from_asset:
        if yaw_rad:
            attr(owner, "xformOp:rotateZ", TYPES.Float, deg(yaw_rad))
        return
    if yaw_rad is None:
        attr(owner, "xformOpOrder", TYPES.TokenArray, _ORDER_TRANSLATE, uniform=True)
        return
    attr(owner, "xformOp:rotateZ", TYPES.Float, deg(yaw_rad))
    attr(owner, "xformOpOrder", TYPES.TokenArray, _ORDER_TRANSLATE_YAW, uniform=True)


# --- layers ------------------------------------------------------------------------------------------


@contextmanager
def layer_file(path: Path, default_prim: str) -> Iterator[Sdf.Layer]:
    """A new layer for ``path`` (.usdc or .usda by its extension) with the stage metadata,
    written atomically when the block ends (homeloop.core.io: a temporary file with the same
    extension, then a rename; the mode of any output).

    The layer is authored in memory, in the file's own format, and exported: a layer created
    at its file (a crate layer saving its own data) writes its specs in an order that depends
    on what the process did before, so the same home could give other bytes in a long-lived
    worker. An anonymous layer exports its specs in namespace order, the same bytes whichever
    format it is held in; held as crate data, a home's export to .usdc takes less CPU than held
    as text data (benchmarks/usd_export.py prints the export CPU).
    """
    layer = Sdf.Layer.CreateAnonymous(path.suffix)
    layer.pseudoRoot.SetInfo("metersPerUnit", STAGE_METERS_PER_UNIT)
    layer.pseudoRoot.SetInfo("upAxis", STAGE_UP_AXIS)
    layer.defaultPrim = default_prim
    yield layer
    with atomic_path(path, suffix=path.suffix) as tmp:
        if not layer.Export(str(tmp)):
            raise UsdExportError(f"could not write {path}")
    # A layer already open for this path (from an earlier export) must not shadow the new file.
    opened = Sdf.Layer.Find(str(path))
    if opened is not None:
        opened.Reload(force=True)


# --- meshes and physics -----------------------------------------------------------------------------


@dataclass
class MeshData:
    """Polygonal mesh data: points (N x 3 float64), face vertex counts, face vertex indices (int32)."""

    points: np.ndarray
    counts: np.ndarray
    indices: np.ndarray

    @staticmethod
    def empty() -> "MeshData":
        return MeshData(np.zeros((0, 3)), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))

    @staticmethod
    def concat(parts: Iterable["MeshData"]) -> "MeshData":
        """The parts with faces, as one mesh (the points of a part without faces are dropped)."""
        parts = [p for p in parts if len(p.counts)]
        if len(parts) <= 1:
            return parts[0] if parts else MeshData.empty()
        offsets = np.cumsum([0] + [len(p.points) for p in parts[:-1]], dtype=np.int32)
        return MeshData(np.concatenate([p.points for p in parts]),
                        np.concatenate([p.counts for p in parts]),
                        np.concatenate([p.indices + o for p, o in zip(parts, offsets)]))


@lru_cache(maxsize=256)
def _colour_array(colour: RGB) -> Vt.Vec3fArray:
    return Vt.Vec3fArray([Gf.Vec3f(*colour)])


def _int_array(values: np.ndarray) -> Vt.IntArray:
    return Vt.IntArray.FromNumpy(np.ascontiguousarray(values, dtype=np.int32))


@dataclass(frozen=True)
class VtMesh:
    """A mesh's attribute values as Sdf takes them (points rounded to 10 µm): made once, they can
    go to any number of prims (a mesh every home draws the same)."""

    points: Vt.Vec3fArray
    counts: Vt.IntArray
    indices: Vt.IntArray
    extent: Vt.Vec3fArray

    @staticmethod
    def of(data: MeshData) -> "VtMesh":
        pts = np.round(data.points, 5).astype(np.float32)
        return VtMesh(Vt.Vec3fArray.FromNumpy(pts), _int_array(data.counts), _int_array(data.indices),
                      Vt.Vec3fArray.FromNumpy(np.array([pts.min(axis=0), pts.max(axis=0)])))


def mesh_attrs(owner: Sdf.PrimSpec, data: MeshData | VtMesh, colour: RGB | None) -> None:
    """Mesh attributes (points rounded to 10 µm, extent, no subdivision, a constant display
    colour) on a prim made as a ``Mesh``."""
    vt = data if isinstance(data, VtMesh) else VtMesh.of(data)
    attr(owner, "points", TYPES.Point3fArray, vt.points)
    attr(owner, "faceVertexCounts", TYPES.IntArray, vt.counts)
    attr(owner, "faceVertexIndices", TYPES.IntArray, vt.indices)
    attr(owner, "extent", TYPES.Float3Array, vt.extent)
    attr(owner, "subdivisionScheme", TYPES.Token, "none", uniform=True)
    if colour is not None:
        attr(owner, "primvars:displayColor", TYPES.Color3fArray, _colour_array(tuple(colour))
             ).SetInfo("interpolation", "constant")


def mesh_prim(parent: Sdf.PrimSpec, name: str, data: MeshData | VtMesh, *, colour: RGB | None,
              double_sided: bool = False) -> Sdf.PrimSpec:
    owner = prim_spec(parent, name, "Mesh")
    mesh_attrs(owner, data, colour)
    if double_sided:
        attr(owner, "doubleSided", TYPES.Bool, True, uniform=True)
    return owner


@lru_cache(maxsize=1)
def _approximation_fallback() -> str:
    """``PhysicsMeshCollisionAPI``'s approximation where none is authored, as its schema says."""
    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition("PhysicsMeshCollisionAPI")
    return str(definition.GetAttributeFallbackValue("physics:approximation"))


def collider(owner: Sdf.PrimSpec, approximation: str) -> tuple[str, ...]:
    """Collision on a mesh: "none" (the triangle mesh, static geometry only) or "convexHull".
    Authors the approximation where it is not the schema's fallback ("none", which every reader
    of ``PhysicsMeshCollisionAPI`` gets unauthored); returns the API schemas (:data:`COLLIDER_APIS`)
    for the caller to apply with the prim's others."""
    if approximation != _approximation_fallback():
        attr(owner, "physics:approximation", TYPES.Token, approximation, uniform=True)
    return COLLIDER_APIS


def rigid_body(owner: Sdf.PrimSpec, mass: float) -> tuple[str, ...]:
    """A rigid body's mass; returns its API schemas (:data:`RIGID_BODY_APIS`) for the caller to apply."""
    attr(owner, "physics:mass", TYPES.Float, round(float(mass), 4))
    return RIGID_BODY_APIS


def joint(parent: Sdf.PrimSpec, name: str, kind: str, *, body0: Sdf.Path, body1: Sdf.Path, axis: str,
          lower: float, upper: float, local_pos0: Sequence[float]) -> Sdf.PrimSpec:
    """A revolute (limits in degrees) or prismatic (limits in metres) joint (its parent's labels are its).

    Both joint frames are unrotated: frame 0 sits at ``local_pos0`` in
    ``body0``'s frame, frame 1 at the origin of ``body1``, which the caller
    places at the hinge (so the frames meet when the part is closed). Values
    equal to UsdPhysics' fallbacks (no rotation, the origin) are not authored.
    """
    spec = prim_spec(parent, name, "PhysicsRevoluteJoint" if kind == "revolute" else "PhysicsPrismaticJoint")
    relationship(spec, "physics:body0", body0)
    relationship(spec, "physics:body1", body1)
    attr(spec, "physics:axis", TYPES.Token, axis.upper(), uniform=True)
    attr(spec, "physics:lowerLimit", TYPES.Float, round(float(lower), 4) + 0.0)
    attr(spec, "physics:upperLimit", TYPES.Float, round(float(upper), 4) + 0.0)
    # Unrotated frames and body 1's frame at its origin are the schema's fallbacks: not authored.
    if any(local_pos0):
        attr(spec, "physics:localPos0", TYPES.Point3f, Gf.Vec3f(*local_pos0))
    return spec


# --- geometry ------------------------------------------------------------------------------------------


_BOX_FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]],
                      dtype=np.int32).ravel()
_BOX_COUNTS = np.full(6, 4, dtype=np.int32)


def box_mesh(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> MeshData:
    """An axis-aligned box as six outward-facing quads."""
    p = np.array([[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0],
                  [x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]], dtype=np.float64)
    return MeshData(p, _BOX_COUNTS, _BOX_FACES)


def from_trimesh(tm: Any) -> MeshData:
    faces = np.asarray(tm.faces, dtype=np.int32)
    return MeshData(np.asarray(tm.vertices, dtype=np.float64), np.full(len(faces), 3, dtype=np.int32),
                    faces.ravel())


def polygons(geom: BaseGeometry, min_area: float = 1e-6) -> list[Polygon]:
    """The polygons of ``geom`` larger than ``min_area``."""
    parts = [geom] if isinstance(geom, Polygon) else shapely.get_parts(geom).tolist()
    return [g for g in parts if isinstance(g, Polygon) and g.area > min_area]


def rings(poly: Polygon) -> list[np.ndarray]:
    """Rings of ``poly`` without closing points: exterior counter-clockwise, holes clockwise."""
    poly = shapely.geometry.polygon.orient(poly, sign=1.0)
    holes = poly.interiors
    if not len(holes):
        return [shapely.get_coordinates(poly)[:-1]]
    return [np.asarray(r.coords, dtype=np.float64)[:-1, :2] for r in [poly.exterior, *holes]]


def _at_height(verts: np.ndarray, z: float) -> np.ndarray:
    out = np.empty((len(verts), 3))
    out[:, :2] = verts
    out[:, 2] = z
    return out


Triangle = tuple[int, int, int]


@dataclass(frozen=True)
class Triangulation:
    """A polygon's rings (:func:`rings`), their vertices, and the triangles over them facing
    up and facing down (a degenerate triangle keeps its order in both)."""

    loops: list[np.ndarray]
    verts: np.ndarray
    up: list[Triangle]
    down: list[Triangle]

    @staticmethod
    def of(poly: Polygon) -> "Triangulation":
        loops = rings(poly)
        verts = np.concatenate(loops) if len(loops) > 1 else np.ascontiguousarray(loops[0])
        ends = np.array(list(accumulate(len(r) for r in loops)), dtype=np.uint32)
        tris = mapbox_earcut.triangulate_float64(verts, ends).reshape(-1, 3).tolist()
        # Few triangles each: plain Python beats numpy's per-call cost here (same float operations).
        xy, up, down = verts.tolist(), [], []
        for a, b, c in tris:
            (ax, ay), (bx, by), (cx, cy) = xy[a], xy[b], xy[c]
            signed = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
            up.append((c, b, a) if signed < 0 else (a, b, c))
            down.append((c, b, a) if signed > 0 else (a, b, c))
        return Triangulation(loops, verts, up, down)

    def cap(self, z: float, up: bool) -> MeshData:
        """The polygon at height ``z``, facing up (or down)."""
        tris = self.up if up else self.down
        return MeshData(_at_height(self.verts, z), np.full(len(tris), 3, dtype=np.int32),
                        np.array(tris, dtype=np.int32).reshape(-1))


@lru_cache(maxsize=64)
def _side_quads(n: int) -> tuple[int, ...]:
    """The quads joining a ring of ``n`` points (first ``n``) to its copy above (next ``n``)."""
    return tuple(v for i in range(n) for v in (i, (i + 1) % n, (i + 1) % n + n, i + n))


def prism(poly: Polygon, z0: float, z1: float) -> MeshData:
    """A polygon (holes allowed) extruded from ``z0`` to ``z1``: closed, faces outward.
    Points: the bottom cap's, the top cap's, then each ring's bottom and top loop."""
    if z1 - z0 <= 1e-6 or poly.area <= 1e-8:  # (an empty polygon has no area)
        return MeshData.empty()
    tri = Triangulation.of(poly)
    low, high = _at_height(tri.verts, z0), _at_height(tri.verts, z1)
    n, t = len(tri.verts), len(tri.up)
    points = [low, high] if t else []
    indices = [v for f in tri.down for v in f] + [v + n for f in tri.up for v in f]
    base, start = 2 * n if t else 0, 0
    for loop in tri.loops:
        m = len(loop)
        points += [low[start:start + m], high[start:start + m]]
        indices += [v + base for v in _side_quads(m)]
        base, start = base + 2 * m, start + m
    counts = np.full(2 * t + n, 4, dtype=np.int32)
    counts[:2 * t] = 3
    return MeshData(np.concatenate(points), counts, np.array(indices, dtype=np.int32))
