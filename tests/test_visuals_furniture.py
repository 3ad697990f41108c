"""Visual meshes of furniture (homeloop/core/visuals/furniture.py) and the renderer drawing them.

Every furniture entry of the catalog (read from it, not listed here) gets a visual of several closed
parts inside its bounds, clear of the free spaces its solid leaves (a container's inner space, the
space over a shelf or a seat, round a screen on feet: homeloop/core/geometry_assets.py), with a part
for every catalog joint and the tops of seats, mattresses and tables at their surfaces' heights.
Resized entries keep those properties. The scene draws each part with its palette's material and
moves the joints' parts with the joints.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.core.catalog import FurnitureEntry, load_catalog
from homeloop.core.geometry_assets import EPSILON, Box, cavities
from homeloop.core.visuals import VisualPart, furniture_visual, material_of, variant_of
from homeloop.core.visuals.furniture import BACK_BOOKS_DEPTH, FURNITURE_BUILDERS, _span, _space_top

CATALOG = load_catalog()
ENTRIES = sorted(CATALOG.furniture)
#: How far a part may stray into a box before it counts as inside (m): faces that touch are fine.
TOUCH = 1e-4
#: A seat's, a mattress's or a table's top: most of the surface lies this close under its height (m).
TOP_BAND = 0.03
TOP_SHARE = 0.85


def entry_of(entry_id: str) -> FurnitureEntry:
    return CATALOG.furniture[entry_id]


def is_book(part: VisualPart) -> bool:
    return part.role.startswith("book")


def _inner(entry: FurnitureEntry) -> list[Box]:
    return [Box(c.offset.x - c.inner.depth / 2, c.offset.y - c.inner.width / 2, c.offset.z,
                c.offset.x + c.inner.depth / 2, c.offset.y + c.inner.width / 2, c.offset.z + c.inner.height)
            for c in entry.containers]


def _is_mouth(entry: FurnitureEntry, b: Box) -> bool:
    """A container's mouth: the way in from its inner space to the front face, where its door closes."""
    front = entry.dimensions.depth / 2
    return abs(b.x1 - front) < EPSILON and any(
        abs(b.x0 - i.x1) < EPSILON and i.y0 - EPSILON <= b.y0 and b.y1 <= i.y1 + EPSILON
        and i.z0 - EPSILON <= b.z0 and b.z1 <= i.z1 + EPSILON for i in _inner(entry))


def free_spaces(entry: FurnitureEntry, books: bool) -> list[Box]:
    """The spaces no part may enter: the solid's cavities but the containers' mouths; for books,
    a shelf's space less its back :data:`BACK_BOOKS_DEPTH`."""
    out = []
    shelves = {round(s.height, 6) for s in entry.surfaces}
    for b in cavities(entry):
        if _is_mouth(entry, b):
            continue
        if books and round(b.z0, 6) in shelves and b not in _inner(entry):
            b = b._replace(x0=b.x0 + BACK_BOOKS_DEPTH)
        out.append(b)
    return out


def _lattice(b: Box, n: int = 7) -> np.ndarray:
    axes = [np.linspace(lo + TOUCH, hi - TOUCH, n) for lo, hi in zip(b[:3], b[3:])]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)


def inside(points: np.ndarray, b: Box) -> np.ndarray:
    lo, hi = np.array(b[:3]) + TOUCH, np.array(b[3:]) - TOUCH
    return np.all((points > lo) & (points < hi), axis=1)


def intrusions(entry: FurnitureEntry, parts: list[VisualPart]) -> list[str]:
    """Parts that enter a free space: a vertex or a surface sample inside it, or a point of it
    inside the part."""
    found = []
    for part in parts:
        mesh = part.mesh
        points = np.vstack([mesh.vertices, trimesh.sample.sample_surface(mesh, 3000, seed=0)[0]])
        for b in free_spaces(entry, is_book(part)):
            if min(b[3] - b[0], b[4] - b[1], b[5] - b[2]) <= 2 * TOUCH:
                continue
            if inside(points, b).any() or mesh.contains(_lattice(b)).any():
                found.append(f"{part.name} in {tuple(round(v, 3) for v in b)}")
    return found


