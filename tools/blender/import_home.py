"""Import a HomeLoop home's USD with Blender, check what a Blender user gets, and render it
from one of the home's own dome cameras.

Blender is not a HomeLoop dependency (its ``bpy`` wheel is some 370 MB), so this script
runs in a virtual environment of its own and needs nothing from HomeLoop but the
exported files (see tools/blender/README.md)::

    python3.11 -m venv /tmp/bpyenv && /tmp/bpyenv/bin/pip install "bpy==4.5.*"
    /tmp/bpyenv/bin/python tools/blender/import_home.py outputs/default/homes/house/home.usdc \\
        --camera dome_camera_2_1 --out /tmp/house.png

It imports the stage with Blender's own USD importer: the visual meshes (render purpose)
with their ``UsdPreviewSurface`` materials, not the solids the export writes for physics
(guide purpose), one Blender material per catalog material (materials of one name are one).
It lists the objects it made by type, checks that every piece of furniture of the home file
beside the USD (``home.json``), and every camera, became a Blender object of its name and that
every mesh came with a material (a collision solid has none: one imported would show here),
and renders the camera's view with Cycles on the CPU at a few samples, denoised. The home's
lights are as the home file says (off, as built), so the house is lit by daylight: a sky and a
sun through its windows. It prints how long the import and the render took. Exit status 1 when
furniture or camera names were lost or a mesh has no material, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import bpy

#: Daylight: the sky's strength, and the sun's strength (W/m²) and direction (degrees).
SKY_COLOUR = (0.62, 0.75, 0.92)
SKY_STRENGTH = 1.0
SUN_STRENGTH = 4.0
SUN_ELEVATION_DEG = 35.0
SUN_AZIMUTH_DEG = 160.0
#: Exposure (stops) of the rendered view: rooms lit through windows are dimmer than outdoors.
EXPOSURE = 2.0


def prim_name(home_id: str) -> str:
    """The prim name the USD export gives an id (pxr's Tf.MakeValidIdentifier, prefixed when it
    starts with a digit), which Blender keeps as the object's name."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", home_id)
    return name if name[:1].isalpha() or name[:1] == "_" else f"item_{name}"


#: What the import reads: the drawn meshes (render purpose) and their preview materials, not the
#: guides (the export's colliders) nor proxies; a material of a name already imported is that one
#: (each catalog material is written into every asset that uses it).
IMPORT_OPTIONS = {"import_render": True, "import_guide": False, "import_proxy": False, "import_materials": True,
                  "import_usd_preview": True, "mtl_name_collision_mode": "REFERENCE_EXISTING"}


def import_stage(path: Path) -> float:
    """Blender's USD import of ``path`` (:data:`IMPORT_OPTIONS`) into an empty scene; its duration (s)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    start = time.perf_counter()
    result = bpy.ops.wm.usd_import(filepath=str(path), **IMPORT_OPTIONS)
    if "FINISHED" not in result:
        raise SystemExit(f"{path}: Blender could not import the stage ({result})")
    return time.perf_counter() - start


def inventory() -> dict[str, int]:
    """Blender objects by type."""
    counts: dict[str, int] = {}
    for obj in bpy.data.objects:
        counts[obj.type] = counts.get(obj.type, 0) + 1
    return dict(sorted(counts.items()))


def unmaterialled() -> list[str]:
    """Mesh objects with a face of no material: every drawn mesh of a home has one, the solids
    (guides) have none."""
    out = []
    for obj in bpy.data.objects:
        if obj.type != "MESH":
            continue
        slots = [s.material for s in obj.material_slots]
        used = {p.material_index for p in obj.data.polygons}
        if not slots or any(i >= len(slots) or slots[i] is None for i in used):
            out.append(obj.name)
    return sorted(out)


def lost_names(home: dict, part: str) -> list[str]:
    """Ids of the home file's ``part`` ("furniture", "cameras") with no Blender object of their name."""
    names = set(bpy.data.objects.keys())
    return [x["id"] for x in home.get(part, []) if prim_name(x["id"]) not in names]


