"""Which rays from a camera are blocked, for the geometric visibility (docs/skills.md).

:mod:`homeloop.sim.visibility` joins a camera to sample points by rays and
asks which of them something hides. Occluders come in two shapes:

- :class:`Faces`: vertical faces seen edge-on from above, a segment blocking
  between two heights (walls less their openings, the wall under a sill and
  over a head, a shut door's leaf);
- :class:`Prisms`: convex footprints extruded between two heights, as
  half-planes (furniture, device bodies, objects, people), clipped Cyrus-Beck.

Every occluder has an owner code; a ray ignores the owners it lists (the
entity it looks at, what that stands on). An :class:`Occlusion` holds the
occluders of one frame sorted by direction from the camera into
:data:`SECTORS` sectors: a ray is tested only against the occluders reaching
into its sector or one beside it, and lying no farther than its end. Those
pairs get the same arithmetic, element by element, as testing every ray
against every occluder, so the answer is the same to the last bit; the
sector beside and the reach to spare are far wider than any rounding.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Protocol, Sequence

import numpy as np
from shapely.geometry.base import BaseGeometry

#: Ray ends ignored (m): a sample on a solid's face is not hidden by the face it lies on.
RAY_END_SLACK_M = 0.02

#: Directions around a camera are sorted into this many sectors.
SECTORS = 512
#: The smallest integer type holding a sector.
SECTOR_TYPE = np.min_scalar_type(SECTORS - 1)
#: An occluder this close to the camera (m), or spanning this close to half a turn (rad), lies in every sector.
EVERY_SECTOR_NEAR_M = 0.05
EVERY_SECTOR_SPAN = math.pi - 0.1
#: A ray is tested against occluders no farther from the camera than this share of its length, plus this (m).
REACH_SHARE, REACH_SPARE_M = 1.25, 0.05


#: Occluders by sector: ``idx[ptr[s]:ptr[s + 1]]`` reach into sector s (see :func:`_sector_table`).
SectorTable = tuple[np.ndarray, np.ndarray]


class ConvexSolid(Protocol):
    """A convex footprint extruded between two heights, as :class:`Prisms` reads it
    (:class:`homeloop.sim.visibility.Solid`)."""

    @property
    def ring(self) -> np.ndarray: ...

    @property
    def z0(self) -> float: ...

    @property
    def z1(self) -> float: ...

    def half_planes(self) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class Faces:
    """Vertical faces seen edge-on from above: segment ``a``-``b`` blocking between ``z0`` and ``z1``."""

    a: np.ndarray
    b: np.ndarray
    z0: np.ndarray
    z1: np.ndarray
    owner: np.ndarray  # owner code per segment (-1: a wall)

    # Faces never change once made: what every camera reads of them is worked out once.

    @functools.cached_property
    def span(self) -> np.ndarray:
        """Each face's segment, ``b - a``."""
        span: np.ndarray = self.b - self.a
        return span

    @functools.cached_property
    def ends(self) -> np.ndarray:
        """Every face's ``a``, then every face's ``b`` (2F, 2)."""
        return np.concatenate([self.a, self.b])

    @classmethod
    def empty(cls) -> "Faces":
        z = np.zeros((0, 2))
        return cls(z, z, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))

    @classmethod
    def concat(cls, parts: Iterable["Faces"]) -> "Faces":
        kept = [p for p in parts if len(p.z0)]
        if not kept:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, k) for p in kept]) for k in ("a", "b", "z0", "z1", "owner")))

    @classmethod
    def of_polygon(cls, polygon: BaseGeometry, z0: float, z1: float, owner: int) -> "Faces":
        """The boundary segments of a polygon (or multipolygon) blocking between z0 and z1."""
        rings = []
        for poly in getattr(polygon, "geoms", [polygon]):
            if poly.is_empty or poly.geom_type != "Polygon":
                continue
            rings.extend([np.asarray(poly.exterior.coords), *(np.asarray(r.coords) for r in poly.interiors)])
        if not rings:
            return cls.empty()
        a = np.vstack([r[:-1] for r in rings])
        b = np.vstack([r[1:] for r in rings])
        n = len(a)
        return cls(a, b, np.full(n, z0), np.full(n, z1), np.full(n, owner, dtype=np.int64))


