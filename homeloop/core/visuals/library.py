"""External asset libraries: a user's own meshes as the visuals of catalog entries (docs/catalog.md,
"Your own assets").

``homeloop build --assets FILE.yaml`` maps catalog ids to files a user has (USD ``.usd``/``.usda``/
``.usdc``/``.usdz``, glTF ``.gltf``/``.glb``, Wavefront ``.obj``)::

    assets:
      dining_chair: {file: chairs/chair.glb, up_axis: y, front: +z, units_per_metre: 1}

a relative ``file`` read from the YAML's folder. Each asset is read once per build
(:func:`prepare_library`): its meshes (for USD, the render and default purpose meshes, in their
world transforms) are turned into HomeLoop's item frame (z up, +x the front, metres: the
declared ``up_axis``, ``front`` and ``units_per_metre``), centred on its footprint with its base
on z = 0, then scaled by ONE uniform factor to the entry's depth (x), width (y) and height (z):

- the factor is the geometric middle of the three axes' ratios, so the worst axis misses by as
  little as one factor allows; each axis must then come within :data:`FIT_TOLERANCE` of the
  entry's size (a thin axis, under :data:`THIN_SHARE` of the entry's largest size, as a rug's
  height, is not fitted: the asset must stay as thin there);
- the factor itself lies within :data:`MAX_SCALE` either way: a larger one is a unit or axis the
  file does not have (centimetres declared as metres), not a size to fix.

An asset that is missing, unreadable, empty or does not fit, and a mapping for an id the catalog
has no furniture or object entry of, is an :class:`AssetRejection` (one line naming the id and the
file). The build writes what fitted into its folder (:func:`write_library`): ``<id>.glb``, the
fitted mesh, a USD source's file copied beside it (its USD asset references the copy), and
``index.json`` with each source's sha256 and fit and the rejections; an episode on the build
reads that folder (:func:`load_library`), never the user's files. A :class:`VisualLibrary` maps
catalog ids to their visual parts; every id it does not map keeps its built-in visual
(:mod:`homeloop.core.visuals`), and the empty library is the default everywhere.

The collision solids (:func:`homeloop.core.geometry_assets.mesh_for`) stay the catalog's: an
asset changes what cameras and USD renderers show, never what the simulator collides with.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import trimesh
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from homeloop.core.catalog import Catalog, FurnitureEntry, ObjectEntry
from homeloop.core.errors import HomeLoopError
from homeloop.core.io import sha256_file, write_bytes, write_json
from homeloop.core.kept import Kept
from homeloop.core.visuals import TINTED
from homeloop.core.visuals.part import VisualPart

#: How far (a share of the entry's size) each fitted axis may miss after the one uniform scale.
FIT_TOLERANCE = 0.2
#: The most the uniform scale may change an asset's size, either way, after its declared units.
MAX_SCALE = 2.0
#: An entry's axis under this share of its largest size is thin (a rug's height): not fitted.
THIN_SHARE = 0.1
#: Where a build keeps its fitted assets (relative to the build folder), and their index.
LIBRARY_FOLDER = ("assets", "external")
INDEX_FILE = "index.json"
#: The name of the one visual part an external asset becomes.
PART_NAME = "external"
#: File extensions by how they are read.
USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
MESH_SUFFIXES = (".glb", ".gltf", ".obj")

Axis = Literal["+x", "-x", "+y", "-y", "+z", "-z"]
_UNIT = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]), "z": np.array([0.0, 0.0, 1.0])}


class AssetMapping(BaseModel):
    """One mapping of the YAML: the file, which of its axes is up and which way its front faces,
    and how many of its units make a metre (100 for centimetres)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(min_length=1)
    up_axis: Literal["y", "z"]
    front: Axis
    units_per_metre: float = Field(1.0, gt=0)

    @model_validator(mode="after")
    def _front_across_up(self) -> "AssetMapping":
        if self.front[1] == self.up_axis:
            raise ValueError(f"front {self.front} runs along the up axis {self.up_axis}")
        return self

    def rotation(self) -> np.ndarray:
        """The rotation from the file's axes to the item frame's: front to +x, up to +z."""
        front = _UNIT[self.front[1]] * (1.0 if self.front[0] == "+" else -1.0)
        up = _UNIT[self.up_axis]
        return np.vstack([front, np.cross(up, front), up])