def daylight(scene: bpy.types.Scene) -> None:
    """A sky and a sun, so the rooms are lit through the windows."""
    world = bpy.data.worlds.new("daylight")
    world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value = (*SKY_COLOUR, 1.0)
    background.inputs["Strength"].default_value = SKY_STRENGTH
    scene.world = world
    sun = bpy.data.lights.new("sun", type="SUN")
    sun.energy = SUN_STRENGTH
    obj = bpy.data.objects.new("sun", sun)
    obj.rotation_euler = (math.radians(90.0 - SUN_ELEVATION_DEG), 0.0, math.radians(SUN_AZIMUTH_DEG))
    scene.collection.objects.link(obj)


def render(camera: str, resolution: tuple[int, int], width: int, samples: int, out: Path) -> float:
    """Render ``camera``'s view with Cycles on the CPU to ``out`` (PNG); the render's duration (s)."""
    scene = bpy.context.scene
    if camera not in bpy.data.objects or bpy.data.objects[camera].type != "CAMERA":
        known = sorted(o.name for o in bpy.data.objects if o.type == "CAMERA")
        raise SystemExit(f"no camera {camera!r} in the stage; its cameras: {', '.join(known)}")
    scene.camera = bpy.data.objects[camera]
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = True
    scene.render.resolution_x = width
    scene.render.resolution_y = round(width * resolution[1] / resolution[0])
    scene.render.resolution_percentage = 100
    scene.view_settings.exposure = EXPOSURE
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    scene.render.filepath = str(out)
    daylight(scene)
    start = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    return time.perf_counter() - start


def _parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Import a HomeLoop home's USD in Blender and render a camera.")
    ap.add_argument("usd", type=Path, help="homes/<home_id>/home.usdc (home.json beside it)")
    ap.add_argument("--camera", default=None, help="camera id (default: the first agent camera in a living room)")
    ap.add_argument("--out", type=Path, default=None, help="PNG to write; no render without it")
    ap.add_argument("--width", type=int, default=640, help="image width in pixels (height from the camera)")
    ap.add_argument("--samples", type=int, default=16, help="Cycles samples per pixel")
    return ap.parse_args(argv)


def _default_camera(home: dict) -> dict:
    rooms = {r["id"]: r["type"] for r in home["rooms"]}
    living = [c for c in home["cameras"] if rooms.get(c["room"], "").startswith("LIVING") and c["agent_visible"]]
    return (living or home["cameras"])[0]


def main(argv: list[str]) -> int:
    args = _parse(argv)
    home_file = args.usd.with_name("home.json")
    if not args.usd.is_file() or not home_file.is_file():
        print(f"{args.usd}: need the USD file and home.json beside it", file=sys.stderr)
        return 2
    home = json.loads(home_file.read_text(encoding="utf-8"))
    seconds = import_stage(args.usd)
    print(f"imported {args.usd} in {seconds:.2f} s: {len(bpy.data.objects)} objects {inventory()}, "
          f"{len(bpy.data.materials)} materials")
    bare = unmaterialled()
    print(f"meshes without a material: {len(bare)}" + (f": {bare[:10]}" if bare else ""))
    lost = list(bare)
    for part in ("furniture", "cameras"):
        missing = lost_names(home, part)
        total = len(home.get(part, []))
        what = {"furniture": "furniture", "cameras": "camera"}[part]
        print(f"{what} names kept: {total - len(missing)} of {total}" + (f"; lost: {missing}" if missing else ""))
        lost += missing
    if args.out is not None:
        cams = {c["id"]: c for c in home["cameras"]}
        cam = cams.get(args.camera) if args.camera else _default_camera(home)
        if cam is None:
            print(f"no camera {args.camera!r}; the home's cameras: {', '.join(cams)}", file=sys.stderr)
            return 2
        took = render(prim_name(cam["id"]), tuple(cam["resolution"]), args.width, args.samples, args.out.resolve())
        print(f"rendered {cam['id']} ({cam['room']}) to {args.out} in {took:.1f} s "
              f"({args.width} px wide, {args.samples} samples, Cycles on the CPU)")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]))
