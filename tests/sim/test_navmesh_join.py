"""The navigation mesh's joins and parts (homeloop/sim/robot/navmesh.py), worked out with arrays, are
those of the plain walk they stand for: the edges met triangle by triangle, an edge met again joined
to the triangle that met it first, in the same order, and each connected part numbered by its lowest
triangle."""

from __future__ import annotations

import math

import numpy as np
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely.geometry import box

from homeloop.sim.robot.navmesh import NavMesh, _components, _first_equal_rows


def walked_joins(coords: np.ndarray) -> list[list[tuple[int, tuple[float, tuple[tuple[float, float], ...]]]]]:
    """The joins of a mesh's triangles, met half-edge by half-edge with a dict: (neighbour, (centroid
    distance, shared edge's ends in order)) per triangle, in the order they were joined."""
    centres = coords.mean(axis=1).tolist()
    joined: list[dict[int, tuple[float, tuple[tuple[float, float], ...]]]] = [{} for _ in range(len(coords))]
    first: dict[tuple[float, ...], int] = {}
    for i, corners in enumerate(coords.tolist()):
        for k in range(3):
            p, q = tuple(corners[k]), tuple(corners[(k + 1) % 3])
            key = (*p, *q) if p < q else (*q, *p)
            if key not in first:
                first[key] = i
                continue
            j = first[key]
            w = math.hypot(centres[i][0] - centres[j][0], centres[i][1] - centres[j][1])
            joined[j][i] = joined[i][j] = (w, ((key[0], key[1]), (key[2], key[3])))
    return [list(d.items()) for d in joined]


def walked_parts(n: int, a: list[int], b: list[int]) -> list[int]:
    """Each node's part, by a walk from each node not reached yet, lowest first."""
    near: list[list[int]] = [[] for _ in range(n)]
    for u, v in zip(a, b):
        near[u].append(v)
        near[v].append(u)
    part, label = [-1] * n, 0
    for start in range(n):
        if part[start] >= 0:
            continue
        part[start], todo = label, [start]
        while todo:
            for v in near[todo.pop()]:
                if part[v] < 0:
                    part[v] = label
                    todo.append(v)
        label += 1
    return part


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(*[st.sampled_from([-1.5, -0.0, 0.0, 0.5, 2.0])] * 4), min_size=1, max_size=40))
def test_each_row_points_to_the_first_row_equal_to_it(rows):
    keys = np.array(rows, dtype=float)
    first = _first_equal_rows(keys)
    for i, row in enumerate(rows):
        assert first[i] == min(j for j, other in enumerate(rows) if other == row)  # -0.0 == 0.0, as floats compare


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), data=st.data())
def test_parts_are_numbered_as_a_walk_from_the_lowest_node_numbers_them(n, data):
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    a, b = [u for u, _ in pairs], [v for _, v in pairs]
    parts = _components(n, np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
    assert parts.tolist() == walked_parts(n, a, b)


@settings(max_examples=30, deadline=None)
@given(holes=st.lists(st.tuples(st.floats(0.3, 5.2), st.floats(0.3, 3.2), st.floats(0.1, 0.6)), max_size=5),
       wall=st.booleans())
def test_a_mesh_joins_its_triangles_as_the_walk_over_their_edges_does(holes, wall):
    floor = box(0.0, 0.0, 6.0, 4.0)
    cuts = [shapely.Point(x, y).buffer(r, quad_segs=4) for x, y, r in holes]
    if wall:  # a wall across the floor leaves two parts
        cuts.append(box(2.9, -1.0, 3.1, 5.0))
    if cuts:
        floor = floor.difference(shapely.union_all(cuts))
    mesh = NavMesh(floor)
    assert [list(d.items()) for d in mesh.neighbours] == walked_joins(mesh.coords)
    a = [i for i, d in enumerate(mesh.neighbours) for j in d if i < j]
    b = [j for i, d in enumerate(mesh.neighbours) for j in d if i < j]
    assert mesh.component.tolist() == walked_parts(len(mesh.coords), a, b)
    if wall:
        assert len(set(mesh.component.tolist())) >= 2