class AssetRejection(HomeLoopError):
    """A mapping the build cannot use: its catalog id, its file as the YAML names it (resolved) and why."""

    def __init__(self, catalog_id: str, file: str, reason: str):
        super().__init__(f"asset {catalog_id} ({file}): {reason}")
        self.catalog_id, self.file, self.reason = catalog_id, file, reason

    def __reduce__(self) -> tuple[type["AssetRejection"], tuple[str, str, str]]:
        return AssetRejection, (self.catalog_id, self.file, self.reason)  # pickled by its fields

    def record(self) -> dict[str, str]:
        """The rejection as the build records it: the file's name (not the folders above it) and why."""
        return {"file": Path(self.file).name, "reason": self.reason}


@dataclass(frozen=True)
class AssetFit:
    """How one asset was fitted: its source (as named, its sha256, how it is read), the declared
    frame, the uniform scale, the 4 x 4 matrix from the file's coordinates to the item frame, and
    the entry's size (depth, width, height) with the asset's size after the fit."""

    catalog_id: str
    file: str
    sha256: str
    reader: str  # "usd" or "mesh"
    up_axis: str
    front: str
    units_per_metre: float
    role: str
    scale: float
    matrix: tuple[tuple[float, ...], ...]
    target: tuple[float, float, float]
    fitted: tuple[float, float, float]
    usd_prim: str = ""  # a USD source's prim to show (its default prim, else its first root prim)

    def record(self) -> dict[str, Any]:
        """The fit as JSON-able data (rounded, so the same fit gives the same bytes)."""
        return {"file": self.file, "sha256": self.sha256, "reader": self.reader, "up_axis": self.up_axis,
                "front": self.front, "units_per_metre": self.units_per_metre, "role": self.role,
                "scale": round(self.scale, 9), "matrix": [[round(v, 12) for v in row] for row in self.matrix],
                "target": list(self.target), "fitted": [round(v, 6) for v in self.fitted], "usd_prim": self.usd_prim}


@dataclass(frozen=True)
class FittedAsset:
    """An asset fitted to its entry: the fit, the mesh in the item frame and the resolved source."""

    fit: AssetFit
    mesh: trimesh.Trimesh
    source: Path


@dataclass(frozen=True)
class PreparedLibrary:
    """A mapping file read and fitted (once per build): what fitted and what was rejected, by id."""

    fitted: tuple[FittedAsset, ...]
    rejected: tuple[AssetRejection, ...]

    def parameters(self) -> dict[str, Any]:
        """What of the mapping decides a build's outputs: each source's hash and fit, the rejections."""
        return {"tolerance": FIT_TOLERANCE, "max_scale": MAX_SCALE,
                "fitted": {a.fit.catalog_id: a.fit.record() for a in self.fitted},
                "rejected": {r.catalog_id: r.record() for r in self.rejected}}

    def lines(self) -> list[str]:
        """One line per rejection."""
        return [str(r) for r in self.rejected]


@dataclass(frozen=True)
class VisualLibrary:
    """Visual parts by catalog id, kept apart for furniture and objects; an entry not mapped keeps
    its built-in visual. ``fits`` holds each asset's record of the build's index."""

    furniture: dict[str, tuple[VisualPart, ...]] = field(default_factory=dict)
    objects: dict[str, tuple[VisualPart, ...]] = field(default_factory=dict)
    fits: dict[str, dict[str, Any]] = field(default_factory=dict)

    def visual(self, entry: FurnitureEntry | ObjectEntry) -> list[VisualPart] | None:
        """The entry's external visual parts, or None where it keeps its built-in one."""
        parts = (self.furniture if isinstance(entry, FurnitureEntry) else self.objects).get(entry.id)
        return None if parts is None else list(parts)

    def __bool__(self) -> bool:
        return bool(self.furniture or self.objects)


