"""The home preview: a top-down PNG of a furnished, device-equipped home.

:func:`render_home` needs only the home file: it draws the home's rooms,
walls, openings and fixtures as a plan (:func:`plan_of_home`, drawn by
:func:`homeloop.pipeline.render.draw_plan`), then furniture footprints (short labels; tall items hatched), carryable objects as
dots, devices as one marker per type, and each camera's view cone (agent
cameras solid and filled, evaluation-only cameras dashed; colour by privacy
mode). The file is written atomically and the same home gives the same bytes.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, PathPatch, Wedge
from shapely import Point
from shapely.geometry.base import BaseGeometry

from homeloop.home import (
    FEATURE_OF_FIXTURE_KIND,
    OPENING_KIND_OF_SUBTYPE,
    Home,
    polygon_from_rings,
)
from homeloop.io import atomic_path
from homeloop.plan import DOOR, Feature, Opening, Plan, PlanIds, Separator, Space
from homeloop.pipeline.render import (
    DEFAULT_DPI,
    MARGIN,
    PNG_METADATA,
    Z_DEVICES,
    Z_FURNITURE,
    Z_LABELS,
    _add_polygons,
    _scale_bar_room,
    draw_plan,
    geometry_path,
    plan_extent,
)

#: Marker, colour and legend label of each device type.
DEVICE_STYLE: dict[str, tuple[str, str, str]] = {
    "smoke_sensor": ("o", "#d62728", "smoke"),
    "contact_sensor": ("s", "#17becf", "contact"),
    "leak_sensor": ("v", "#1f77b4", "leak"),
    "doorbell": ("P", "#2ca02c", "doorbell"),
    "soil_moisture_sensor": ("^", "#8c564b", "soil"),
    "stove": ("X", "#ff7f0e", "stove"),
    "lock": ("D", "#2ca02c", "lock"),
    "roller_blind": ("_", "#7f7f7f", "blind"),
    "curtain": ("|", "#9467bd", "curtain"),
    "thermostat": ("h", "#e377c2", "thermostat"),
    "plug": ("d", "#bcbd22", "plug"),
    "light_switch": ("<", "#444444", "switch"),
    "light": ("*", "#f2b701", "light"),
    "water_main": ("H", "#1f3b99", "water main"),
    "garage_door": ("8", "#555555", "garage door"),
    "washer": ("p", "#4c72b0", "washer"),
    "dryer": ("p", "#dd8452", "dryer"),
    "dome_camera": (".", "#000000", "camera"),
    "fall_watch": ("1", "#000000", "watch"),
    "help_button": ("2", "#000000", "help button"),
}
#: View-cone colour per privacy mode.
PRIVACY_COLOUR = {"none": "#1f77b4", "people_masked": "#ff7f0e", "image_blocked": "#d62728"}
#: Radius (m) of a drawn view cone.
CONE_RADIUS = 4.0
FURNITURE_FACE = "#e8dcc8"
FURNITURE_EDGE = "#6b5a45"
OBJECT_COLOUR = "#333333"

#: Short furniture labels by semantic class; other classes print as they are.
SHORT_FURNITURE = {
    "coffee_table": "table", "dining_table": "table", "tv_unit": "TV unit", "television": "TV",
    "nightstand": "night", "wardrobe": "wardrobe", "side_table": "side", "plant_stand": "plant",
    "office_chair": "chair", "shoe_cabinet": "shoes", "laundry_basket": "basket", "dishwasher": "DW",
    "bookshelf": "books", "armchair": "arm", "fridge": "fridge", "range": "range",
}


def _cone(ax, cam, room: BaseGeometry | None) -> None:
    colour = PRIVACY_COLOUR.get(cam.privacy_mode, "#1f77b4")
    yaw = math.degrees(cam.pose.yaw)
    half = cam.hfov_deg / 2
    wedge = Wedge((cam.pose.x, cam.pose.y), CONE_RADIUS, yaw - half, yaw + half,
                  facecolor=colour if cam.agent_visible else "none", alpha=0.13 if cam.agent_visible else 0.9,
                  edgecolor=colour, linewidth=0.8, linestyle="-" if cam.agent_visible else "--",
                  zorder=Z_DEVICES - 0.2)
    patches = [wedge]
    if cam.agent_visible:  # the filled wedge is faint: draw its outline at full strength
        patches.append(Wedge((cam.pose.x, cam.pose.y), CONE_RADIUS, yaw - half, yaw + half, facecolor="none",
                             edgecolor=colour, linewidth=0.8, zorder=Z_DEVICES - 0.1))
    # Cones are clipped to the camera's room (and its walls) so they do not spill over the plan.
    clip = None
    if room is not None and not room.covers(Point(cam.pose.x, cam.pose.y)):
        room = None
    if room is not None:
        clip = PathPatch(geometry_path(room.buffer(0.35, join_style="mitre")), transform=ax.transData)
    for patch in patches:
        ax.add_patch(patch)
        if clip is not None:
            patch.set_clip_path(clip)
    ax.plot([cam.pose.x], [cam.pose.y], marker="o", markersize=5, color=colour, markeredgecolor="black",
            markeredgewidth=0.6, zorder=Z_DEVICES + 0.2, linestyle="none")


#: The Swiss Dwellings subtype each home opening kind is drawn as (a garage door is a wide DOOR).
SUBTYPE_OF_OPENING_KIND = {kind: subtype for subtype, kind in OPENING_KIND_OF_SUBTYPE.items()} | {"garage_door": DOOR}


def plan_of_home(home: Home) -> Plan:
    """The home's rooms, walls, openings and fixtures as a plan, for drawing."""
    spaces = tuple(Space(r.id, r.type, polygon_from_rings(r.polygon)) for r in home.rooms)
    walls = tuple(Separator(w.id, w.kind, polygon_from_rings(w.polygon)) for w in home.walls)
    openings = tuple(Opening(o.id, SUBTYPE_OF_OPENING_KIND[o.kind], polygon_from_rings(o.polygon), tuple(o.connects))
                     for o in home.openings)
    features = tuple(Feature(x.id, FEATURE_OF_FIXTURE_KIND[x.kind], polygon_from_rings(x.polygon), x.room)
                     for x in home.fixtures)
    return Plan(PlanIds(0, 0, 0, 0, home.home_id), spaces, walls, openings, features)