def out_of_bounds(entry: FurnitureEntry, parts: list[VisualPart]) -> list[str]:
    d = entry.dimensions
    lo, hi = np.array([-d.depth / 2, -d.width / 2, 0.0]) - 1e-6, np.array([d.depth / 2, d.width / 2, d.height]) + 1e-6
    found = [p.name for p in parts if (p.mesh.vertices < lo).any() or (p.mesh.vertices > hi).any()]
    if entry.shape == "cylinder":
        radius = min(d.width, d.depth) / 2 + 1e-6
        found += [p.name for p in parts if (np.hypot(p.mesh.vertices[:, 0], p.mesh.vertices[:, 1]) > radius).any()]
    return found


# --- every entry of the catalog ------------------------------------------------------------------------


def test_every_furniture_class_of_the_catalog_has_a_builder():
    assert {e.semantic_class for e in CATALOG.furniture.values()} <= set(FURNITURE_BUILDERS)


@pytest.mark.parametrize("entry_id", ENTRIES)
def test_every_part_is_a_closed_solid_inside_the_bounds(entry_id):
    entry = entry_of(entry_id)
    parts = furniture_visual(entry)
    assert len(parts) > 1
    assert len({p.name for p in parts}) == len(parts)
    for part in parts:
        assert part.mesh.is_watertight and part.mesh.is_winding_consistent, part.name
        assert part.mesh.volume > 0, part.name
    assert out_of_bounds(entry, parts) == []


@pytest.mark.parametrize("entry_id", ENTRIES)
def test_no_part_enters_a_container_or_the_space_over_a_surface(entry_id):
    entry = entry_of(entry_id)
    assert intrusions(entry, furniture_visual(entry)) == []


@pytest.mark.parametrize("entry_id", [e for e in ENTRIES if entry_of(e).parts])
def test_every_catalog_joint_moves_a_part_of_its_own(entry_id):
    entry = entry_of(entry_id)
    parts = furniture_visual(entry)
    joints = {p.joint for p in parts if p.joint is not None}
    assert joints == {p.name for p in entry.parts}


def _first_hits(mesh: trimesh.Trimesh, xy: np.ndarray, z: float) -> np.ndarray:
    """The height of the first face under each (x, y) from ``z`` (NaN where none)."""
    origins = np.column_stack([xy, np.full(len(xy), z)])
    down = np.tile([0.0, 0.0, -1.0], (len(xy), 1))
    locations, rays, _ = mesh.ray.intersects_location(origins, down, multiple_hits=False)
    hits = np.full(len(xy), np.nan)
    hits[rays] = locations[:, 2]
    return hits


def surface_tops(entry: FurnitureEntry) -> dict[str, tuple[float, float]]:
    """Looking straight down on each surface (from the middle of a shelf's space, else from above
    the item): the highest first face met above the surface's height, and the share of the
    surface whose first face lies just under it."""
    mesh = trimesh.util.concatenate([p.mesh for p in furniture_visual(entry) if not is_book(p)])
    out = {}
    for s in entry.surfaces:
        x0, y0, x1, y1 = _span(s)
        xs, ys = np.meshgrid(np.linspace(x0 + 0.01, x1 - 0.01, 15), np.linspace(y0 + 0.01, y1 - 0.01, 15))
        below_top = s.height < entry.dimensions.height - EPSILON
        start = (s.height + _space_top(entry, s)) / 2 if below_top else entry.dimensions.height + 0.5
        hits = _first_hits(mesh, np.column_stack([xs.ravel(), ys.ravel()]), start)
        near = (hits >= s.height - TOP_BAND) & (hits <= s.height + 1e-4)
        out[s.name] = (float(np.nanmax(hits)) - s.height, float(near.mean()))
    return out


@pytest.mark.parametrize("entry_id", [e for e in ENTRIES if entry_of(e).surfaces])
def test_seats_mattresses_and_tops_lie_at_their_surfaces_heights(entry_id):
    for name, (above, share) in surface_tops(entry_of(entry_id)).items():
        assert above <= 1e-4 and share >= TOP_SHARE, (name, above, share)