# --- reading the mapping ----------------------------------------------------------------------------------


def read_mapping(path: Path) -> dict[str, dict[str, Any]]:
    """The YAML's ``assets`` as raw mappings by id (each checked by :func:`prepare_library`); a
    file that is missing or is no such YAML stops with one line."""
    path = Path(path)
    if not path.is_file():
        raise HomeLoopError(f"--assets {path}: no such file; give a YAML file of asset mappings")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise HomeLoopError(f"--assets {path}: not readable as YAML ({type(exc).__name__})") from None
    if not isinstance(data, dict) or set(data) != {"assets"} or not isinstance(data["assets"], dict):
        raise HomeLoopError(f"--assets {path}: the file must hold one key, assets: {{<catalog id>: {{file: ..., "
                            "up_axis: y|z, front: +x|-x|+y|-y|+z|-z, units_per_metre: N}}}}")
    return {str(k): v for k, v in data["assets"].items()}


def _entry(catalog: Catalog, catalog_id: str) -> FurnitureEntry | ObjectEntry | None:
    return catalog.furniture.get(catalog_id) or catalog.objects.get(catalog_id)


def prepare_library(path: Path, catalog: Catalog) -> PreparedLibrary:
    """Read every mapping of the YAML at ``path`` and fit its asset (see the module docstring), in
    id order; a mapping that cannot be used is a rejection, never an exception. The same mapping,
    files and catalog are read and fitted once per process (a build asks before it starts, for its
    parameters and to write them)."""
    path = Path(path)
    sources = {cid: _source(path, raw) for cid, raw in sorted(read_mapping(path).items())}
    key = (hashlib.sha256(path.read_bytes()).hexdigest(), str(path.resolve()), catalog.version_hash,
           tuple((cid, str(src), sha256_file(src) if src.is_file() else "") for cid, (src, _) in sources.items()))
    return _PREPARED.get_or_make(key, lambda: _fit_all(catalog, sources))


def _fit_all(catalog: Catalog, sources: dict[str, tuple[Path, Any]]) -> PreparedLibrary:
    fitted: list[FittedAsset] = []
    rejected: list[AssetRejection] = []
    for catalog_id, (source, raw) in sources.items():
        try:
            fitted.append(_fit_one(catalog, catalog_id, raw, source))
        except AssetRejection as rejection:
            rejected.append(rejection)
    return PreparedLibrary(tuple(fitted), tuple(rejected))


#: Mappings already read and fitted, by the mapping's bytes, the sources' hashes and the catalog.
_PREPARED: Kept[PreparedLibrary] = Kept(8)


def _source(path: Path, raw: Any) -> tuple[Path, Any]:
    """The file a mapping names, resolved against the YAML's folder (the YAML itself where it
    names none), with the raw mapping."""
    named = str(raw.get("file", "")) if isinstance(raw, dict) else ""
    return ((path.parent / named).resolve() if named else path.resolve()), raw