def draw_home(ax, home: Home) -> None:
    """Draw the home (rooms, walls, openings, fixtures), its furniture, objects, devices
    and cameras on ``ax``."""
    draw_plan(ax, plan_of_home(home))
    items = list(home.furniture)
    low = [f for f in items if not f.tall]
    tall = [f for f in items if f.tall]
    _add_polygons(ax, [polygon_from_rings(f.footprint) for f in low], zorder=Z_FURNITURE,
                  facecolors=FURNITURE_FACE, edgecolors=FURNITURE_EDGE, linewidths=0.6)
    coll = _add_polygons(ax, [polygon_from_rings(f.footprint) for f in tall], zorder=Z_FURNITURE,
                         facecolors=FURNITURE_FACE, edgecolors=FURNITURE_EDGE, linewidths=0.6)
    if coll is not None:
        coll.set_hatch("////")
    for f in items:
        g = polygon_from_rings(f.footprint)
        if g.area < 0.12:
            continue
        c = g.centroid
        ax.text(c.x, c.y, SHORT_FURNITURE.get(f.semantic_class, f.semantic_class.replace("_", " ")),
                fontsize=4.2, ha="center", va="center", color="#3d3226", zorder=Z_LABELS)
    if home.objects:
        xy = np.array([[o.pose.x, o.pose.y] for o in home.objects])
        ax.scatter(xy[:, 0], xy[:, 1], s=4, color=OBJECT_COLOUR, zorder=Z_FURNITURE + 0.2, linewidths=0)
    rooms = home.room_polygons()
    for cam in home.cameras:
        _cone(ax, cam, rooms.get(cam.room))
    placed = [d for d in home.devices if d.room is not None and d.type != "dome_camera"]
    for t, (marker, colour, _) in DEVICE_STYLE.items():
        pts = [(d.pose.x, d.pose.y) for d in placed if d.type == t]
        if not pts:
            continue
        xy = np.array(pts)
        ax.scatter(xy[:, 0], xy[:, 1], marker=marker, s=22 if marker not in ("_", "|") else 40, color=colour,
                   linewidths=1.4 if marker in ("_", "|", "1", "2") else 0.4,
                   edgecolors="black" if marker not in ("_", "|", "1", "2", "x") else None,
                   zorder=Z_DEVICES)


