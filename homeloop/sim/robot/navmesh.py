"""The navigation mesh: the free floor cut into triangles (a constrained Delaunay triangulation),
joined across their shared edges, that routes are searched over.

A* finds the corridor of triangles from start to goal and the funnel
algorithm pulls the path taut inside it, so it bends only at corners of the free
floor. A mesh is built once per home, body width, set of closed-off doorways and
set of discs to avoid, and kept in a small cache, so repeated queries in one
home reuse it (while the home's layout reads the same).
"""

from __future__ import annotations

import heapq
import math
from typing import Iterator, Sequence

import numpy as np
import shapely
import shapely.ops
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.home import Home, polygon_from_rings
from homeloop.core.kept import Kept
from homeloop.core.navigation import FreeFloor, free_floor_of
import homeloop.sim.robot.floor as floor_module
from homeloop.sim.robot.obstacles import Obstacle

#: A* over triangle centroids can pick a corridor a little longer than the best one. So a second
#: corridor is searched with the first one's crossings this many times as costly, both are pulled
#: taut, and the shorter is kept (``benchmarks/sim_robot.py --exact N`` prints how close the paths
#: then come to the exact shortest, from a visibility graph of every corner).
ALTERNATIVE_PENALTY = 2.0

_MESH_CACHE_SIZE = 32
#: Corridors a mesh keeps (the oldest is let go first).
CORRIDORS_KEPT = 2048

#: A point on the floor (m).
XY = tuple[float, float]