def _fit_one(catalog: Catalog, catalog_id: str, raw: Any, source: Path) -> FittedAsset:
    entry = _entry(catalog, catalog_id)
    if entry is None:
        raise AssetRejection(catalog_id, str(source), "no furniture or object entry of the catalog has this id")
    try:
        mapping = AssetMapping.model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "mapping"
        raise AssetRejection(catalog_id, str(source), f"{where}: {problem['msg']}") from None
    if not source.is_file():
        raise AssetRejection(catalog_id, str(source), "no such file")
    reader = "usd" if source.suffix.lower() in USD_SUFFIXES else "mesh"
    if reader == "mesh" and source.suffix.lower() not in MESH_SUFFIXES:
        raise AssetRejection(catalog_id, str(source), f"unknown file type {source.suffix or '(none)'}; give "
                             f"one of {', '.join(USD_SUFFIXES + MESH_SUFFIXES)}")
    mesh, usd_prim = _read(source, reader, catalog_id)
    role = "body" if isinstance(entry, FurnitureEntry) else TINTED
    d = entry.dimensions
    matrix, scale, fitted = fit_to_size(mesh, mapping, (d.depth, d.width, d.height), catalog_id, str(source))
    placed = trimesh.Trimesh(mesh.vertices @ matrix[:3, :3].T + matrix[:3, 3], mesh.faces, process=False)
    fit = AssetFit(catalog_id, mapping.file, sha256_file(source), reader, mapping.up_axis, mapping.front,
                   float(mapping.units_per_metre), role, scale, tuple(tuple(float(v) for v in row) for row in matrix),
                   (float(d.depth), float(d.width), float(d.height)), fitted, usd_prim)
    return FittedAsset(fit, placed, source)


# --- reading the files ------------------------------------------------------------------------------------


def _read(source: Path, reader: str, catalog_id: str) -> tuple[trimesh.Trimesh, str]:
    """The file's triangles in its own coordinates (USD: its meshes in their world transforms),
    and for USD the prim a reference shows."""
    try:
        vertices, faces, prim = _usd_triangles(source) if reader == "usd" else (*_mesh_triangles(source), "")
    except Exception as exc:  # any reader's failure on a bad file is the user's to fix
        reason = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise AssetRejection(catalog_id, str(source), f"unreadable ({reason})") from None
    if len(faces) == 0 or len(vertices) == 0:
        raise AssetRejection(catalog_id, str(source), "empty: the file holds no triangles")
    if not np.all(np.isfinite(vertices)):
        raise AssetRejection(catalog_id, str(source), "unreadable (points that are not finite numbers)")
    if reader == "usd" and not prim:
        raise AssetRejection(catalog_id, str(source), "the USD file has no prim a reference could show")
    return trimesh.Trimesh(vertices, faces, process=False), prim


def _mesh_triangles(source: Path) -> tuple[np.ndarray, np.ndarray]:
    """glTF, GLB or OBJ through trimesh, every node's mesh in its transform, as one mesh."""
    loaded = trimesh.load(str(source), force="mesh")
    if not isinstance(loaded, trimesh.Trimesh):
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    return np.asarray(loaded.vertices, dtype=float), np.asarray(loaded.faces, dtype=np.int64)


def _usd_triangles(source: Path) -> tuple[np.ndarray, np.ndarray, str]:
    """The USD file's meshes of default or render purpose, visible, in their world transforms,
    their polygons fanned into triangles (in traversal order), and the path of the prim a
    reference shows (the default prim, else the first root prim)."""
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(str(source))
    if stage is None:
        raise ValueError("not a USD file")
    cache = UsdGeom.XformCache(Usd.TimeCode.Default())
    drawn = (UsdGeom.Tokens.default_, UsdGeom.Tokens.render)
    vertices: list[np.ndarray] = []
    faces: list[np.ndarray] = []
    offset = 0
    for prim in stage.Traverse():
        if not prim.IsA(UsdGeom.Mesh):
            continue
        imageable = UsdGeom.Imageable(prim)
        if imageable.ComputePurpose() not in drawn or imageable.ComputeVisibility() == UsdGeom.Tokens.invisible:
            continue
        mesh = UsdGeom.Mesh(prim)
        points = np.asarray(mesh.GetPointsAttr().Get() or [], dtype=float).reshape(-1, 3)
        counts = np.asarray(mesh.GetFaceVertexCountsAttr().Get() or [], dtype=np.int64)
        indices = np.asarray(mesh.GetFaceVertexIndicesAttr().Get() or [], dtype=np.int64)
        tris = fan_triangles(counts, indices, len(points), str(prim.GetPath()))
        if not len(tris):
            continue
        world = np.asarray(cache.GetLocalToWorldTransform(prim), dtype=float)  # row vectors: p @ M
        vertices.append(points @ world[:3, :3] + world[3, :3])
        faces.append(tris + offset)
        offset += len(points)
    shown = stage.GetDefaultPrim() or next(iter(stage.GetPseudoRoot().GetChildren()), None)
    prim_path = str(shown.GetPath()) if shown else ""
    if not faces:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), prim_path
    return np.vstack(vertices), np.vstack(faces), prim_path