def test_a_shelf_keeps_its_books_at_the_back_and_a_cooker_its_burners_where_the_catalog_says():
    shelves = [e for e in CATALOG.furniture.values() if e.semantic_class == "bookshelf"]
    assert shelves
    for entry in shelves:
        books = [p for p in furniture_visual(entry) if is_book(p)]
        assert books
        for s in entry.surfaces:
            x0 = _span(s)[0]
            on_it = [b.mesh.vertices[np.abs(b.mesh.vertices[:, 2] - s.height) < 1e-6] for b in books]
            standing = np.vstack(on_it)
            assert len(standing) == 0 or standing[:, 0].max() <= x0 + BACK_BOOKS_DEPTH + 1e-6
    for entry in (e for e in CATALOG.furniture.values() if e.burners):
        coils = next(p for p in furniture_visual(entry) if p.name == "burners")
        for b in entry.burners:
            near = coils.mesh.vertices[np.hypot(coils.mesh.vertices[:, 0] - b.offset.x,
                                                coils.mesh.vertices[:, 1] - b.offset.y) <= b.diameter / 2 + 1e-6]
            assert len(near) and np.hypot(near[:, 0] - b.offset.x, near[:, 1] - b.offset.y).max() == \
                pytest.approx(b.diameter / 2, abs=1e-3)


@pytest.mark.parametrize("entry_id", ENTRIES)
def test_the_same_entry_gives_the_same_bytes_and_is_made_once(entry_id):
    entry = entry_of(entry_id)
    fresh = [FurnitureEntry.model_validate(entry.model_dump(by_alias=True)) for _ in range(2)]
    first, second = (furniture_visual(e) for e in fresh)
    assert [(p.name, p.role, p.joint) for p in first] == [(p.name, p.role, p.joint) for p in second]
    for a, b in zip(first, second):
        assert a.mesh.vertices.tobytes() == b.mesh.vertices.tobytes()
        assert a.mesh.faces.tobytes() == b.mesh.faces.tobytes()
    assert all(a.mesh is b.mesh for a, b in zip(furniture_visual(entry), furniture_visual(entry)))


@pytest.mark.parametrize("entry_id", ENTRIES)
def test_every_role_has_materials_in_its_class_palette(entry_id):
    entry = entry_of(entry_id)
    palette = CATALOG.palettes[entry.semantic_class]
    for part in furniture_visual(entry):
        assert part.role in palette.roles, part.role
        choices = {material_of(CATALOG, entry.semantic_class, part.role, v).id for v in range(12)}
        assert choices == set(palette.roles[part.role])


def test_homes_vary_the_materials_of_a_class():
    homes = [f"home_{k}" for k in range(40)]
    sofas = {material_of(CATALOG, "sofa", "upholstery", variant_of(h, "sofa_1")).id for h in homes}
    legs = {material_of(CATALOG, "sofa", "legs", variant_of(h, "sofa_1")).id for h in homes}
    assert sofas == set(CATALOG.palettes["sofa"].roles["upholstery"]) and len(sofas) >= 4
    assert legs == set(CATALOG.palettes["sofa"].roles["legs"]) and len(legs) >= 2


# --- resized entries ----------------------------------------------------------------------------------------


def scaled(entry: FurnitureEntry, sx: float, sy: float, sz: float) -> FurnitureEntry:
    """The entry stretched by (sx, sy, sz) along its depth, width and height: its surfaces,
    containers, hinges and burners with it."""
    data = entry.model_dump(by_alias=True)

    def offset(o: dict) -> dict:
        return {"x": o["x"] * sx, "y": o["y"] * sy, "z": o["z"] * sz}

    data["dimensions"] = {"width": entry.dimensions.width * sy, "depth": entry.dimensions.depth * sx,
                          "height": entry.dimensions.height * sz}
    for s in data["surfaces"]:
        s.update(height=s["height"] * sz, width=s["width"] * sy, depth=s["depth"] * sx, offset=offset(s["offset"]))
    for c in data["containers"]:
        c["inner"] = {"width": c["inner"]["width"] * sy, "depth": c["inner"]["depth"] * sx,
                      "height": c["inner"]["height"] * sz}
        c["offset"] = offset(c["offset"])
    for p in data["parts"]:
        p["hinge"] = offset(p["hinge"])
    for b in data["burners"]:
        b.update(offset=offset(b["offset"]), diameter=b["diameter"] * min(sx, sy))
    return FurnitureEntry.model_validate(data)


