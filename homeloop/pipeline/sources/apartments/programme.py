"""The programme step: wall thicknesses, the unit's shape, the corridor, the band depths and
the rooms: the living room and kitchen, 1–5 bedrooms (``ROOM`` or ``BEDROOM``), one or two
bathrooms, and sometimes a guest WC (a ``BATHROOM`` with toilet and basin only), an office, a
dining room, a laundry, one or two storerooms."""

from __future__ import annotations

from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.rects import _mm
from homeloop.pipeline.sources.apartments.rooms import _Room
from homeloop.pipeline.sources.apartments.variants import HALL_FLAT_SHARE, KITCHEN_OPEN_TO_HALL, LONG_MAX_BEDROOMS, SHAPES


def draw_programme(drawing: ApartmentDrawing) -> None:
    """Draw the wall thicknesses, shape, corridor, band depths and rooms; the living block
    goes into a band (``drawing.bands``), the other rooms into ``drawing.others``, to be placed."""
    rng = drawing.rng
    small = drawing.small = drawing.bedrooms <= 2
    te, ti = _mm(rng, 250, 350), _mm(rng, 100, 150)
    # Small flats often have no corridor: the living room is the hall.
    hall = small and rng.random() < HALL_FLAT_SHARE
    shape = "rect" if hall else rng.choices(tuple(SHAPES), tuple(SHAPES.values()))[0]
    if shape == "long" and drawing.bedrooms > LONG_MAX_BEDROOMS:
        shape = "rect"
    c = 0 if hall else _mm(rng, 1200, 1500, 50)
    top = 3800 if small else 4200
    ds, dn = _mm(rng, 3000, top, 50), _mm(rng, 3000, top, 50)
    drawing.living, drawing.kitchen = _living_and_kitchen(drawing, hall)
    drawing.hall, drawing.shape, drawing.te, drawing.ti, drawing.c = hall, shape, te, ti, c
    if shape == "long":
        depth = ds + ti + c
    else:
        depth = ds + dn + c + (ti if hall else 2 * ti)
    section = not hall and depth * 3200 <= 40_000_000 and rng.random() < 0.35
    drawing.ds, drawing.dn, drawing.D, drawing.section = ds, dn, depth, section
    drawing.depths = {"S": ds, "N": dn}
    others = _other_rooms(drawing)
    _living_block(drawing, others)
    beds = [r for r in others if r.kind == "bed"]
    drawing.master = beds[0] if beds else None
    drawing.first_bath = next((r for r in others if r.kind == "bath"), None)
    drawing.others = others


def _living_and_kitchen(drawing: ApartmentDrawing, hall: bool) -> tuple[_Room, _Room]:
    """The living room and the kitchen: closed, kitchen-dining (maybe open to the living room)
    or a living-dining room beside a closed kitchen; a closed kitchen may open to the corridor."""
    rng = drawing.rng
    style = rng.choices(("closed", "kitchen_dining", "living_dining"), (0.45, 0.35, 0.2))[0]
    living = _Room("living", "LIVING_DINING" if style == "living_dining" else "LIVING_ROOM")
    kitchen = _Room(
        "kitchen_dining" if style == "kitchen_dining" else "kitchen",
        "KITCHEN_DINING" if style == "kitchen_dining" else "KITCHEN",
    )
    kitchen.open_to_living = style == "kitchen_dining" and not hall and rng.random() < 0.6
    if kitchen.open_to_living:
        kitchen.has_door = rng.random() < 0.5
    kitchen.open_to_hall = kitchen.kind == "kitchen" and rng.random() < KITCHEN_OPEN_TO_HALL
    if kitchen.open_to_hall:
        kitchen.has_door = False
    return living, kitchen


def _other_rooms(drawing: ApartmentDrawing) -> list[_Room]:
    """The bedrooms, bathrooms, and maybe a guest WC, an office, a dining room, a laundry and
    storerooms."""
    rng = drawing.rng
    bed_sub = rng.choice(("ROOM", "ROOM", "BEDROOM", "mixed"))
    others: list[_Room] = []
    for _ in range(drawing.bedrooms):
        sub = bed_sub if bed_sub != "mixed" else rng.choice(("ROOM", "BEDROOM"))
        others.append(_Room("bed", sub))
    two = drawing.bedrooms >= 5 or (drawing.bedrooms >= 2 and rng.random() < (0.25 if drawing.small else 0.6))
    others += [_Room("bath", "BATHROOM") for _ in range(2 if two else 1)]
    # A flat whose living room is the hall has all its rooms in one band: fewer extras.
    if drawing.bedrooms >= 2 and rng.random() < (0.2 if drawing.small else 0.35):
        others.append(_Room("wc", "BATHROOM"))
    if drawing.bedrooms <= (1 if drawing.hall else 4) and rng.random() < 0.25:
        others.append(_Room("office", "OFFICE"))
    if not drawing.hall and drawing.kitchen.kind == "kitchen" and drawing.bedrooms <= 3 and rng.random() < 0.2:
        others.append(_Room("dining", "DINING"))
    drawing.laundry = not drawing.small and rng.random() < 0.15
    if drawing.laundry:
        others.append(_Room("laundry", "WASH_AND_DRY_ROOM"))
    stores = 1 if rng.random() < (0.15 if drawing.small else 0.25) else 0
    if stores and not drawing.hall and rng.random() < 0.2:
        stores += 1
    others += [_Room("store", "STOREROOM") for _ in range(stores)]
    return others


def _living_block(drawing: ApartmentDrawing, others: list[_Room]) -> None:
    """Put the living room (with an open kitchen) in a band, or in a section of its own
    across both bands (``drawing.lw`` wide); a closed kitchen joins ``others``. A long unit
    has the south band only."""
    rng, living, kitchen = drawing.rng, drawing.living, drawing.kitchen
    drawing.bands = {"S": [], "N": []}
    drawing.lw = 0
    band = "S" if drawing.shape == "long" else None
    if drawing.hall:
        drawing.bands["S"].append(living)
        others.append(kitchen)
    elif drawing.section:
        area = _mm(rng, 22_000, 40_000, 500) * 1000
        drawing.lw = max(3200, min(5000, (area // drawing.D) // 10 * 10))
        if kitchen.open_to_living:
            drawing.bands[band or rng.choice("SN")].append(kitchen)
        else:
            others.append(kitchen)
    else:
        block = [living, kitchen] if kitchen.open_to_living else [living]
        if kitchen.open_to_living:
            rng.shuffle(block)
        else:
            others.append(kitchen)
        drawing.bands[band or rng.choice("SN")].extend(block)
