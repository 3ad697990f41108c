"""What an apartment drawing is made of besides its elements: the rooms being laid out, each
with the frame its fittings are placed in, the doors drawn, and the finished apartment."""

from __future__ import annotations

from dataclasses import dataclass, field

from homeloop.pipeline.sources.apartments.rects import Element, Rect, clear_zones, overlaps


@dataclass(eq=False)
class _Room:
    """A space being laid out, with the frame its fittings are placed in.

    Fittings are placed in a room frame: ``u`` runs along the door wall,
    ``v`` from the door wall (v = 0) to the opposite, exterior wall (v = d).
    ``side`` says which side of ``rect`` the door wall is on; ``flip``
    reverses ``u``.
    """

    # programme role: bed, bath, wc, kitchen, kitchen_dining, living, dining, office, store,
    # laundry; corridor, outdoor; notch (the recess of an L or U: a gap in a band, no space)
    kind: str
    subtype: str
    width: int = 0
    rect: Rect = (0, 0, 0, 0)
    side: str = "N"
    flip: bool = False
    area: int = -1
    door: int | None = None  # element index of its door to the hall
    door_u: tuple[int, int] | None = None
    door_rect: Rect | None = None  # where that door goes (drawn unless reached through ``via``)
    open_to_living: bool = False
    open_to_hall: bool = False
    has_door: bool = True
    via: _Room | None = None  # the neighbour it is reached through instead of the hall
    features: list[int] = field(default_factory=list)

    @property
    def w(self) -> int:
        x0, y0, x1, y1 = self.rect
        return x1 - x0 if self.side in "NS" else y1 - y0

    @property
    def d(self) -> int:
        x0, y0, x1, y1 = self.rect
        return y1 - y0 if self.side in "NS" else x1 - x0

    def map(self, u0: int, v0: int, u1: int, v1: int) -> Rect:
        """A rectangle in the room frame, in apartment coordinates."""
        x0, y0, x1, y1 = self.rect
        if self.side in "NS":
            xa, xb = (x1 - u1, x1 - u0) if self.flip else (x0 + u0, x0 + u1)
            ya, yb = (y0 + v0, y0 + v1) if self.side == "S" else (y1 - v1, y1 - v0)
        else:
            ya, yb = (y1 - u1, y1 - u0) if self.flip else (y0 + u0, y0 + u1)
            xa, xb = (x0 + v0, x0 + v1) if self.side == "W" else (x1 - v1, x1 - v0)
        return (xa, ya, xb, yb)


@dataclass(eq=False)
class _Door:
    """A door drawn in the plan: its element, its rectangle and the rooms on its two faces
    (None: outside the apartment)."""

    index: int
    rect: Rect
    rooms: tuple[_Room | None, _Room | None]

    def zones(self) -> tuple[Rect, Rect]:
        return clear_zones(self.rect)

    def zone_in(self, room: _Room) -> Rect:
        """The clear zone on the face of ``room``."""
        return next(z for z in self.zones() if overlaps(z, room.rect))

    def serves(self, room: _Room) -> bool:
        return any(r is room for r in self.rooms)


@dataclass
class _Apartment:
    """One apartment in its own frame: elements plus what defects need to know."""

    elements: list[Element]
    rooms: list[_Room]
    doors: list[_Door]
    bbox: Rect