@dataclass
class Prisms:
    """Convex solids as half-planes ``normal . p <= offset`` (padded to one edge count), heights, and
    their footprints' corners (padded with the first corner)."""

    normal: np.ndarray  # (Q, E, 2)
    offset: np.ndarray  # (Q, E)
    z0: np.ndarray
    z1: np.ndarray
    owner: np.ndarray
    corners: np.ndarray | None = None  # (Q, E, 2); None: every prism lies in every sector

    @classmethod
    def of(cls, solids: Sequence[tuple[int, ConvexSolid]]) -> "Prisms":
        """From (owner, solid) pairs."""
        if not solids:
            return cls(np.zeros((0, 1, 2)), np.zeros((0, 1)), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64),
                       np.zeros((0, 1, 2)))
        width = max(len(s.ring) for _, s in solids)
        normal = np.zeros((len(solids), width, 2))
        offset = np.ones((len(solids), width))  # padding: 0 . p <= 1 always holds
        corners = np.zeros((len(solids), width, 2))
        for q, (_, s) in enumerate(solids):
            n, off = s.half_planes()
            normal[q, :len(n)], offset[q, :len(n)] = n, off
            corners[q, :len(n)], corners[q, len(n):] = s.ring, s.ring[0]
        return cls(normal, offset, np.array([s.z0 for _, s in solids]), np.array([s.z1 for _, s in solids]),
                   np.array([o for o, _ in solids], dtype=np.int64), corners)


    def take(self, rows: np.ndarray) -> "Prisms":
        """The prisms of ``rows``, in that order."""
        corners = None if self.corners is None else self.corners[rows]
        return Prisms(self.normal[rows], self.offset[rows], self.z0[rows], self.z1[rows], self.owner[rows], corners)

    @classmethod
    def concat(cls, parts: Sequence["Prisms"]) -> "Prisms":
        """The prisms of every part, in order (padded to the widest's edge count)."""
        kept = [p for p in parts if len(p.z0)]
        if len(kept) <= 1:
            return kept[0] if kept else parts[0]
        width = max(p.normal.shape[1] for p in kept)
        padded = [p._padded(width) for p in kept]
        corners = None if any(p.corners is None for p in padded) else np.concatenate([p.corners for p in padded])
        normal, offset, z0, z1, owner = (np.concatenate([getattr(p, k) for p in padded])
                                         for k in ("normal", "offset", "z0", "z1", "owner"))
        return cls(normal, offset, z0, z1, owner, corners)

    def _padded(self, width: int) -> "Prisms":
        """The same prisms with ``width`` edges each: half-planes that always hold, the first corner again."""
        extra = width - self.normal.shape[1]
        if extra <= 0:
            return self
        q = len(self.z0)
        normal = np.concatenate([self.normal, np.zeros((q, extra, 2))], axis=1)
        offset = np.concatenate([self.offset, np.ones((q, extra))], axis=1)
        corners = None if self.corners is None else np.concatenate(
            [self.corners, np.repeat(self.corners[:, :1], extra, axis=1)], axis=1)
        return Prisms(normal, offset, self.z0, self.z1, self.owner, corners)


def blocked(origin: np.ndarray, targets: np.ndarray, ex: np.ndarray, faces: Faces, prisms: Prisms) -> np.ndarray:
    """Whether each ray from ``origin`` to a target is blocked (``ex``: owner codes each ray ignores,
    -2 padding)."""
    return Occlusion(origin, faces, prisms).blocked(targets, ex)