def fan_triangles(counts: np.ndarray, indices: np.ndarray, n_points: int, where: str) -> np.ndarray:
    """Polygons (``faceVertexCounts``, ``faceVertexIndices``) as triangles, each fanned from its
    first corner; faces of fewer than three corners are dropped. ValueError for indices that do
    not add up or point past the points."""
    if int(counts.sum()) != len(indices) or (len(counts) and counts.min() < 0):
        raise ValueError(f"{where}: face counts do not add up to the face indices")
    if len(indices) and (indices.min() < 0 or indices.max() >= n_points):
        raise ValueError(f"{where}: a face index points past the mesh's points")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(counts) else counts
    tris = [np.stack([indices[s], indices[s + k], indices[s + k + 1]], axis=1)
            for k in range(1, int(counts.max(initial=0)) - 1) for s in [starts[counts > k + 1]]]
    return np.vstack(tris) if tris else np.zeros((0, 3), dtype=np.int64)


# --- the fit ----------------------------------------------------------------------------------------------


def fit_to_size(mesh: trimesh.Trimesh, mapping: AssetMapping, target: tuple[float, float, float],
                catalog_id: str = "", file: str = "") -> tuple[np.ndarray, float, tuple[float, float, float]]:
    """The 4 x 4 matrix from the file's coordinates (``mapping``'s axes and units) to the item frame
    fitted to ``target`` (depth, width, height), the uniform scale and the fitted size; an
    AssetRejection (naming ``catalog_id`` and ``file``) where no one scale fits."""
    to_item = np.eye(4)
    to_item[:3, :3] = mapping.rotation() / mapping.units_per_metre
    points = mesh.vertices @ to_item[:3, :3].T
    lo, hi = points.min(axis=0), points.max(axis=0)
    size = hi - lo
    goal = np.asarray(target, dtype=float)
    fitted_axes = goal >= THIN_SHARE * goal.max()
    if np.any(size[fitted_axes] <= 1e-9 * max(float(size.max()), 1e-300)):
        raise AssetRejection(catalog_id, file, f"flat where the entry is not: size {_size(size)} (depth x width x "
                             "height) after the declared axes and units")
    ratios = goal[fitted_axes] / size[fitted_axes]
    scale = float(math.sqrt(ratios.min() * ratios.max()))
    fitted = size * scale
    misses = fitted[fitted_axes] / goal[fitted_axes] - 1.0
    thick = ~fitted_axes & (fitted > THIN_SHARE * goal.max())
    sizes = f"{_size(size)} (depth x width x height) after the declared axes and units"
    if not (1.0 / MAX_SCALE <= scale <= MAX_SCALE):
        raise AssetRejection(catalog_id, file, f"size {sizes} is {1 / scale:.3g} times the entry's {_size(goal)}: "
                             f"another unit or up axis than declared? (the fit may scale at most {MAX_SCALE:g} "
                             "times either way)")
    if np.any(np.abs(misses) > FIT_TOLERANCE) or np.any(thick):
        raise AssetRejection(catalog_id, file, f"proportions {sizes} do not fit the entry's {_size(goal)} with one "
                             f"scale within {FIT_TOLERANCE:.0%} (the best, {scale:.3g}, gives {_size(fitted)}); "
                             "another up axis or front than declared, or an asset of another shape?")
    centre = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])
    matrix = np.eye(4)
    matrix[:3, :3] = scale * to_item[:3, :3]
    matrix[:3, 3] = -scale * centre
    return matrix, scale, (float(fitted[0]), float(fitted[1]), float(fitted[2]))


