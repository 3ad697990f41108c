"""Candidate poses of a piece of furniture and the rectangles they make, vectorised over poses.

A :class:`Candidates` holds many poses of one item (centre, heading) and each one's
preference from the generator that made it; the functions here turn them into corners,
footprint polygons and segments in home coordinates, all candidates in one array pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from homeloop.core.home import Pose


@dataclass
class Candidates:
    """Candidate poses of an item (centre, heading) and their generator's own preference."""

    cx: np.ndarray
    cy: np.ndarray
    yaw: np.ndarray
    quality: np.ndarray  # generator's own preference, higher first

    @staticmethod
    def at(pose: Pose) -> "Candidates":
        return Candidates(np.array([pose.x]), np.array([pose.y]), np.array([pose.yaw]), np.zeros(1))

    @cached_property
    def cos(self) -> np.ndarray:
        return np.cos(self.yaw)

    @cached_property
    def sin(self) -> np.ndarray:
        return np.sin(self.yaw)

    @staticmethod
    def empty() -> "Candidates":
        z = np.zeros(0)
        return Candidates(z, z, z, z)

    @staticmethod
    def concat(parts: Sequence["Candidates"]) -> "Candidates":
        parts = [p for p in parts if len(p.cx)]
        if not parts:
            return Candidates.empty()
        return Candidates(*(np.concatenate([getattr(p, a) for p in parts]) for a in ("cx", "cy", "yaw", "quality")))

    def __len__(self) -> int:
        return len(self.cx)

    def take(self, idx: np.ndarray) -> "Candidates":
        """The candidates at ``idx`` (with their cosines and sines, where measured)."""
        sub = Candidates(self.cx[idx], self.cy[idx], self.yaw[idx], self.quality[idx])
        for trig in ("cos", "sin"):
            if trig in self.__dict__:
                sub.__dict__[trig] = self.__dict__[trig][idx]
        return sub

    def rounded(self) -> "Candidates":
        """Poses as the home file stores them (mm, 1e-4 rad)."""
        return Candidates(np.round(self.cx, 3), np.round(self.cy, 3), np.round(wrap(self.yaw), 4), self.quality)


def rectangle_corners(poses: Candidates, depth: float, width: float, ox: float = 0.0, oy: float = 0.0) -> np.ndarray:
    """The corners (poses, 4, 2) of rectangles given in each item's frame (centre ox, oy;
    extent depth along x, width along y), in home coordinates; vectorised over poses."""
    lx = np.array([ox - depth / 2, ox + depth / 2, ox + depth / 2, ox - depth / 2])
    ly = np.array([oy - width / 2, oy - width / 2, oy + width / 2, oy + width / 2])
    return in_home(poses, lx, ly)


def in_home(poses: Candidates, lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    """Points given in each item's frame (``lx``, ``ly``), in home coordinates: (poses, points, 2)."""
    c, s = poses.cos[:, None], poses.sin[:, None]
    out = np.empty((len(poses), len(lx), 2))
    out[..., 0] = poses.cx[:, None] + c * lx - s * ly
    out[..., 1] = poses.cy[:, None] + s * lx + c * ly
    return out


def rectangles(corners: np.ndarray) -> np.ndarray:
    """Polygons from corners (n, 4, 2), each ring closed on its first corner; built from one
    flat coordinate array, which is the cheapest way to make many small polygons."""
    n = len(corners)
    rings = np.concatenate([corners, corners[:, :1]], axis=1).reshape(-1, 2)
    offsets = (np.arange(0, 5 * n + 1, 5), np.arange(n + 1))
    return shapely.from_ragged_array(shapely.GeometryType.POLYGON, rings, offsets)


def boxes(poses: Candidates, depth: float, width: float, ox: float = 0.0, oy: float = 0.0) -> np.ndarray:
    """The rectangles of :func:`rectangle_corners` as polygons."""
    return rectangles(rectangle_corners(poses, depth, width, ox, oy))


def segments(poses: Candidates, p: tuple[float, float], q: tuple[float, float]) -> np.ndarray:
    """Segments from p to q given in each item's frame, in home coordinates."""
    return shapely.linestrings(in_home(poses, np.array([p[0], q[0]]), np.array([p[1], q[1]])))


def to_local(x: np.ndarray, y: np.ndarray, pose: Pose) -> tuple[np.ndarray, np.ndarray]:
    """Points in home coordinates, in the frame of ``pose``."""
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    dx, dy = x - pose.x, y - pose.y
    return c * dx + s * dy, -s * dx + c * dy


def from_local(tp: Pose, u: np.ndarray, v: np.ndarray, yaw: np.ndarray, q: np.ndarray) -> Candidates:
    """Candidates given in the frame of ``tp`` (centre u, v; heading yaw), in home coordinates."""
    c, s = math.cos(tp.yaw), math.sin(tp.yaw)
    return Candidates(tp.x + c * u - s * v, tp.y + s * u + c * v, tp.yaw + yaw, q)


def wrap(a: np.ndarray | float) -> np.ndarray:
    """Angles wrapped into [-pi, pi)."""
    return (np.asarray(a) + math.pi) % (2 * math.pi) - math.pi


def aranges(start: np.ndarray, stop: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """``np.arange(start[i], stop[i], step)`` for every row at once, value for value as
    numpy makes it (the second value is start + step, the others start + i * (that - start)),
    with the row of each value."""
    count = np.maximum(np.ceil((stop - start) / step), 0).astype(int)
    row = np.repeat(np.arange(len(start)), count)
    i = np.arange(len(row)) - np.repeat(np.cumsum(count) - count, count)
    second = start + step
    values = start[row] + i * (second - start)[row]
    values[i == 1] = second[row[i == 1]]
    return row, values


def touched(boxes: np.ndarray, shapes: Sequence[BaseGeometry]) -> np.ndarray:
    """The indices of the ``boxes`` that meet any of the ``shapes``. The many boxes go into the
    STRtree and the few shapes query it, each shape prepared once rather than every box."""
    if not len(boxes) or not len(shapes):
        return np.zeros(0, int)
    return np.unique(shapely.STRtree(boxes).query(shapes, predicate="intersects")[1])


def overlap_area(boxes: np.ndarray, poly: BaseGeometry) -> np.ndarray:
    """The area each rectangle shares with ``poly`` (0 where they do not meet)."""
    out = np.zeros(len(boxes))
    if not len(boxes):
        return out
    meet = np.flatnonzero(shapely.intersects(boxes, poly))
    if len(meet):
        out[meet] = shapely.area(shapely.intersection(boxes[meet], poly))
    return out
