"""Open a HomeLoop home in Isaac Sim, add a robot body at the entrance, and list
the home's devices and cameras.

Run with Isaac Sim's own Python (its packages pin versions the project's
environment does not share), from the repository root::

    <isaac-sim>/python.sh tools/isaac/load_home.py outputs/default/homes/<home_id>/home.usdc \
        --robot unitree_g1_d_ultimate [--robot-usd /path/to/robot.usd] [--headless] [--steps 600]

See tools/isaac/README.md. Nothing here imports Omniverse modules at module
level: Isaac Sim requires the ``SimulationApp`` to exist first, so
:func:`main` creates it and imports the rest afterwards. The helpers that only
read the stage (:func:`entrance_pose`, :func:`physics_scene_path`, :func:`devices`,
:func:`cameras`) take a ``pxr.Usd.Stage`` and work with any OpenUSD.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The catalog's robot bodies (homeloop/catalog/robots.yaml) and where Isaac Sim finds them.
#:
#: ``library``: a path under the Isaac Sim asset root (``get_assets_root_path()``,
#: e.g. the Nucleus or S3 asset server of your Isaac Sim release); ``None`` where
#: NVIDIA's asset library has no model of the body, so the user provides one
#: (``--robot-usd`` or the environment variable ``env``). Library paths differ
#: between Isaac Sim releases: check them in the Isaac Sim Content Browser
#: (Isaac Sim > Robots) and override with ``--robot-usd`` when yours differ.
#: ``spawn_z``: height (m) of the asset's root above the floor when standing
#: (legged bodies are rooted at the pelvis or trunk).
ROBOT_ASSETS: dict[str, dict[str, Any]] = {
    "unitree_g1_edu": {"library": "/Isaac/Robots/Unitree/G1/g1.usd",
                       "env": "HOMELOOP_ISAAC_G1_EDU_USD", "spawn_z": 0.8},
    "unitree_g1_d_ultimate": {"library": None,  # wheeled G1-D: no NVIDIA model; use the vendor's USD/URDF import
                              "env": "HOMELOOP_ISAAC_G1_D_USD", "spawn_z": 0.0},
    "spot_arm": {"library": "/Isaac/Robots/BostonDynamics/spot/spot.usd",  # the library's Spot has no arm
                 "env": "HOMELOOP_ISAAC_SPOT_ARM_USD", "spawn_z": 0.55},
    "pal_tiago": {"library": None, "env": "HOMELOOP_ISAAC_TIAGO_USD", "spawn_z": 0.0},
    "hello_robot_stretch_4": {"library": None, "env": "HOMELOOP_ISAAC_STRETCH_USD", "spawn_z": 0.0},
}

#: Distance (m) from the entrance door's centre line to the robot's spawn point, indoors.
ENTRANCE_CLEARANCE = 0.9
#: Where the robot goes in the stage.
ROBOT_PRIM = "/Home/Robot"


def robot_usd(robot: str, override: str | None = None, assets_root: str | None = None) -> str:
    """The USD path of ``robot``: ``override``, else its environment variable,
    else the Isaac asset library's model under ``assets_root``."""
    if robot not in ROBOT_ASSETS:
        raise SystemExit(f"unknown robot {robot!r}; choose one of {', '.join(ROBOT_ASSETS)}")
    spec = ROBOT_ASSETS[robot]
    path = override or os.environ.get(spec["env"])
    if path:
        return path
    if spec["library"] is None:
        raise SystemExit(f"{robot}: NVIDIA's asset library has no model of this body; convert the vendor's "
                         f"URDF/USD (Isaac Sim's URDF importer) and pass --robot-usd PATH or set {spec['env']}")
    if not assets_root:
        raise SystemExit("the Isaac Sim asset root is not reachable; pass --robot-usd PATH")
    return assets_root.rstrip("/") + spec["library"]


# --- reading the home (pxr only) ----------------------------------------------------------------


def _get(prim: Any, name: str, default: Any = None) -> Any:
    attr = prim.GetAttribute(name)
    if not attr or not attr.HasAuthoredValue():
        return default
    return attr.Get()


@dataclass
class Placement:
    x: float
    y: float
    z: float
    yaw: float  # radians, heading of the robot's front (+x)


def _floor_triangles(stage: Any, room_id: str) -> list[tuple[tuple[float, float], ...]]:
    from pxr import Usd, UsdGeom

    rooms = stage.GetPrimAtPath("/Home/Rooms")
    for room in rooms.GetChildren() if rooms else []:
        if _get(room, "homeloop:id") != room_id:
            continue
        floor = room.GetChild("floor")
        if not floor:
            return []
        mesh = UsdGeom.Mesh(floor)
        m = UsdGeom.Xformable(floor).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
        pts = [m.Transform(p) for p in mesh.GetPointsAttr().Get()]
        idx = list(mesh.GetFaceVertexIndicesAttr().Get())
        return [tuple((pts[i][0], pts[i][1]) for i in idx[k:k + 3]) for k in range(0, len(idx), 3)]
    return []


