"""What a frame shows, read from the renderer's id buffer (docs/skills.md, perception's gates).

The :class:`IdBufferVisibility` backend answers the question of
:class:`homeloop.sim.visibility.Visibility` from pixels: every pixel's ray
names the entity it meets first (window glass is seen through, and names its
window in a layer of its own), so for each entity of the frame (the same
entities, labels and rooms as the geometric backend,
:meth:`GeometricVisibility.entities`):

- its **pixel box** is the bounding box of its visible pixels, and its area
  the box's;
- its **unoccluded fraction** is its visible pixels over the pixels of its
  unoccluded projection. The projection is measured by casting rays through
  pixels of its projected box against the entity alone (at most
  :data:`COVERAGE_SAMPLES` of them, on an even grid; the same grid is read in
  the id buffer). As in the geometric backend, what an entity stands on or
  lies in (``hidden_by_none_of``: a sofa for the person sitting on it, an open
  drawer for what is in it) does not hide it, nor does what stands or lies on
  it (:func:`~homeloop.sim.visibility.resting_on`: the pan on the range): a
  pixel where such a thing is in front of the entity counts as seen;
- a person's **head seen** is the same fraction for the head alone;
- an entity with no pixel seen gets the geometric pixel box of its solid and
  an unoccluded fraction of 0 (perception will not report it).

Hazards in view come from the fire, smoke and water layers
(:mod:`homeloop.sim.render.effects`). Perception gates on the result exactly
as on the geometric backend's.

**Which backend an episode uses.** The geometric one, with images on or off,
so that the images ablation changes the pixels and nothing else
(docs/episodes.md). This backend answers the same question from the pixels:
tests hold the two to agreement, and ``homeloop render`` reports what a still
shows from it.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np

from homeloop.sim.render.raycast import Hits, pixel_bounds
from homeloop.sim.render.renderer import Renderer
from homeloop.sim.render.scene import Code
from homeloop.sim.visibility import (
    NEAR_M,
    Entity,
    Frame,
    PixelBox,
    Seen,
    Viewpoint,
    in_frame,
    not_hiding,
    pixel_box,
    resting_on,
    rounded_position,
)
from homeloop.sim.world import World

#: Most rays cast per entity to measure its unoccluded projection (and its head's).
COVERAGE_SAMPLES = 256


class IdBufferVisibility:
    """The id-buffer :class:`~homeloop.sim.visibility.Visibility` backend (see the module docstring).
    ``renderer``: the episode's renderer, or a function returning it (built on first use)."""

    def __init__(self, renderer: Renderer | Callable[[], Renderer]):
        self._renderer = renderer
        self._solids: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # fixed entities' samples and corners
        self._tables = _CodeTables()

    @property
    def renderer(self) -> Renderer:
        return self._renderer if isinstance(self._renderer, Renderer) else self._renderer()

    def frame(self, world: World, view: Viewpoint, hide: Iterable[str] = ()) -> Frame:
        renderer = self.renderer
        hidden = set(hide) | renderer.housings_at(view)
        buffers = renderer.buffers(world, view, hidden)
        entities = [e for e in buffers.entities if e.id not in hidden]
        shares, boxes = self._solid_view(view, entities)
        ids = _EntityPixels(renderer, buffers.hits, entities, self._tables)
        resting = resting_on(entities)
        seen = [s for i, e in enumerate(entities) if (s := ids.seen(i, e, shares[i], boxes[i], resting)) is not None]
        return Frame(seen, [dict(h) for h in buffers.layers.hazards])

    def _solid_view(self, view: Viewpoint, entities: list[Entity]) -> tuple[np.ndarray, list[PixelBox | None]]:
        """Each entity's share of solid samples in the frame and its solid's pixel box, worked out for
        all of them at once (as :func:`in_frame` and :func:`pixel_box` do one by one)."""
        samples, corners = zip(*(self._solid(e) for e in entities)) if entities else ((), ())
        shares = _shares(view, list(samples))
        return shares, _solid_boxes(view, list(corners), entities)

    def _solid(self, e: Entity) -> tuple[np.ndarray, np.ndarray]:
        if e.kind in ("object", "person"):  # these move: their solids are made anew each frame
            return e.solid.samples(), e.solid.corners()
        if e.id not in self._solids:
            self._solids[e.id] = (e.solid.samples(), e.solid.corners())
        return self._solids[e.id]