class Occlusion:
    """The occluders of one frame, sorted by direction from the camera (see the module docstring)."""

    def __init__(self, origin: np.ndarray, faces: Faces, prisms: Prisms):
        self.origin, self.faces, self.prisms = np.asarray(origin, dtype=float), faces, prisms
        o = self.origin[:2]
        if len(faces.z0):  # a frame's changing occluders often hold no face (no door shut), or no prism
            ends = faces.ends - o
            self._face_e, self._face_w = faces.span, ends[:len(faces.z0)]
            e, w = self._face_e, self._face_w
            self._face_tnum = w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]
            self._face_sectors, self._face_near = _face_sectors(ends)
        if len(prisms.z0):
            num = prisms.offset - np.einsum("qej,j->qe", prisms.normal, o)  # (Q, E)
            self._prism_sectors, self._prism_near = _prism_sectors(o, prisms, num)
            # per edge, every prism's normal (its two parts) and numerator: (E, Q), so a test's arrays
            # run along the pairs
            self._prism_edges = (prisms.normal[..., 0].T.copy(), prisms.normal[..., 1].T.copy(), num.T.copy())

    def blocked(self, targets: np.ndarray, ex: np.ndarray) -> np.ndarray:
        """Whether each ray to a target (M, 3) is blocked; ``ex`` (M, X): the owners each ray ignores."""
        out = np.zeros(len(targets), dtype=bool)
        if not len(self.faces.z0) and not len(self.prisms.z0):
            return out
        rays = targets - self.origin
        length = np.sqrt(np.add.reduce(rays * rays, axis=1))  # np.linalg.norm's arithmetic, without its checks
        slack = np.minimum(RAY_END_SLACK_M / np.maximum(length, 1e-9), 0.49)
        sector = _ray_sectors(rays)
        reach = REACH_SHARE * length + REACH_SPARE_M
        if len(self.faces.z0):
            self._faces_block(out, rays, slack, ex, sector, reach)
        if len(self.prisms.z0):
            self._prisms_block(out, rays, slack, ex, sector, reach)
        return out

    def _faces_block(self, out: np.ndarray, rays: np.ndarray, slack: np.ndarray, ex: np.ndarray,
                     sector: np.ndarray, reach: np.ndarray) -> None:
        """Rays (camera to target, (M, 3)) blocked by a vertical face: the 2-D crossing lies within the
        face's heights."""
        m, k = _pairs(self._face_sectors, sector)
        near = self._face_near[k] <= reach[m]
        m, k = m[near], k[near]
        faces, origin = self.faces, self.origin
        d = rays[m]
        e, w = self._face_e[k], self._face_w[k]
        den = d[:, 0] * e[:, 1] - d[:, 1] * e[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):  # parallel faces give inf/nan, masked
            s = (w[:, 0] * d[:, 1] - w[:, 1] * d[:, 0]) / den
        crossing = (np.abs(den) > 1e-12) & (s >= 0) & (s <= 1)  # the ray's line crosses the face
        m, k, den = m[crossing], k[crossing], den[crossing]
        t = self._face_tnum[k] / den
        z = origin[2] + t * rays[m, 2]
        spare = slack[m]
        hit = (t > spare) & (t < 1 - spare) & (z >= faces.z0[k]) & (z <= faces.z1[k])
        _block_unless_ignored(out, m[hit], faces.owner[k[hit]], ex)

    def _prisms_block(self, out: np.ndarray, rays: np.ndarray, slack: np.ndarray, ex: np.ndarray,
                      sector: np.ndarray, reach: np.ndarray) -> None:
        """Rays (camera to target, (M, 3)) blocked by a convex prism (Cyrus-Beck: the ray's parameter
        interval inside every half-plane and inside the height range is not empty); rays already
        blocked are not tested."""
        open_rays = np.flatnonzero(~out)
        j, q = _pairs(self._prism_sectors, sector[open_rays])
        m = open_rays[j]
        near = self._prism_near[q] <= reach[m]
        m, q = m[near], q[near]
        prisms, origin = self.prisms, self.origin
        d = rays[m]
        normal_x, normal_y, num = (a[:, q] for a in self._prism_edges)  # (E, P) each
        den = normal_x * d[:, 0] + normal_y * d[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = num / den
        lower = np.where(den < 0, ratio, -np.inf).max(axis=0)
        upper = np.where(den > 0, ratio, np.inf).min(axis=0)
        never = ((den == 0) & (num < 0)).any(axis=0)
        dz, z0, z1 = d[:, 2], prisms.z0[q], prisms.z1[q]
        with np.errstate(divide="ignore", invalid="ignore"):
            za = (z0 - origin[2]) / dz
            zb = (z1 - origin[2]) / dz
        flat = np.abs(dz) < 1e-12
        inside_z = (z0 <= origin[2]) & (origin[2] <= z1)
        lower = np.maximum(lower, np.where(flat, np.where(inside_z, -np.inf, np.inf), np.minimum(za, zb)))
        upper = np.minimum(upper, np.where(flat, np.inf, np.maximum(za, zb)))
        spare = slack[m]
        lower = np.maximum(lower, spare)
        upper = np.minimum(upper, 1 - spare)
        hit = (lower < upper) & ~never
        _block_unless_ignored(out, m[hit], prisms.owner[q[hit]], ex)


def _block_unless_ignored(out: np.ndarray, rays: np.ndarray, owners: np.ndarray, ex: np.ndarray) -> None:
    """Mark ``rays`` blocked, each by the occluder of ``owners`` that hits it, unless the ray ignores it."""
    ignored = (owners[:, None] == ex[rays]).any(axis=1)
    out[rays[~ignored]] = True


# --- sectors --------------------------------------------------------------------------------------------


def _ray_sectors(d: np.ndarray) -> np.ndarray:
    """The sector of each ray's direction (M, 2)."""
    angle = np.arctan2(d[:, 1], d[:, 0])
    sectors: np.ndarray = np.floor((angle + math.pi) * (SECTORS / (2 * math.pi))).astype(np.int64) % SECTORS
    return sectors


def _pairs(table: SectorTable, sector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (ray, occluder) pair where the occluder reaches into the ray's sector, from a
    :func:`_sector_table`: ray indices (ascending) and occluder indices."""
    ptr, idx = table
    start = ptr[sector]
    count = ptr[sector + 1] - start
    rays = np.repeat(np.arange(len(sector)), count)
    # a pair's place in idx: its sector's start, plus how far into its ray's run the pair lies
    return rays, idx[np.repeat(start - (np.cumsum(count) - count), count) + np.arange(len(rays))]


def _sector_table(low: np.ndarray, span: np.ndarray, everywhere: np.ndarray) -> SectorTable:
    """The occluders reaching into each sector, from the directions each spans seen from the
    camera (``low`` to ``low + span``, rad) with a sector to spare either side: sector s holds
    occluders ``idx[ptr[s]:ptr[s + 1]]``."""
    low, span = np.where(everywhere, 0.0, low), np.where(everywhere, 0.0, span)
    per_rad = SECTORS / (2 * math.pi)
    first = np.floor((low + math.pi) * per_rad).astype(np.int64) - 1
    count = np.floor((low + span + math.pi) * per_rad).astype(np.int64) + 2 - first
    first, count = np.where(everywhere | (count >= SECTORS), 0, first), np.minimum(count, SECTORS)
    count[everywhere] = SECTORS
    occluder = np.repeat(np.arange(len(low)), count)
    # an entry's sector: its occluder's first, plus how far into the occluder's run the entry lies
    sector = (np.repeat(first - (np.cumsum(count) - count), count) + np.arange(len(occluder))) % SECTORS
    order = np.argsort(sector.astype(SECTOR_TYPE), kind="stable")  # a small integer type sorts by radix
    ptr = np.concatenate([[0], np.cumsum(np.bincount(sector, minlength=SECTORS))])
    return ptr, occluder[order]


def _face_sectors(ends: np.ndarray) -> tuple[SectorTable, np.ndarray]:
    """Each face's sectors, and its distance from the camera (m, in plan), from :attr:`Faces.ends`
    seen from the camera."""
    n = len(ends) // 2
    a, b = ends[:n], ends[n:]
    angle = np.arctan2(ends[:, 1], ends[:, 0])
    ang_a, ang_b = angle[:n], angle[n:]
    turn = (ang_b - ang_a + math.pi) % (2 * math.pi) - math.pi
    low, span = np.where(turn >= 0, ang_a, ang_b), np.abs(turn)
    e = b - a
    length2 = np.einsum("ij,ij->i", e, e)
    with np.errstate(divide="ignore", invalid="ignore"):
        along = np.clip(np.where(length2 > 0, -np.einsum("ij,ij->i", a, e) / length2, 0.0), 0.0, 1.0)
    near = np.hypot(a[:, 0] + along * e[:, 0], a[:, 1] + along * e[:, 1])
    everywhere = (near < EVERY_SECTOR_NEAR_M) | (span > EVERY_SECTOR_SPAN)
    return _sector_table(low, span, everywhere), near


def _prism_sectors(o: np.ndarray, prisms: Prisms, num: np.ndarray) -> tuple[SectorTable, np.ndarray]:
    """Each prism's sectors, and a lower bound of its distance from the camera (m, in plan); ``num``:
    each half-plane's offset less its normal's reach to the camera."""
    if prisms.corners is None:
        n = len(prisms.z0)
        return _sector_table(np.zeros(n), np.zeros(n), np.ones(n, dtype=bool)), np.zeros(n)
    rel = prisms.corners - o  # (Q, E, 2)
    # the mean, as np.mean works it out: inside the footprint (the padding repeats a corner)
    centre = np.add.reduce(rel, axis=1) / rel.shape[1]
    towards = np.arctan2(centre[:, 1], centre[:, 0])
    angles = np.arctan2(rel[..., 1], rel[..., 0])
    turn = (angles - towards[:, None] + math.pi) % (2 * math.pi) - math.pi
    least = turn.min(axis=1)
    low, span = towards + least, turn.max(axis=1) - least
    radius = np.hypot(*(rel - centre[:, None, :]).transpose(2, 0, 1)).max(axis=1)
    near = np.maximum(np.hypot(centre[:, 0], centre[:, 1]) - radius, 0.0)
    norm = np.hypot(prisms.normal[..., 0], prisms.normal[..., 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        outside = np.where(norm > 0, -num / norm, -np.inf)
    everywhere = (outside.max(axis=1) < EVERY_SECTOR_NEAR_M) | (span > EVERY_SECTOR_SPAN)
    return _sector_table(low, span, everywhere), near