def _inside(tris: list[tuple[tuple[float, float], ...]], x: float, y: float) -> bool:
    for (ax, ay), (bx, by), (cx, cy) in tris:
        d1 = (x - bx) * (ay - by) - (ax - bx) * (y - by)
        d2 = (x - cx) * (by - cy) - (bx - cx) * (y - cy)
        d3 = (x - ax) * (cy - ay) - (cx - ax) * (y - ay)
        if not ((d1 < 0 or d2 < 0 or d3 < 0) and (d1 > 0 or d2 > 0 or d3 > 0)):
            return True
    return False


def _indoor_rooms(stage: Any) -> set[str]:
    rooms = stage.GetPrimAtPath("/Home/Rooms")
    return {_get(r, "homeloop:id") for r in (rooms.GetChildren() if rooms else [])
            if _get(r, "homeloop:space_class") == "indoor"}


def entrance_pose(stage: Any, clearance: float = ENTRANCE_CLEARANCE) -> Placement:
    """A spot just inside the entrance door, facing into the home.

    The entrance is the opening of kind ``entrance_door``, else any exterior
    door. An opening prim stands at the door's hinge with +x along the wall;
    the spot is ``clearance`` in from the door's centre, on the side whose
    floor belongs to an indoor room.
    """
    from pxr import Gf, Usd, UsdGeom

    openings = stage.GetPrimAtPath("/Home/Openings")
    doors = [o for o in (openings.GetChildren() if openings else []) if _get(o, "homeloop:kind") != "window"]
    ranked = sorted(doors, key=lambda o: (_get(o, "homeloop:kind") != "entrance_door",
                                          not _get(o, "homeloop:exterior", False), str(o.GetPath())))
    if not ranked:
        raise SystemExit("the home has no doors: cannot place the robot at an entrance")
    door = ranked[0]
    m = UsdGeom.Xformable(door).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    origin = m.ExtractTranslation()
    along = m.TransformDir(Gf.Vec3d(1.0, 0.0, 0.0))
    norm = math.hypot(along[0], along[1]) or 1.0
    ux, uy = along[0] / norm, along[1] / norm
    width = float(_get(door, "homeloop:width", 0.9))
    cx, cy = origin[0] + ux * width / 2, origin[1] + uy * width / 2
    indoor = _indoor_rooms(stage)
    connects = [r for r in (_get(door, "homeloop:connects") or []) if r in indoor] or list(indoor)
    tris = [t for r in sorted(connects) for t in _floor_triangles(stage, r)]
    for nx, ny in ((-uy, ux), (uy, -ux)):
        x, y = cx + nx * clearance, cy + ny * clearance
        if not tris or _inside(tris, x, y):
            return Placement(x, y, float(origin[2]), math.atan2(ny, nx))
    nx, ny = -uy, ux
    return Placement(cx + nx * clearance, cy + ny * clearance, float(origin[2]), math.atan2(ny, nx))


def physics_scene_path(stage: Any) -> str | None:
    """The path of the stage's physics scene (the home's ``/Home/PhysicsScene``), if it has one."""
    from pxr import UsdPhysics

    return next((str(p.GetPath()) for p in stage.Traverse() if p.IsA(UsdPhysics.Scene)), None)


def devices(stage: Any) -> list[dict[str, Any]]:
    """Every device prim's homeloop attributes: id, type, room, and its fields
    (present value and accepted values)."""
    group = stage.GetPrimAtPath("/Home/Devices")
    out = []
    for prim in group.GetChildren() if group else []:
        fields = {}
        for name in _get(prim, "homeloop:fields") or []:
            accepts = _get(prim, f"homeloop:field:{name}:accepts")
            fields[str(name)] = {"value": _get(prim, f"homeloop:field:{name}"),
                                 "accepts": json.loads(accepts) if accepts else {}}
        out.append({"prim": str(prim.GetPath()), "id": _get(prim, "homeloop:id"),
                    "type": _get(prim, "homeloop:type"), "room": _get(prim, "homeloop:room"),
                    "agent_visible": _get(prim, "homeloop:agent_visible", True), "fields": fields})
    return out


def cameras(stage: Any) -> list[dict[str, Any]]:
    """Every house camera: prim path, id, room, horizontal FOV, resolution, privacy mode, agent visibility."""
    from pxr import Gf, Usd, UsdGeom

    group = stage.GetPrimAtPath("/Home/Cameras")
    out = []
    for prim in group.GetChildren() if group else []:
        cam = UsdGeom.Camera(prim)
        if not cam:
            continue
        res = _get(prim, "homeloop:resolution")
        out.append({"prim": str(prim.GetPath()), "id": _get(prim, "homeloop:id"), "room": _get(prim, "homeloop:room"),
                    "hfov_deg": round(cam.GetCamera(Usd.TimeCode.Default()).GetFieldOfView(Gf.Camera.FOVHorizontal), 2),
                    "resolution": tuple(res) if res is not None else None,
                    "privacy_mode": _get(prim, "homeloop:privacy_mode"),
                    "agent_visible": _get(prim, "homeloop:agent_visible")})
    return out