def _legend(home: Home) -> list:
    present = {d.type for d in home.devices if d.room is not None}
    handles: list = []
    for t, (marker, colour, label) in DEVICE_STYLE.items():
        if t in present and t != "dome_camera":
            handles.append(Line2D([], [], marker=marker, color=colour, linestyle="none", markersize=6,
                                  markeredgecolor="black" if marker not in ("_", "|", "1", "2") else colour,
                                  markeredgewidth=0.4 if marker not in ("_", "|", "1", "2") else 1.4, label=label))
    for mode, colour in PRIVACY_COLOUR.items():
        if any(c.privacy_mode == mode for c in home.cameras):
            handles.append(Patch(facecolor=colour, alpha=0.35, edgecolor=colour,
                                 label=f"camera: {mode.replace('_', ' ')}"))
    if any(not c.agent_visible for c in home.cameras):
        handles.append(Patch(facecolor="none", edgecolor="#555555", linestyle="--", label="evaluation-only"))
    if any(f.tall for f in home.furniture):
        handles.append(Patch(facecolor=FURNITURE_FACE, edgecolor=FURNITURE_EDGE, hatch="////", label="tall"))
    return handles


def home_caption(home: Home) -> str:
    agent_devices = sum(1 for d in home.devices if d.agent_visible)
    return (f"{len(home.rooms)} spaces · {home.indoor_area:.0f} m² indoor · {len(home.furniture)} furniture · "
            f"{len(home.devices)} devices ({agent_devices} for the agent) · {len(home.cameras)} cameras "
            f"({home.agent_camera_count} agent, {home.evaluation_camera_count} evaluation)")


def render_home(home: Home, path: str | Path, *, title: str | None = None,
                dpi: int = DEFAULT_DPI, width_in: float = 12.0) -> Path:
    """Write the preview PNG of ``home`` to ``path`` atomically; return the path."""
    minx, miny, maxx, maxy = plan_extent(plan_of_home(home))
    aspect = (maxy - miny + 2 * MARGIN + _scale_bar_room(maxx - minx)) / max(maxx - minx + 2 * MARGIN, 1e-6)
    plot_h = float(np.clip(width_in * aspect, 3.0, 16.0))
    foot = 0.9
    fig = Figure(figsize=(width_in, plot_h + 0.8 + foot))
    total = plot_h + 0.8 + foot
    ax = fig.add_axes((0.02, foot / total, 0.96, plot_h / total))
    draw_home(ax, home)
    head = title if title is not None else f"{home.home_id}\n{home_caption(home)}"
    fig.suptitle(head, fontsize=10, y=1 - 0.1 / total, va="top")
    fig.legend(handles=_legend(home), loc="lower center", ncol=10, fontsize=7, frameon=False,
               handlelength=1.4, columnspacing=1.0, bbox_to_anchor=(0.5, 0.0))
    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata=PNG_METADATA, facecolor="white")
    return Path(path)


__all__ = ["DEVICE_STYLE", "draw_home", "home_caption", "plan_of_home", "render_home"]