def _shares(view: Viewpoint, samples: list[np.ndarray]) -> np.ndarray:
    if not samples:
        return np.zeros(0)
    counts = np.array([len(p) for p in samples])
    inside = in_frame(view, np.vstack(samples)).astype(np.float64)
    shares: np.ndarray = np.add.reduceat(inside, np.concatenate([[0], np.cumsum(counts)[:-1]])) / counts
    return shares


def _solid_boxes(view: Viewpoint, corners: list[np.ndarray], entities: list[Entity]) -> list[PixelBox | None]:
    """:func:`pixel_box` of every entity's solid: at once where all its corners are in front of the
    camera, one by one where the near plane cuts it."""
    if not corners:
        return []
    counts = np.array([len(c) for c in corners])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    cam = view.camera_coords(np.vstack(corners))
    front = cam[:, 2] >= NEAR_M
    uv = view.to_pixels(np.where(front[:, None], cam, [0.0, 0.0, 1.0]))
    lo = np.clip(np.minimum.reduceat(uv, starts), 0, [view.width, view.height])
    hi = np.clip(np.maximum.reduceat(uv, starts), 0, [view.width, view.height])
    every, some = np.logical_and.reduceat(front, starts), np.logical_or.reduceat(front, starts)
    boxes: list[PixelBox | None] = []
    for k, e in enumerate(entities):
        if not some[k]:
            boxes.append(None)
        elif not every[k]:
            boxes.append(pixel_box(view, e.solid))
        else:
            box = (math.floor(lo[k, 0]), math.floor(lo[k, 1]), math.ceil(hi[k, 0]), math.ceil(hi[k, 1]))
            boxes.append(box if box[2] > box[0] and box[3] > box[1] else None)
    return boxes


class _EntityPixels:
    """The id buffer as entity indices, with each entity's visible pixel count and extent."""

    def __init__(self, renderer: Renderer, hits: Hits, entities: list[Entity], tables: _CodeTables):
        self.renderer, self.hits, self.view = renderer, hits, hits.view
        self.index = {e.id: i for i, e in enumerate(entities)}
        lookup, head = tables(renderer.scene.codes, self.index)
        self.opaque = np.take(lookup, hits.code)  # code -1 picks the trailing -1
        self.glass = np.take(lookup, hits.glass)
        n, width = len(entities), self.view.width
        self.count, self.extent = _extents([self.opaque, self.glass] if (hits.glass >= 0).any() else [self.opaque],
                                           width, n)
        self.head_count, _ = _extents([np.where(head[hits.code], self.opaque, -1)], width, n)

    def seen(self, i: int, e: Entity, share_in: float, solid_box: PixelBox | None,
             resting: dict[str, tuple[str, ...]]) -> Seen | None:
        hosts = [self.index[h] for h in not_hiding(e, resting) if h != e.id and h in self.index]
        box, unoccluded, head = None, 0.0, None if e.head is None else 0.0
        if self.count[i] or any(self.count[h] > 0 for h in hosts):
            unoccluded, extra = self._unoccluded(i, e.id, None, hosts)
            box = _union(self.extent[i] if self.count[i] else None, extra)
            if e.head is not None and self.head_count[i]:
                head = self._unoccluded(i, e.id, "head", hosts)[0]
        if box is None:  # nothing of it seen: its solid's box, wholly hidden
            box, unoccluded = solid_box, 0.0
            if box is None or share_in == 0.0:
                return None
        return _seen(e, box, max(share_in, 1e-4), unoccluded, head)

    def _unoccluded(self, i: int, entity: str, part: str | None, hosts: list[int]
                    ) -> tuple[float, PixelBox | None]:
        """Seen share of the entity's (or part's) projection on an even grid of its projected box,
        and the box of the grid points seen only through a host."""
        alone = self.renderer.caster.alone(entity, part)
        box = pixel_bounds(self.view, alone.mesh.vertices, alone.mesh.faces)
        if box is None:
            return 0.0, None
        idx = _grid(box, self.view.width, COVERAGE_SAMPLES)
        _, face = alone.cast(self.view, self.hits.directions[idx])
        covered = face >= 0
        mine = self.opaque[idx] == i
        if part is not None:
            mine &= np.isin(self.hits.code[idx], alone.codes)
        else:
            mine |= self.glass[idx] == i
        through = covered & ~mine & np.isin(self.opaque[idx], hosts) if hosts else np.zeros(len(idx), bool)
        shown = mine | through
        projected = max(int(covered.sum()), int(shown.sum()))
        extra = None
        if through.any():
            w = self.view.width
            ys, xs = idx[through] // w, idx[through] % w
            extra = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
        return (round(int(shown.sum()) / projected, 4) if projected else 0.0), extra


