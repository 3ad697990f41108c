"""The navigation mesh: the free floor cut into triangles (a constrained Delaunay triangulation),
joined across their shared edges, that routes are searched over.

A* (networkx) finds the corridor of triangles from start to goal and the funnel
algorithm pulls the path taut inside it, so it bends only at corners of the free
floor. A mesh is built once per home, body width, set of closed-off doorways and
set of discs to avoid, and kept in a small cache, so repeated queries in one
home reuse it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Sequence

import networkx as nx
import numpy as np
import shapely
import shapely.ops
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.core.home import Home, polygon_from_rings
from homeloop.core.navigation import free_floor_of
from homeloop.sim.robot.obstacles import OBSTACLE_MARGIN, Obstacle

#: A* over triangle centroids can pick a corridor a little longer than the best one. So a second
#: corridor is searched with the first one's crossings this many times as costly, both are pulled
#: taut, and the shorter is kept (``benchmarks/sim_robot.py --exact N`` prints how close the paths
#: then come to the exact shortest, from a visibility graph of every corner).
ALTERNATIVE_PENALTY = 2.0

_MESH_CACHE_SIZE = 32

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
        tris = [t for t in parts if t.area > 1e-12]
        self.triangles = np.asarray(tris, dtype=object)
        self.coords = np.array([np.asarray(t.exterior.coords)[:3] for t in tris]).reshape(-1, 3, 2)
        self.centroids = self.coords.mean(axis=1)
        self._centres = [tuple(c) for c in self.centroids.tolist()]  # plain floats: A* reads them a lot
        self.tree = shapely.STRtree(self.triangles)
        self.graph = self._join()
        self.component = np.zeros(len(tris), dtype=int)
        for c, nodes in enumerate(sorted(nx.connected_components(self.graph), key=min)):
            self.component[list(nodes)] = c

    def _join(self) -> nx.Graph[int]:
        graph: nx.Graph[int] = nx.Graph()
        graph.add_nodes_from(range(len(self.coords)))
        first: dict[tuple[XY, XY], int] = {}
        cent = self.centroids
        for i, tri in enumerate(self.coords.tolist()):
            for a, b in ((0, 1), (1, 2), (2, 0)):
                p, q = tuple(tri[a]), tuple(tri[b])
                key = (p, q) if p < q else (q, p)
                j = first.setdefault(key, i)
                if j != i:
                    w = float(math.hypot(*(cent[i] - cent[j])))
                    graph.add_edge(j, i, weight=w, portal=key)
        return graph

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
        cent = self._centres

        def h(u: int, v: int) -> float:
            return math.dist(cent[u], cent[v])

        if not avoid:
            return nx.astar_path(self.graph, a, b, heuristic=h, weight="weight")
        used = set(zip(avoid, avoid[1:])) | set(zip(avoid[1:], avoid))

        def weight(u: int, v: int, d: dict[str, Any]) -> float:
            return float(d["weight"] * ALTERNATIVE_PENALTY if (u, v) in used else d["weight"])

        return nx.astar_path(self.graph, a, b, heuristic=h, weight=weight)

    def _portals(self, corridor: list[int], start: XY, goal: XY) -> list[tuple[XY, XY]]:
        """(left, right) edge ends crossed going along the corridor, start and goal as end portals."""
        portals = [(start, start)]
        for i, j in zip(corridor, corridor[1:]):
            p, q = self.graph.edges[i, j]["portal"]
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


_MeshKey = tuple[int, float, frozenset[str], tuple[tuple[float, float, float], ...]]
_meshes: OrderedDict[_MeshKey, tuple[Home, NavMesh]] = OrderedDict()


def navmesh(home: Home, width: float, closed: frozenset[str] = frozenset(),
            avoid: Sequence[Obstacle] = ()) -> NavMesh:
    """The mesh of the free floor for a body of ``width``, with the ``closed`` doorways cut out and
    discs around ``avoid`` removed (cached)."""
    radius = width / 2
    discs = tuple(sorted((round(o.x, 2), round(o.y, 2), round(o.radius + radius + OBSTACLE_MARGIN, 2))
                         for o in avoid))
    key = (id(home), round(width, 4), closed, discs)
    hit = _meshes.get(key)
    if hit is not None and hit[0] is home:
        _meshes.move_to_end(key)
        return hit[1]
    floor = free_floor_of(home, width).geometry
    cuts = [polygon_from_rings(home.opening(o).polygon).buffer(radius + 0.01) for o in sorted(closed)]
    cuts += [Point(x, y).buffer(r, quad_segs=4) for x, y, r in discs]
    if cuts:
        floor = floor.difference(shapely.union_all(cuts))
    mesh = NavMesh(floor)
    _meshes[key] = (home, mesh)
    while len(_meshes) > _MESH_CACHE_SIZE:
        _meshes.popitem(last=False)
    return mesh
