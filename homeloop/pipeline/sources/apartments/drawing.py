"""One apartment being drawn: :class:`ApartmentDrawing`, the state every drawing step works on.

It holds the generator, the elements drawn so far (spaces, walls, openings, features), the
rooms and doors, and what the programme step decided (wall thicknesses, shape, band depths,
the rooms of each band); its methods add elements and answer what the steps ask of the
layout so far (a band's length, what is in the way of a search).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from homeloop.pipeline.sources.apartments.rects import (
    AREA,
    FEATURE,
    OPENING,
    Element,
    Rect,
    clear_zones,
    inside,
    overlaps,
)
from homeloop.pipeline.sources.apartments.rooms import _Apartment, _Door, _Room

#: The partition between two neighbours in a band: (x of its west face, its y range, whether the
#: hall is at its north end).
PartitionWall = tuple[int, int, int, bool]
#: A door planned between neighbours: (host, inner room, west neighbour, east neighbour, the wall).
Link = tuple[_Room, _Room, _Room, _Room, PartitionWall]


@dataclass
class _Near:
    """What is in the way within a search's envelope (:meth:`ApartmentDrawing.near`)."""

    solid: list[Rect]  # walls, columns, railings, fixtures, openings, floor kept free
    zones: list[Rect]  # the clear zones of the doors
    openings: list[Rect]

    def blocked(self, rect: Rect) -> bool:
        return any(overlaps(rect, r) for r in self.solid)

    def in_door_zone(self, rect: Rect) -> bool:
        return any(overlaps(rect, z) for z in self.zones)

    def door_fits(self, rect: Rect, rooms: tuple[_Room, ...]) -> bool:
        """Whether a door may go at ``rect``: no door's clear zone reaches it, and each of its own
        clear zones lies inside one of ``rooms``, clear of everything drawn."""
        if self.in_door_zone(rect):
            return False
        return all(any(inside(z, r.rect) for r in rooms) and not self.blocked(z) for z in clear_zones(rect))