class _CodeTables:
    """Per code of a scene (and a trailing entry for code -1): the index of its entity among a
    frame's entities (-1 for none), and whether it is a head; the last ones kept while the codes and
    the entities are the same (a scene only ever adds codes)."""

    def __init__(self) -> None:
        self._last: tuple[list[Code], int, tuple[tuple[str, int], ...], np.ndarray, np.ndarray] | None = None

    def __call__(self, codes: list[Code], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        entities = tuple(index.items())
        last = self._last
        if last is not None and last[0] is codes and last[1] == len(codes) and last[2] == entities:
            return last[3], last[4]
        lookup = np.array([index.get(c.entity, -1) if c.entity else -1 for c in codes] + [-1], dtype=np.int64)
        head = np.array([c.part == "head" for c in codes] + [False])
        self._last = (codes, len(codes), entities, lookup, head)
        return lookup, head


def _extents(labels: list[np.ndarray], width: int, n: int) -> tuple[np.ndarray, list[PixelBox | None]]:
    """Pixel count and bounding box (x0, y0, x1, y1) of each label 0..n-1 over label images given
    row-major (-1: none), from their runs along rows."""
    count = np.zeros(n, dtype=np.int64)
    x0, y0 = np.full(n, np.iinfo(np.int64).max), np.full(n, np.iinfo(np.int64).max)
    x1, y1 = np.full(n, -1), np.full(n, -1)
    for flat in labels:
        if not len(flat) or n == 0:
            continue
        change = np.empty(len(flat), dtype=bool)
        change[0] = True
        np.not_equal(flat[1:], flat[:-1], out=change[1:])
        change[::width] = True
        starts = np.flatnonzero(change)
        ends = np.append(starts[1:], len(flat))
        ids = flat[starts]
        keep = ids >= 0
        starts, ends, ids = starts[keep], ends[keep], ids[keep]
        count += np.bincount(ids, weights=ends - starts, minlength=n).astype(np.int64)
        np.minimum.at(x0, ids, starts % width)
        np.minimum.at(y0, ids, starts // width)
        np.maximum.at(x1, ids, (ends - 1) % width + 1)
        np.maximum.at(y1, ids, starts // width + 1)
    boxes = [(int(x0[k]), int(y0[k]), int(x1[k]), int(y1[k])) if count[k] else None for k in range(n)]
    return count, boxes


def _grid(box: tuple[int, int, int, int], width: int, samples: int) -> np.ndarray:
    """Pixel indices of an even grid of at most about ``samples`` points over a box."""
    x0, y0, x1, y1 = box
    step = max(1, math.ceil(math.sqrt((x1 - x0) * (y1 - y0) / samples)))
    xs = np.arange(x0 + (step - 1) // 2, x1, step)
    ys = np.arange(y0 + (step - 1) // 2, y1, step)
    grid: np.ndarray = (ys[:, None] * width + xs[None, :]).ravel()
    return grid


def _union(a: PixelBox | None, b: PixelBox | None) -> PixelBox | None:
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _seen(e: Entity, box: PixelBox, share_in: float, unoccluded: float, head: float | None) -> Seen:
    x0, y0, x1, y1 = box
    return Seen(e.kind, e.id, e.label, e.rooms, (x0, y0, x1, y1), (x1 - x0) * (y1 - y0), round(share_in, 4),
                round(unoccluded, 4), rounded_position(e.position),
                None if head is None else round(head, 4), dict(e.extra))