def _cross(a: Sequence[float], b: Sequence[float], c: Sequence[float]) -> float:
    """Twice the signed area of a, b, c: positive when c lies left of the ray a→b."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


class NavMesh:
    """A free-floor geometry cut into triangles joined across their shared edges."""

    def __init__(self, floor: BaseGeometry) -> None:
        self.floor = floor
        shapely.prepare(floor)
        parts = shapely.get_parts(shapely.constrained_delaunay_triangles(floor)) if not floor.is_empty else []
        self.triangles = np.asarray(parts, dtype=object)[shapely.area(parts) > 1e-12] if len(parts) else \
            np.zeros(0, dtype=object)
        ring = shapely.get_coordinates(self.triangles)  # each triangle's closed ring: 4 corners
        self.coords = ring.reshape(-1, 4, 2)[:, :3].copy() if len(ring) == 4 * len(self.triangles) else \
            np.array([np.asarray(t.exterior.coords)[:3] for t in self.triangles]).reshape(-1, 3, 2)
        self.centroids = self.coords.mean(axis=1)
        self._centres = [tuple(c) for c in self.centroids.tolist()]  # plain floats: A* reads them a lot
        self.tree = shapely.STRtree(self.triangles)
        #: Per triangle, its neighbours across a shared edge, in the order the edges are met: (the
        #: distance between the centroids, the shared edge's ends in order).
        self.neighbours, ends = self._join()
        self.component = _components(len(self.coords), *ends)
        #: Corridors found, by their ends and the corridor avoided: every episode in the home asks this
        #: mesh again for many of the same ones.
        self._corridors: dict[tuple[int, int, tuple[int, ...]], list[int]] = {}

    def _join(self) -> tuple["_Joins", tuple[np.ndarray, np.ndarray]]:
        """Join each triangle to those sharing an edge with it: the edges are met triangle by triangle,
        edge by edge, and an edge met again joins its second triangle to its first. Also the two
        triangles of each join, as arrays."""
        n = len(self.coords)
        if not n:
            none = np.zeros(0, dtype=np.int64)
            return _Joins(0, none, none, np.zeros((0, 2)), np.zeros((0, 4))), (none, none)
        p = self.coords.reshape(n * 3, 2)  # half-edges (i, 0-1), (i, 1-2), (i, 2-0)
        q = self.coords[:, [1, 2, 0], :].reshape(n * 3, 2)
        p_first = (p[:, 0] < q[:, 0]) | ((p[:, 0] == q[:, 0]) & (p[:, 1] < q[:, 1]))
        keys = np.where(p_first[:, None], np.hstack([p, q]), np.hstack([q, p]))
        first = _first_equal_rows(keys)
        again = np.flatnonzero(first != np.arange(n * 3))
        mine, theirs = again // 3, first[again] // 3
        apart = self.centroids[mine] - self.centroids[theirs]
        return _Joins(n, mine, theirs, apart, keys[again]), (mine, theirs)

    def locate(self, xy: tuple[float, float], snap: float) -> tuple[int, tuple[float, float], float] | None:
        """(triangle, the point moved onto the mesh, how far it moved), or None beyond ``snap``."""
        p = Point(xy)
        hits = self.tree.query(p, predicate="intersects")
        if len(hits):
            return int(min(hits)), (float(xy[0]), float(xy[1])), 0.0
        idx, dist = self.tree.query_nearest(p, max_distance=snap, return_distance=True, all_matches=True)
        if not len(idx):
            return None
        i = int(idx[np.lexsort((idx, dist))[0]])
        q = shapely.ops.nearest_points(self.triangles[i], p)[0]
        return i, (float(q.x), float(q.y)), float(dist.min())

    def corridor(self, a: int, b: int, avoid: list[int] | None = None) -> list[int] | None:
        """Triangles from ``a`` to ``b`` (A* over centroid distances), or None if not joined.
        ``avoid``: a corridor whose crossings cost :data:`ALTERNATIVE_PENALTY` times as much."""
        if self.component[a] != self.component[b]:
            return None
        key = (a, b, tuple(avoid) if avoid else ())
        found = self._corridors.get(key) if floor_module.KEPT else None
        if found is None:
            used = set(zip(avoid, avoid[1:])) | set(zip(avoid[1:], avoid)) if avoid else set()
            found = self._corridors[key] = self._astar(a, b, used)
            if len(self._corridors) > CORRIDORS_KEPT:
                self._corridors.pop(next(iter(self._corridors)))
        return list(found)

    def _astar(self, source: int, target: int, used: set[tuple[int, int]]) -> list[int]:
        """A* from ``source`` to ``target`` over the joins (``used`` ones costing more): networkx's
        ``astar_path`` step for step (the same queue, ties and neighbour order), without its overhead."""
        cent, joined = self._centres, self.neighbours
        goal = cent[target]
        queue: list[tuple[float, int, int, float, int | None]] = [(0.0, 0, source, 0.0, None)]
        counter = 1
        enqueued: dict[int, tuple[float, float]] = {}
        explored: dict[int, int | None] = {}
        while queue:
            _, __, node, dist, parent = heapq.heappop(queue)
            if node == target:
                path = [node]
                while parent is not None:
                    path.append(parent)
                    parent = explored[parent]
                path.reverse()
                return path
            if node in explored:
                if explored[node] is None:
                    continue
                if enqueued[node][0] < dist:
                    continue
            explored[node] = parent
            for neighbour, (w, _) in joined[node].items():
                cost = w * ALTERNATIVE_PENALTY if used and (node, neighbour) in used else w
                ncost = dist + cost
                if neighbour in enqueued:
                    qcost, h = enqueued[neighbour]
                    if qcost <= ncost:
                        continue
                else:
                    h = math.dist(cent[neighbour], goal)
                enqueued[neighbour] = ncost, h
                heapq.heappush(queue, (ncost + h, counter, neighbour, ncost, node))
                counter += 1
        raise ValueError(f"triangle {target} cannot be reached from {source}")  # the components say it can

    def _portals(self, corridor: list[int], start: XY, goal: XY) -> list[tuple[XY, XY]]:
        """(left, right) edge ends crossed going along the corridor, start and goal as end portals."""
        portals = [(start, start)]
        for i, j in zip(corridor, corridor[1:]):
            p, q = self.neighbours[i][j][1]
            apex = next(v for v in map(tuple, self.coords[i].tolist()) if v != p and v != q)
            portals.append((q, p) if _cross(apex, p, q) > 0 else (p, q))
        portals.append((goal, goal))
        return portals

    def funnel(self, corridor: list[int], start: XY, goal: XY) -> list[XY]:
        """The taut path through the corridor (the simple stupid funnel algorithm)."""
        portals = self._portals(corridor, start, goal)
        points = [start]
        apex = left = right = start
        apex_i = left_i = right_i = 0
        i = 1
        while i < len(portals):
            pl, pr = portals[i]
            if _cross(apex, right, pr) >= 0:
                if apex == right or _cross(apex, left, pr) < 0:
                    right, right_i = pr, i
                else:
                    points.append(left)
                    apex, apex_i = left, left_i
                    left = right = apex
                    left_i = right_i = apex_i
                    i = apex_i + 1
                    continue
            if _cross(apex, left, pl) <= 0:
                if apex == left or _cross(apex, right, pl) > 0:
                    left, left_i = pl, i
                else:
                    points.append(right)
                    apex, apex_i = right, right_i
                    left = right = apex
                    left_i = right_i = apex_i
                    i = apex_i + 1
                    continue
            i += 1
        if points[-1] != goal:
            points.append(goal)
        return points


class _Joins:
    """Each triangle's neighbours across a shared edge, as a list of dicts reads: per triangle, by
    neighbour, (the distance between their centroids, the shared edge's ends in order), in the order
    the joins were met. A triangle's dict is made the first time it is asked for: a route search
    visits a part of the mesh, and building every dict up front cost more than the searches."""

    def __init__(self, n: int, mine: np.ndarray, theirs: np.ndarray, apart: np.ndarray, edges: np.ndarray):
        owner = np.concatenate([theirs, mine])  # each join from both its triangles
        order = np.lexsort((np.concatenate([np.arange(len(mine))] * 2), owner))  # by triangle, then join
        self._other = np.concatenate([mine, theirs])[order].tolist()
        self._join_index = (order % max(len(mine), 1)).tolist()
        self._starts = np.searchsorted(owner[order], np.arange(n + 1)).tolist()
        self._apart, self._edges = apart.tolist(), edges.tolist()
        self._made: list[dict[int, tuple[float, tuple[XY, XY]]] | None] = [None] * n

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, i: int) -> dict[int, tuple[float, tuple[XY, XY]]]:
        made = self._made[i]
        if made is None:  # filled before it is kept: a thread reading it meanwhile makes its own
            made = {}
            for k in range(self._starts[i], self._starts[i + 1]):
                join = self._join_index[k]
                (dx, dy), (x0, y0, x1, y1) = self._apart[join], self._edges[join]
                made[self._other[k]] = (math.hypot(dx, dy), ((x0, y0), (x1, y1)))
            self._made[i] = made
        return made

    def __iter__(self) -> Iterator[dict[int, tuple[float, tuple[XY, XY]]]]:
        return (self[i] for i in range(len(self)))


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each of ``n`` triangles' connected part, joined where ``a[k]`` meets ``b[k]``, numbered in the order
    of each part's lowest triangle: every part's roots hooked onto the lowest root they meet and the
    pointers followed to their ends, until no join hooks anything."""
    parent = np.arange(n)
    while True:
        ra, rb = parent[a], parent[b]
        apart = ra != rb
        if not apart.any():
            break
        np.minimum.at(parent, np.maximum(ra, rb)[apart], np.minimum(ra, rb)[apart])
        while True:
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent = up
    return np.unique(parent, return_inverse=True)[1].reshape(n)


def _first_equal_rows(rows: np.ndarray) -> np.ndarray:
    """For each row, the index of the first row equal to it (itself when none comes before): rows sorted
    stably column by column, so each run of equal rows starts with its lowest index."""
    m = len(rows)
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    starts = np.ones(m, dtype=bool)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    run_start = np.maximum.accumulate(np.where(starts, np.arange(m), 0))
    first = np.empty(m, dtype=np.int64)
    first[order] = order[run_start]
    return first


_MeshKey = tuple[float, frozenset[str], tuple[tuple[float, float, float], ...]]
#: Meshes and their floors by :func:`_mesh_key`, held by the home's free floor for the body's width
#: (:func:`homeloop.core.navigation.free_floor_of`, made again when the home's layout reads
#: otherwise): a home edited in place gets meshes of its new layout.
_MESHES: Kept[NavMesh] = Kept(_MESH_CACHE_SIZE)
_FLOORS: Kept[BaseGeometry] = Kept(_MESH_CACHE_SIZE)


def _mesh_key(width: float, closed: frozenset[str], avoid: Sequence[Obstacle]) -> _MeshKey:
    """What a home's mesh (or its floor) is kept under: the body's width, the closed doorways and
    the discs around ``avoid``, rounded as they are cut."""
    discs = tuple(sorted((round(o.x, 2), round(o.y, 2), round(o.clearance(width), 2)) for o in avoid))
    return round(width, 4), closed, discs


def nav_floor(home: Home, width: float, closed: frozenset[str] = frozenset(),
              avoid: Sequence[Obstacle] = ()) -> BaseGeometry:
    """The free floor for a body of ``width``, with the ``closed`` doorways cut out and discs around
    ``avoid`` removed: what :func:`navmesh` triangulates (cached; a caller that needs only the floor
    does without the triangles)."""
    return _kept_floor(free_floor_of(home, width), home, width, closed, _mesh_key(width, closed, avoid))


def _kept_floor(free: FreeFloor, home: Home, width: float, closed: frozenset[str], key: _MeshKey) -> BaseGeometry:
    return _FLOORS.get_or_make(key, lambda: _cut_floor(free.geometry, home, width, closed, key[2]), (free,))


def _cut_floor(floor: BaseGeometry, home: Home, width: float, closed: frozenset[str],
               discs: tuple[tuple[float, float, float], ...]) -> BaseGeometry:
    radius = width / 2
    cuts = [polygon_from_rings(home.opening(o).polygon).buffer(radius + 0.01) for o in sorted(closed)]
    cuts += [Point(x, y).buffer(r, quad_segs=4) for x, y, r in discs]
    if cuts:
        floor = floor.difference(shapely.union_all(cuts))
    return floor


def navmesh(home: Home, width: float, closed: frozenset[str] = frozenset(),
            avoid: Sequence[Obstacle] = ()) -> NavMesh:
    """The mesh of :func:`nav_floor` (cached)."""
    key, free = _mesh_key(width, closed, avoid), free_floor_of(home, width)
    return _MESHES.get_or_make(key, lambda: NavMesh(_kept_floor(free, home, width, closed, key)), (free,))
