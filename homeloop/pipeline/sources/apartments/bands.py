"""The band steps: rooms lie in two bands, south and north, on either side of a corridor along
x. Each room gets a width from the area its kind calls for and a place in the shorter band;
the bands are then brought to one length, and the recess of an L or U settled in the north band."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rects import _mm
from homeloop.pipeline.sources.apartments.rooms import _Room
from homeloop.pipeline.sources.apartments.variants import NOTCH_MM

#: Room kinds a band may stretch to reach the length of the other.
STRETCHABLE = ("bed", "living", "kitchen", "kitchen_dining")
#: The largest area (mm²) a stretched room of each kind may reach.
STRETCH_CAP = {"bed": 20_000_000, "living": 40_000_000, "kitchen": 16_000_000, "kitchen_dining": 20_000_000}


def room_width(drawing: ApartmentDrawing, room: _Room, d: int) -> int:
    """A room's width (mm) drawn for a band ``d`` deep, from the area its kind calls for."""
    rng, k = drawing.rng, room.kind
    if k == "bed":
        a = _mm(rng, 12_000, 18_000, 250) if room is drawing.master else _mm(rng, 9_500, 13_500, 250)
        return max(2600, min(5200, (a * 1000 // d) // 10 * 10))
    if k == "bath":
        return _mm(rng, 1800, 2400) if room is drawing.first_bath else _mm(rng, 1700, 2100)
    if k == "kitchen":
        return _mm(rng, 2700, 3400)
    if k == "kitchen_dining":
        return _mm(rng, 3200, 4200)
    if k == "living":
        a = _mm(rng, 20_000, 36_000, 500)
        return max(4200, min(7500, (a * 1000 // d) // 10 * 10))
    if k == "office":
        return max(2400, min(3600, (_mm(rng, 7_500, 11_000, 250) * 1000 // d) // 10 * 10))
    if k == "dining":
        return max(2800, min(4200, (_mm(rng, 9_000, 14_000, 250) * 1000 // d) // 10 * 10))
    if k == "wc":
        return _mm(rng, 1200, 1500)
    if k == "laundry":
        return _mm(rng, 1600, 2000)
    return _mm(rng, 1200, 1800)


def place_rooms(drawing: ApartmentDrawing) -> None:
    """Longest rooms first, each to the shorter band (the only one of a long unit, the north
    one of a flat without a corridor), at a random place in it; the recess of an L or U
    counts in the north band from the start. An empty band gets a storeroom."""
    bands, depths, others = drawing.bands, drawing.depths, drawing.others
    if not drawing.hall:
        for b in "SN":
            for r in bands[b]:
                r.width = room_width(drawing, r, depths[b])
    if drawing.shape in ("L", "U"):
        bands["N"].append(_Room("notch", "", width=_mm(drawing.rng, *NOTCH_MM, 50)))
    mean_depth = (drawing.ds + drawing.dn) // 2
    for r in others:
        r.width = room_width(drawing, r, mean_depth)
    others.sort(key=lambda r: -r.width)
    for r in others:
        if drawing.hall or drawing.shape == "long":
            b = "N" if drawing.hall else "S"
        else:
            lens = {b: drawing.band_len(b) for b in "SN"}
            b = min("SN", key=lambda k: (lens[k], k))
        r.width = room_width(drawing, r, depths[b])
        bands[b].insert(drawing.insert_pos(bands[b]), r)
    if drawing.hall:
        _fit_hall_living(drawing)
    for b in "SN":
        if not bands[b] and not (b == "N" and drawing.shape == "long"):
            bands[b].append(_Room("store", "STOREROOM", width=_mm(drawing.rng, 1200, 1800)))


def _fit_hall_living(drawing: ApartmentDrawing) -> None:
    """The living room that is the hall runs the whole length: keep it within 40 m² at
    3 m deep, narrowing the north band's rooms where it runs long."""
    dn, ti = drawing.dn, drawing.ti
    excess = drawing.band_len("N") - 13_300
    if excess > 0:
        floor = {"bed": max(2600, -(-9_000_000 // dn) + 10), "kitchen": 2700, "kitchen_dining": 3200}
        slack = [(r, r.width - floor[r.kind]) for r in drawing.bands["N"] if r.kind in floor]
        total = sum(sl for _, sl in slack) or 1
        for r, sl in slack:
            r.width -= min(sl, excess * sl // total + 10)
    drawing.living.width = drawing.band_len("N")
    ds = max(3000, min(drawing.ds, (40_000_000 // drawing.living.width) // 10 * 10))
    drawing.ds = drawing.depths["S"] = ds
    drawing.D = ds + dn + ti


def balance_bands(drawing: ApartmentDrawing) -> None:
    """Bring the bands to a common length ``drawing.W``: add a laundry or storage where the
    short band's rooms cannot stretch that far, then stretch its rooms up to their caps,
    then all of them alike. A long unit has one band, as long as it is."""
    if drawing.shape == "long":
        drawing.W = drawing.band_len("S")
        return
    _fill_short_band(drawing)
    bands, depths = drawing.bands, drawing.depths
    lens = {b: drawing.band_len(b) for b in "SN"}
    drawing.W = max(lens.values())
    short = min("SN", key=lambda k: (lens[k], k))
    gap = drawing.W - lens[short]
    stretch = [r for r in bands[short] if r.kind in STRETCHABLE]
    spare = [max(0, _max_width(r, depths[short]) - r.width) for r in stretch]
    if gap > sum(spare):
        stretch, spare = bands[short], [r.width for r in bands[short]]
    if not gap:
        return
    given = [gap * sp // max(1, sum(spare)) for sp in spare]
    given[0] += gap - sum(given)
    for r, g in zip(stretch, given):
        r.width += g


def _fill_short_band(drawing: ApartmentDrawing) -> None:
    """Up to three times, a laundry or storeroom into the shorter band where its rooms cannot
    stretch to the other's length."""
    rng, ti, bands, depths = drawing.rng, drawing.ti, drawing.bands, drawing.depths
    for _ in range(3):
        lens = {b: drawing.band_len(b) for b in "SN"}
        short = min("SN", key=lambda k: (lens[k], k))
        gap = max(lens.values()) - lens[short]
        room_for = sum(
            max(0, _max_width(r, depths[short]) - r.width) for r in bands[short] if r.kind in STRETCHABLE
        )
        if gap <= room_for or gap - ti < 1200:
            break
        laundry = not drawing.laundry and not drawing.small and rng.random() < 0.3
        kind, sub = ("laundry", "WASH_AND_DRY_ROOM") if laundry else ("store", "STOREROOM")
        drawing.laundry = drawing.laundry or kind == "laundry"
        filler = _Room(kind, sub, width=min(gap - ti, 2000) // 10 * 10)
        bands[short].insert(drawing.insert_pos(bands[short]), filler)


def _max_width(room: _Room, depth: int) -> int:
    """How wide a room may be stretched in a band of ``depth``."""
    return STRETCH_CAP[room.kind] // depth


def settle_notch(drawing: ApartmentDrawing) -> None:
    """Put the recess of an L at the east end of the north band, that of a U between two of
    its rooms (an L where no two rooms can part); a band with no room besides it keeps a
    storeroom in its place."""
    band = drawing.bands["N"]
    notch = next((r for r in band if r.kind == "notch"), None)
    if notch is None:
        return
    at = band.index(notch)
    band.remove(notch)
    spots = [k for k in range(1, len(band)) if not drawing.open_pair(band[k - 1], band[k])]
    if drawing.shape == "U" and spots:
        band.insert(drawing.rng.choice(spots), notch)
    elif band:
        band.append(notch)
    else:
        band.insert(at, _Room("store", "STOREROOM", width=notch.width))