def print_inventory(stage: Any) -> None:
    devs, cams = devices(stage), cameras(stage)
    print(f"devices: {len(devs)}")
    for d in devs:
        values = ", ".join(f"{k}={v['value']!r}" for k, v in d["fields"].items())
        hidden = "" if d["agent_visible"] else " (evaluation only)"
        print(f"  {d['id']:<28} {d['type']:<22} room {d['room']:<6} {values}{hidden}")
    print(f"cameras: {len(cams)}")
    for c in cams:
        w, h = c["resolution"] or ("?", "?")
        who = "agent" if c["agent_visible"] else "evaluation"
        print(f"  {c['id']:<28} room {c['room']:<6} hfov {c['hfov_deg']} deg {w}x{h} "
              f"privacy {c['privacy_mode']} ({who}) {c['prim']}")


# --- Isaac Sim ---------------------------------------------------------------------------------


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description="Open a HomeLoop home in Isaac Sim with a robot at the entrance.")
    ap.add_argument("home", type=Path, help="homes/<home_id>/home.usdc (or .usda)")
    ap.add_argument("--robot", default="unitree_g1_d_ultimate", choices=sorted(ROBOT_ASSETS))
    ap.add_argument("--robot-usd", default=None, help="USD of the robot body (overrides the library path)")
    ap.add_argument("--headless", action="store_true")
    ap.add_argument("--steps", type=int, default=0, help="physics steps to run, 0: until the window closes "
                                                         "(headless: none)")
    ap.add_argument("--list-only", action="store_true", help="list devices and cameras, add no robot, run nothing")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    home = args.home.resolve()
    if not home.exists():
        raise SystemExit(f"{home}: no such file")

    try:  # Isaac Sim 4.5 and later
        from isaacsim import SimulationApp
    except ImportError:  # Isaac Sim 2023.1 - 4.2
        from omni.isaac.kit import SimulationApp  # type: ignore[no-redef]
    app = SimulationApp({"headless": args.headless})
    try:
        try:
            from isaacsim.core.api import World
            from isaacsim.core.utils.stage import add_reference_to_stage, get_current_stage, open_stage
            from isaacsim.storage.native import get_assets_root_path
        except ImportError:
            from omni.isaac.core import World  # type: ignore[no-redef]
            from omni.isaac.core.utils.nucleus import get_assets_root_path  # type: ignore[no-redef]
            from omni.isaac.core.utils.stage import (  # type: ignore[no-redef]
                add_reference_to_stage,
                get_current_stage,
                open_stage,
            )
        from pxr import Gf, UsdGeom, UsdPhysics

        if not open_stage(str(home)):
            raise SystemExit(f"{home}: Isaac Sim could not open the stage")
        stage = get_current_stage()
        print_inventory(stage)
        if args.list_only:
            return 0

        # The home holds its physics scene (/Home/PhysicsScene: gravity -Z, 9.81 m/s²); the World
        # drives that one rather than adding a second. Homes exported before it had none.
        scene_path = physics_scene_path(stage)
        world = World(stage_units_in_meters=1.0, physics_prim_path=scene_path or "/physicsScene")
        if scene_path is None:
            scene = UsdPhysics.Scene.Define(stage, "/physicsScene")
            scene.CreateGravityDirectionAttr(Gf.Vec3f(0.0, 0.0, -1.0))
            scene.CreateGravityMagnitudeAttr(9.81)

        try:
            assets_root = get_assets_root_path()
        except Exception:  # no asset server configured
            assets_root = None
        usd = robot_usd(args.robot, args.robot_usd, assets_root)
        spot = entrance_pose(stage)
        spawn_z = spot.z + ROBOT_ASSETS[args.robot]["spawn_z"]
        add_reference_to_stage(usd_path=usd, prim_path=ROBOT_PRIM)
        robot = UsdGeom.Xformable(stage.GetPrimAtPath(ROBOT_PRIM))
        robot.ClearXformOpOrder()
        robot.AddTranslateOp().Set(Gf.Vec3d(spot.x, spot.y, spawn_z))
        robot.AddRotateZOp().Set(math.degrees(spot.yaw))
        print(f"robot {args.robot} from {usd} at ({spot.x:.2f}, {spot.y:.2f}, {spawn_z:.2f}), "
              f"facing {math.degrees(spot.yaw):.0f} deg")

        world.reset()
        if args.steps > 0:
            for _ in range(args.steps):
                world.step(render=not args.headless)
        elif not args.headless:
            while app.is_running():
                world.step(render=True)
        return 0
    finally:
        app.close()


if __name__ == "__main__":
    sys.exit(main())