@settings(max_examples=80, deadline=None)
@given(entry_id=st.sampled_from(ENTRIES), sx=st.floats(0.7, 1.4), sy=st.floats(0.7, 1.4), sz=st.floats(0.7, 1.4))
def test_a_resized_entry_keeps_its_visual_inside_its_bounds_and_out_of_its_spaces(entry_id, sx, sy, sz):
    if entry_of(entry_id).shape == "cylinder":
        sy = sx  # a round item stays round
    entry = scaled(entry_of(entry_id), sx, sy, sz)
    parts = furniture_visual(entry)
    assert all(p.mesh.is_watertight and p.mesh.volume > 0 for p in parts)
    assert out_of_bounds(entry, parts) == []
    assert intrusions(entry, parts) == []
    assert {p.joint for p in parts if p.joint} == {p.name for p in entry.parts}
    assert all(above <= 1e-4 and share >= TOP_SHARE for above, share in surface_tops(entry).values())


# --- the renderer draws them -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def house_scene(house_home):
    from homeloop.sim.render.scene import Scene
    from homeloop.sim.visibility import GeometricVisibility
    from homeloop.sim.world import World

    world = World(house_home, CATALOG, 0)
    return world, Scene(world, GeometricVisibility(world).static_entities)


def _faces_of(scene, entity: str, part: str | None = None):
    mesh = scene.entity_mesh(entity, part)
    return mesh, [scene.codes[c] for c in mesh.codes]


def test_the_scene_draws_every_part_of_every_item_in_its_palettes_material(house_scene):
    world, scene = house_scene
    home = world.home
    for f in home.furniture:
        entry = CATALOG.furniture[f.catalog_id]
        _, codes = _faces_of(scene, f.id)
        drawn = {(c.part, c.rgb, c.texture) for c in codes}
        for part in furniture_visual(entry):
            m = material_of(CATALOG, entry.semantic_class, part.role, variant_of(home.home_id, f.id))
            assert (part.name, tuple(m.albedo), m.texture) in drawn, (f.id, part.name)


def test_opening_a_joint_moves_its_parts_and_nothing_else(house_scene):
    world, scene = house_scene
    fridge = next(f for f in world.home.furniture if CATALOG.furniture[f.catalog_id].semantic_class == "fridge")
    joint = CATALOG.furniture[fridge.catalog_id].parts[0]
    door_parts = {p.name for p in furniture_visual(CATALOG.furniture[fridge.catalog_id]) if p.joint == joint.name}
    shut = {name: _faces_of(scene, fridge.id, name)[0].vertices[_faces_of(scene, fridge.id, name)[0].faces]
            for name in (*door_parts, "sides")}
    world.parts[(fridge.id, joint.name)] = joint.range[1]
    scene.update(world, {})
    try:
        for name, before in shut.items():
            mesh = _faces_of(scene, fridge.id, name)[0]
            after = mesh.vertices[mesh.faces]
            moved = float(np.abs(after - before).max())
            assert (moved > 0.1) == (name in door_parts), name
    finally:
        world.parts[(fridge.id, joint.name)] = joint.range[0]
        scene.update(world, {})


def test_objects_of_a_colour_word_keep_it_and_devices_are_drawn_as_their_visuals(house_scene):
    from homeloop.core.geometry_assets import BodySize, device_body
    from homeloop.core.visuals import device_visual
    from homeloop.sim.render import materials

    world, scene = house_scene
    words = {o.id: (o.colour or CATALOG.objects[o.catalog_id].colour) for o in world.home.objects}
    pill_boxes = [o for o in world.home.objects if CATALOG.objects[o.catalog_id].semantic_class == "pill_box"]
    tints = set()
    for o in pill_boxes:
        _, codes = _faces_of(scene, o.id)
        tint = {c.rgb for c in codes} & {materials.COLOUR_WORDS[words[o.id]]} if words[o.id] else set()
        assert tint, o.id
        tints |= tint
    assert len(tints) == len({words[o.id] for o in pill_boxes})
    drawn = 0
    for d in world.home.devices:
        body = device_body(world.home, d)
        if body is None or d.room is None or d.mounted_on in words:
            continue  # no body, or one the object it is in stands for
        size = BodySize(body.y1 - body.y0, body.x1 - body.x0, body.z1 - body.z0)
        _, codes = _faces_of(scene, d.id)
        assert {c.part for c in codes} == {p.name for p in device_visual(d.type, size, d.mount)}, d.id
        drawn += 1
    assert drawn