class ApartmentDrawing:
    """One apartment being drawn in its own frame: the elements so far and the layout decided."""

    # What the programme step draws (homeloop.pipeline.sources.apartments.programme).
    small: bool  # one or two bedrooms
    hall: bool  # no corridor: the living room is the hall
    shape: str  # a key of SHAPES
    te: int  # exterior wall thickness (mm)
    ti: int  # interior wall thickness (mm)
    c: int  # corridor width (mm), 0 without one
    ds: int  # depth (mm) of the south band
    dn: int  # depth (mm) of the north band
    D: int  # depth (mm) of the whole unit, south facade to north facade
    section: bool  # whether the living room takes a section across both bands at the west end
    depths: dict[str, int]  # band -> depth
    living: _Room
    kitchen: _Room
    others: list[_Room]  # the rooms still to be placed in a band
    bands: dict[str, list[_Room]]  # band ("S", "N") -> its rooms from west to east
    lw: int  # width (mm) of the living section, 0 without one
    master: _Room | None
    first_bath: _Room | None
    laundry: bool  # whether the unit has a laundry room
    # What the band and space steps decide.
    W: int  # length (mm) of the bands
    cy0: int  # the corridor's south face (y, mm)
    cy1: int  # its north face
    y_n: int  # the north band's south face
    corridor: _Room | None

    def __init__(self, rng: random.Random, bedrooms: int, ground: bool, corner: bool = False):
        self.rng = rng
        self.bedrooms = bedrooms
        self.ground = ground
        self.corner = corner
        self.elements: list[Element] = []
        self.rooms: list[_Room] = []
        self.doors: list[_Door] = []
        self.reserved: list[Rect] = []  # floor kept free: the fridge's place and the floor before it
        self.links: list[Link] = []
        self.n_areas = 0

    # -- elements

    def add(self, etype: str, subtype: str, geom: Rect, area: int = -1) -> int:
        """Add an element; its index."""
        self.elements.append((etype, subtype, geom, area))
        return len(self.elements) - 1

    def add_area(self, room: _Room) -> None:
        """Add the room's space, numbered in the order added."""
        room.area = self.n_areas
        self.n_areas += 1
        self.add(AREA, room.subtype, room.rect, room.area)
        self.rooms.append(room)

    def feature(self, room: _Room, subtype: str, u0: int, v0: int, u1: int, v1: int) -> int:
        """Add a feature given in the room's frame."""
        i = self.add(FEATURE, subtype, room.map(u0, v0, u1, v1), room.area)
        room.features.append(i)
        return i

    def add_door(self, rect: Rect, rooms: tuple[_Room | None, _Room | None], subtype: str = "DOOR") -> int:
        """Add a door between ``rooms`` (None: outside)."""
        i = self.add(OPENING, subtype, rect)
        self.doors.append(_Door(i, rect, rooms))
        return i

    def near(self, envelope: Rect) -> _Near:
        """What is in the way within ``envelope`` (the whole extent of a search): the walls,
        columns, railings, fixtures and openings drawn so far and the floor kept free
        (:attr:`reserved`) that reach into it, and the doors' clear zones that do. Every
        candidate of the search lies inside the envelope, so it is tested against these few."""
        solid = [e[2] for e in self.elements if e[0] != AREA and overlaps(envelope, e[2])]
        solid += [r for r in self.reserved if overlaps(envelope, r)]
        zones = [z for d in self.doors for z in d.zones() if overlaps(envelope, z)]
        openings = [e[2] for e in self.elements if e[0] == OPENING and overlaps(envelope, e[2])]
        return _Near(solid, zones, openings)

    def apartment(self) -> _Apartment:
        """The drawing as it stands, with the box round its elements."""
        xs = [g[0] for _, _, g, _ in self.elements] + [g[2] for _, _, g, _ in self.elements]
        ys = [g[1] for _, _, g, _ in self.elements] + [g[3] for _, _, g, _ in self.elements]
        return _Apartment(self.elements, self.rooms, self.doors, (min(xs), min(ys), max(xs), max(ys)))

    # -- the bands

    def band_len(self, b: str) -> int:
        """The length (mm) of a band: its rooms, the walls between them, the living section."""
        rooms = self.bands[b]
        if not rooms:
            return 0
        walls = sum(0 if self.open_pair(rooms[i], rooms[i + 1]) else self.ti for i in range(len(rooms) - 1))
        return sum(r.width for r in rooms) + walls + self.band_start(b, rooms)

    def open_pair(self, a: _Room, b: _Room) -> bool:
        """Whether two neighbours are the living room and the kitchen open to it (no wall between)."""
        return {a.kind, b.kind} == {"living", "kitchen_dining"} and self.kitchen.open_to_living

    def band_start(self, b: str, rooms: list[_Room]) -> int:
        """Where a band's first room starts (x, mm): past the living section and its wall."""
        if not self.lw:
            return 0
        first = rooms[0]
        return self.lw if (first.kind == "kitchen_dining" and first.open_to_living) else self.lw + self.ti

    def insert_pos(self, rooms: list[_Room]) -> int:
        """A place in a band that splits neither the living/kitchen pair nor
        an open kitchen from the living section."""
        allowed = [
            i
            for i in range(len(rooms) + 1)
            if not (0 < i < len(rooms) and self.open_pair(rooms[i - 1], rooms[i]))
            and not (i == 0 and rooms and rooms[0].open_to_living and self.lw)
        ]
        return self.rng.choice(allowed)

    def notch_span(self) -> tuple[int, int | None] | None:
        """(x of the west face of the recess, x of its east face or None when it reaches the east
        end): the gap in the north band of an L or U, or None."""
        band = self.bands["N"]
        notch = next((r for r in band if r.kind == "notch"), None)
        if notch is None:
            return None
        east = notch.rect[2] + self.ti if notch is not band[-1] else None
        return notch.rect[0] - self.ti, east
