"""Devices and cameras: equip a furnished home with the 20 networked device types.

:func:`equip` is the stage after furnishing. It returns a new home (the input
is not changed) with devices and house cameras placed by the rules of the
device families below, plus notes and failures. It reads only the home file
(its fixtures included) and the catalog (homeloop/catalog/devices.yaml,
docs/catalog.md), whose numbers are the only ones used. The same home, catalog
and generator state give the same home file bytes; device ids are
``<type>_<room>_<n>``.

Each family is a module of steps over one :class:`EquipContext` (the home, the
catalog, the generator and what the earlier steps placed), registered in the
order imported below; :func:`equip` runs them in that order, which is the order
of the home file's devices:

- :mod:`~homeloop.pipeline.devices.smoke`: smoke sensors (NFPA 72);
- :mod:`~homeloop.pipeline.devices.appliances`: stove, washer and dryer
  devices, leak sensors beside the dishwasher and washer;
- :mod:`~homeloop.pipeline.devices.openings`: contact sensors, locks,
  doorbells, garage door openers, blinds and curtains;
- :mod:`~homeloop.pipeline.devices.lights` and
  :mod:`~homeloop.pipeline.devices.lamps`: lights, switches and lamps;
- :mod:`~homeloop.pipeline.devices.plugs`, :mod:`~homeloop.pipeline.devices.thermostat`,
  :mod:`~homeloop.pipeline.devices.water` (the water main),
  :mod:`~homeloop.pipeline.devices.plants` (soil sensors),
  :mod:`~homeloop.pipeline.devices.wearables`;
- :mod:`~homeloop.pipeline.devices.cameras`: dome cameras for the agent and
  for evaluation;
- :mod:`~homeloop.pipeline.devices.air`: the optional air devices (humidifier,
  dehumidifier, fan, air purifier), placed only where the catalog holds them
  (``homeloop build --air-devices``); last, so a home without them is the same.

Shared geometry: :mod:`~homeloop.pipeline.devices.mounting` (centres, grids,
opening faces, footprints) and :mod:`~homeloop.pipeline.devices.walls` (wall
points and what a wall device keeps clear of). Candidate points (ceiling grids,
wall points, floor grids, camera coverage points) are measured in arrays
(:mod:`homeloop.pipeline.devices_geometry`): a shortcut (a bounds test, a
distance computed with numpy, a room no wall comes near) decides only where its
decision cannot differ from measuring the pair with shapely, so every placement
is the one measuring each candidate gives. The new home shares the input's
unchanged parts (rooms, walls, furniture, objects): they are validated models
already, and only what ties the parts together is checked again.
"""

from homeloop.pipeline.devices.context import EquipContext
from homeloop.pipeline.devices.profile import DEFAULT_PROFILE, HOUSE_PROFILE, EquipProfile
from homeloop.pipeline.devices.registry import REGISTRY, STEPS, Step, StepRegistry, step

# Family modules register their steps on import; the order here is the order they run in.
from homeloop.pipeline.devices import smoke  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import appliances  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import openings  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import lights  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import lamps  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import plugs  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import thermostat  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import water  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import plants  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import wearables  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import cameras  # noqa: E402,F401  isort: skip
from homeloop.pipeline.devices import air  # noqa: E402,F401  isort: skip

from homeloop.pipeline.devices.camera_views import CAMERA_CORNER_INSET, visible_mask, visible_masks  # noqa: E402
from homeloop.pipeline.devices.catalog_devices import new_device  # noqa: E402
from homeloop.pipeline.devices.house import HOUSE_AGENT_CAMERAS, HOUSE_CAMERAS, equip_house, house_problems  # noqa: E402
from homeloop.pipeline.devices.lamps import LAMP_GAP, lamp_spot  # noqa: E402
from homeloop.pipeline.devices.mounting import grid_points, object_footprint  # noqa: E402
from homeloop.pipeline.devices.stage import EquipResult, device_summary, equip  # noqa: E402
from homeloop.pipeline.devices.walls import WALL_INSET  # noqa: E402

__all__ = [
    "CAMERA_CORNER_INSET",
    "DEFAULT_PROFILE",
    "HOUSE_AGENT_CAMERAS",
    "HOUSE_CAMERAS",
    "HOUSE_PROFILE",
    "LAMP_GAP",
    "REGISTRY",
    "STEPS",
    "WALL_INSET",
    "EquipContext",
    "EquipProfile",
    "EquipResult",
    "Step",
    "StepRegistry",
    "device_summary",
    "equip",
    "equip_house",
    "grid_points",
    "house_problems",
    "lamp_spot",
    "new_device",
    "object_footprint",
    "step",
    "visible_mask",
    "visible_masks",
]