def _size(v: np.ndarray) -> str:
    return " x ".join(f"{float(x):.3g}" for x in v) + " m"


# --- the build's copy -------------------------------------------------------------------------------------


def library_folder(build_dir: Path) -> Path:
    """Where a build keeps its fitted assets."""
    return Path(build_dir).joinpath(*LIBRARY_FOLDER)


def mesh_file_name(catalog_id: str) -> str:
    return f"{catalog_id}.glb"


def source_copy_name(fitted: FittedAsset) -> str:
    """The name of a USD source's copy in the library folder (its own extension kept)."""
    return f"{fitted.fit.catalog_id}_source{fitted.source.suffix.lower()}"


def write_library(prepared: PreparedLibrary, folder: Path) -> list[Path]:
    """Write the fitted assets into ``folder`` (a build's :func:`library_folder`): each mesh as
    GLB (geometry only), a USD source's copy, and the index; the paths written, in order."""
    folder = Path(folder)
    written: list[Path] = []
    index: dict[str, Any] = {"tolerance": FIT_TOLERANCE, "max_scale": MAX_SCALE, "assets": {}, "rejected": {}}
    for asset in prepared.fitted:
        cid = asset.fit.catalog_id
        plain = trimesh.Trimesh(asset.mesh.vertices, asset.mesh.faces, process=False)
        written.append(write_bytes(folder / mesh_file_name(cid), plain.export(file_type="glb")))
        record = asset.fit.record() | {"mesh": mesh_file_name(cid), "usd_source": None}
        if asset.fit.reader == "usd":
            copy = folder / source_copy_name(asset)
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(asset.source, copy)
            written.append(copy)
            record["usd_source"] = copy.name
        index["assets"][cid] = record
    index["rejected"] = {r.catalog_id: r.record() for r in prepared.rejected}
    written.append(write_json(folder / INDEX_FILE, index))
    return written


def load_library(folder: Path) -> VisualLibrary:
    """The library a build wrote into ``folder`` (:func:`write_library`); the empty library (every
    entry its built-in visual) where there is none."""
    index_path = Path(folder) / INDEX_FILE
    if not index_path.is_file():
        return VisualLibrary()
    index = json.loads(index_path.read_text(encoding="utf-8"))
    furniture: dict[str, tuple[VisualPart, ...]] = {}
    objects: dict[str, tuple[VisualPart, ...]] = {}
    for cid, record in sorted(index.get("assets", {}).items()):
        loaded = trimesh.load(str(Path(folder) / record["mesh"]), force="mesh", process=False)
        mesh = trimesh.Trimesh(np.asarray(loaded.vertices, dtype=float), np.asarray(loaded.faces), process=False)
        part = (VisualPart(PART_NAME, mesh, record["role"]),)
        (objects if record["role"] == TINTED else furniture)[cid] = part
    return VisualLibrary(furniture, objects, {cid: dict(r) for cid, r in sorted(index.get("assets", {}).items())})


def library_for_home(home_file: Path) -> VisualLibrary:
    """The library of the build a home file belongs to (``<build>/homes/<id>/home.json``); the
    empty library for a home outside a build, or a build without assets."""
    return load_library(library_folder(Path(home_file).resolve().parent.parent.parent))


def library_digest(home_file: Path) -> str:
    """The sha256 of the index of the build a home file belongs to ("" without one): what a cache
    of :func:`library_for_home` keys on, so a rebuilt library is read again."""
    index = library_folder(Path(home_file).resolve().parent.parent.parent) / INDEX_FILE
    return hashlib.sha256(index.read_bytes()).hexdigest() if index.is_file() else ""
