"""Which room a point of the home lies in, as a raster (docs/dynamics.md, light and smoke).

The renderer asks this of millions of points a frame (the room whose light
exposes a pixel, the room whose smoke a ray crosses, the room a wet floor
belongs to), so the rooms are rasterised once per home: a grid of cells
:data:`CELL_M` wide over the home's bounds, each holding the index of the
room containing its centre (-1 for walls and the outside). A lookup is an
array index.
"""

from __future__ import annotations

import numpy as np
import shapely

from homeloop.core.home import Home, polygon_from_rings

#: Raster cell (m): finer than a wall's thickness, so a point just in front of a wall finds its room.
CELL_M = 0.05


class RoomGrid:
    """The rooms of a home as a raster of room indices (see the module docstring)."""

    def __init__(self, home: Home, cell: float = CELL_M):
        self.rooms = [r.id for r in home.rooms]
        self.index = {rid: i for i, rid in enumerate(self.rooms)}
        polys = [polygon_from_rings(r.polygon) for r in home.rooms]
        x0, y0, x1, y1 = shapely.union_all(polys).bounds if polys else (0.0, 0.0, 1.0, 1.0)
        self.cell, self.x0, self.y0 = cell, x0, y0
        self.nx, self.ny = max(1, int(np.ceil((x1 - x0) / cell))), max(1, int(np.ceil((y1 - y0) / cell)))
        xs = x0 + (np.arange(self.nx) + 0.5) * cell
        ys = y0 + (np.arange(self.ny) + 0.5) * cell
        gx, gy = np.meshgrid(xs, ys)
        labels = np.full(gx.shape, -1, dtype=np.int16)
        for i, poly in enumerate(polys):
            px0, py0, px1, py1 = poly.bounds
            cols = slice(max(0, int((px0 - x0) / cell)), min(self.nx, int(np.ceil((px1 - x0) / cell)) + 1))
            rows = slice(max(0, int((py0 - y0) / cell)), min(self.ny, int(np.ceil((py1 - y0) / cell)) + 1))
            inside = shapely.contains_xy(poly, gx[rows, cols], gy[rows, cols])
            labels[rows, cols][inside] = i
        self.labels = labels

    def cells(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row and column of each point's cell, and whether it lies on the grid."""
        col = np.floor((x - self.x0) / self.cell).astype(np.int64)
        row = np.floor((y - self.y0) / self.cell).astype(np.int64)
        on = (col >= 0) & (col < self.nx) & (row >= 0) & (row < self.ny)
        return np.where(on, row, 0), np.where(on, col, 0), on

    def lookup(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The room index of each point (-1 where no room is)."""
        row, col, on = self.cells(np.asarray(x), np.asarray(y))
        return np.where(on, self.labels[row, col], -1).astype(np.int16)

    def coarse(self, factor: int) -> np.ndarray:
        """The raster with cells ``factor`` times wider: each coarse cell takes the room of its
        centre's fine cell."""
        rows = np.arange(factor // 2, self.ny, factor)
        cols = np.arange(factor // 2, self.nx, factor)
        return self.labels[np.ix_(rows, cols)]
