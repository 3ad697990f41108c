"""USD export: catalog assets and homes for Isaac Sim (OpenUSD via usd-core).

Three kinds of files come out of a build::

    outputs/<build>/assets/<catalog id>.usdc       one per catalog furniture / object entry (written once)
    outputs/<build>/assets/devices/<type>.usdc     one per catalog device type (written once)
    outputs/<build>/homes/<home id>/home.usdc      one per home, referencing the assets

A home file holds what is its own; what every home shares is in the assets.

**Two purposes.** What a renderer draws and what a simulator collides with are
apart: the *visual* (render purpose) is the recognizable shape of
:mod:`homeloop.core.visuals`, the same parts, in the same materials, as the CPU
renderer draws; the *solid* (guide purpose: not rendered, shown by tools on
request) is :func:`homeloop.core.geometry_assets.mesh_for`, the shape the home
check, navigation and the simulator's visibility hold, and carries the
colliders. Isaac Sim's PhysX reads colliders whatever their purpose; Blender
leaves guides out of an import by default.

**Assets** (:func:`write_catalog_assets`). Each catalog furniture or object
entry becomes one file whose default prim is the item, an ``Xform`` in the
catalog's item frame (origin at the centre of the footprint on the floor, +x
the front, z up, metres):

- furniture is **static**: it stands where the home puts it and does not move
  when pushed, so its root carries neither ``PhysicsRigidBodyAPI`` nor
  ``PhysicsMassAPI`` (a mass on a body that cannot move means nothing to a
  simulator; the catalog mass stays readable as ``homeloop:mass``). Its solid,
  a guide ``Mesh`` named after the catalog entry, collides as the exact
  triangle mesh (approximation ``none``, valid for static colliders), cavities
  included: shelving has its shelves, a drum or a drawer is a cavity. Its
  ``visual`` ``Xform`` (render purpose) holds one ``Mesh`` per visual part that
  does not move. Per articulated part (a fridge door, a drawer), a child
  ``Xform`` at its hinge holds a guide ``panel`` mesh (convex collider), its
  own ``visual`` (the visual parts whose ``joint`` is the part, in the part's
  frame; the panel, role ``front``, where the visual draws none of it),
  ``PhysicsRigidBodyAPI`` + ``PhysicsMassAPI`` (the moving parts are the only
  furniture bodies with a mass: their share of the catalog mass by volume)
  and a ``PhysicsRevoluteJoint`` (limits in degrees) or ``PhysicsPrismaticJoint``
  (limits in metres) joining it to the static root about the catalog axis. The
  part's own transform is ``translate`` (the hinge) then ``rotateX/Y/Z:joint``
  or ``translate:joint``: a home sets the joint op to open the part, its
  visual with it.
- carryable objects are dynamic: an ``Xform`` root with
  ``PhysicsRigidBodyAPI`` and ``PhysicsMassAPI`` (catalog mass), its solid as
  the guide ``geom`` mesh with ``PhysicsCollisionAPI`` (convex hull), its
  ``visual``, and its grasp points as child ``Xform``\\ s.
- **materials**: ``<item>/Looks`` holds a ``UsdPreviewSurface`` per catalog
  material (homeloop/catalog/materials.yaml: ``diffuseColor`` its albedo,
  ``roughness``, ``metallic``) a part may be made of, and each visual part is
  bound to its role's material. A role whose palette offers several
  (:func:`role_options`; a ``tinted`` part also every colour word) is a
  *variant set* of the role's name on the root, one variant per material, each
  binding the role's parts; the asset's own selection is the palette's first.

A build's own assets (``--assets``, docs/catalog.md "Your own assets") replace an entry's visual
and keep the rest: :mod:`homeloop.pipeline.usd.external`.

An importer that merges an ``Xform`` with its single mesh child (Blender, which
names the object after the child) keeps the item's name: its drawn children
are ``Xform``\\ s.

**Homes** (:func:`export_home`): stage metadata ``metersPerUnit = 1``,
``upAxis = Z``, ``defaultPrim = /Home``, and::

    /Home
      PhysicsScene          gravity -Z, 9.81 m/s² (metres)
      Looks/<name>          a UsdPreviewSurface material per class of the architecture and fixtures
      Materials/<id>        a UsdPreviewSurface per catalog material the fixtures and the devices'
                            own looks use
      DeviceVisuals         class (abstract: neither drawn nor traversed): device looks of the home's
      Rooms/<room>          Xform; floor (Mesh), ceiling (Mesh, rooms with a roof)
      Walls/<wall>          Mesh: the wall footprint extruded, cut where openings are
      Openings/<opening>    Xform at the opening; lintel / sill pieces of wall; the floor
                            under it (threshold: the floor runs on through every opening
                            at floor level); a door leaf (rigid body) with a revolute joint
                            at the hinge (0-90 deg), a garage door leaf with a prismatic
                            joint (lifts by its height), a window pane
      Fixtures/<fixture>    Xform: the plan's built-in fixture (sink, counter, shower ...);
                            ``body``, its footprint extruded from its room's floor to its
                            height (guide, a static collider), and ``visual`` (render), its
                            parts (homeloop.core.visuals.fixtures) in the home's materials, those
                            of one material one mesh named after it
      Furniture/<item>      the furniture asset by reference (../../assets/<catalog id>.usdc),
                            its materials by variant selection
      Objects/<object>      the object asset by reference (a rigid body), likewise
      Devices/<device>      Xform: its own homeloop:* attributes; its type's facts and its look
                            by reference: ``body`` (guide), its visual (render), named after
                            its type, and the look's ``Looks``
      Lights/<light>        SphereLight under each ceiling light, on or off as the home says
      Cameras/<camera>      Camera with the home file's FOV and resolution

Furniture, objects and devices stand at their pose: ``translate`` (x, y, z)
then ``rotateZ`` (yaw, degrees); the op order and a zero turn come from the
asset (:func:`~homeloop.pipeline.usd.author.pose_defaults`), the home authors
the translate and a turn other than zero.

**A home's materials.** A home picks each item's material per role as the CPU
renderer does, by the home's and the item's ids
(:func:`homeloop.core.visuals.variant_of`, :func:`homeloop.core.visuals.material_of`;
a ``tinted`` part takes the object's colour word): a variant selection on the
item's reference prim for each role its asset offers a choice of. The meshes
stay in the asset, so a home file holds no copy of them. Variant sets compose
in every USD reader (Isaac Sim, Blender, usdview), unlike material overrides
a reader would have to resolve against the asset's part names.

**Device bodies and visuals** (:func:`homeloop.core.geometry_assets.device_body`, the
sizes of :data:`homeloop.core.geometry_assets.DEVICE_BODIES`, as the simulator's
visibility and renderer draw them). A device's body rests on its mount and does
not cross it: a ceiling device hangs below the room's ceiling, a floor or
furniture device stands on its surface, a wall device (and one on a door or
window frame) stands out of the wall face it is fixed to. A dome camera's
housing reaches from the ceiling to :data:`~homeloop.core.geometry_assets.CAMERA_LENS_CLEARANCE` above its
lens, the camera prim, so the camera sees out of it. Its visual
(:func:`homeloop.core.visuals.device_visual`) is built at the size of the
body's box and fills it (:func:`body_placement`), as the CPU renderer places it.
A body's size depends on its type and mount only, but for a dome camera's
housing, which reaches its ceiling. So each catalog device type's asset
(:mod:`.device_types`) holds its look on its catalog mount, in the visual's
frame: the body box, the visual as one mesh with a ``GeomSubset`` per role,
the roles' materials in a ``Looks`` scope, and a variant set per role with a
choice of materials. A device prim references that look, straight where its
body stands in that frame, else through a prototype under ``DeviceVisuals``
(one per type and offset in a home) that moves the look's points to the body's box; a
look of another size or mount (a camera's housing) is a prototype of the
home's own (:class:`~homeloop.pipeline.usd.devices.DeviceVisuals`). The
device selects its materials by variant selection. Its visual is one mesh,
so the device is one object in Blender and a dome camera's id stays its
camera's. A built-in device (the stove of a range) is its appliance: it has no
body of its own and is an ``Xform`` alone.

**Lights, materials.** Each ceiling light device gets a ``SphereLight``
(:data:`LIGHT_RADIUS`) just under its body, its flux that of the simulator's
ceiling fitting (homeloop.sim.dynamics.light) at the device's brightness when
it is on (its ``on`` field, or a light switch bound to it), intensity 0 when
off. The architecture and the fixtures' bodies bind the ``Looks`` material of their
class, coloured as the CPU renderer colours them (homeloop.sim.render.materials;
their meshes carry the colour as ``primvars:displayColor`` too); window glass
is translucent. Every mesh a renderer draws has a material; guides need none.

**Semantic labels** (``UsdSemantics.LabelsAPI``). A thing's prim carries its
``class`` (wall, floor, ceiling, door, entrance_door, garage_door, window, the
fixture kind, the catalog class of furniture and objects, the device type,
camera) and, where it lies in rooms, ``room`` (the rooms' Swiss Dwellings
subtypes, lower case) and ``room_id`` (the home file room ids); an articulated
part adds ``part`` (the part name). The prims below a thing (its meshes, their
subsets, its joints, its materials) carry no labels of their own: they inherit
their thing's, as UsdSemantics defines inherited labels (labels accumulate
down the hierarchy) and Isaac Sim's segmentation reads them, so a drawn mesh's
class is its nearest labelled ancestor's (:func:`thing_labels`). Grouping
prims (``/Home``, ``/Home/Walls`` ...), room prims, the physics scene and
lights carry a ``group`` label only (the home's materials have their group's),
so a segmentation that merges a prim's labels with its ancestors' sees no
extra classes. A *thing* is the top-most prim of
its class: :func:`semantic_class_counts` counts those (so the wall pieces above
a door or around a window, and the floor through an opening, count as walls
and floors of their own).

**Device and camera attributes.** ``homeloop:id``, ``homeloop:type``,
``homeloop:room`` and the device's other home-file facts (its type's
category, Matter device type, events, fields and what each accepts, and the
type's usual name, mount and field values, from its type asset; the device
authors what is its own, and a device whose type facts are not its catalog
type's authors them all); each field as
``homeloop:field:<name>`` holding the present value (bool, int, double or
string; no value where the field is null) and
``homeloop:field:<name>:accepts``, a JSON string of the field specification
(type, enum values, min/max, unit, settable, nullable). A null field over a
type's default value is a value block: the attribute holds no value. Cameras carry
``homeloop:resolution`` (int2), ``homeloop:hfov_deg``,
``homeloop:privacy_mode`` and ``homeloop:agent_visible``.

**Camera optics.** USD cameras look down their local -Z with +Y up. A
camera's transform is ``translate`` then ``rotateXYZ = (90 + pitch, 0,
yaw - 90)`` degrees, which turns -Z to the pose's heading and pitch.
``focalLength = horizontalAperture / (2 tan(hfov / 2))`` and
``verticalAperture = horizontalAperture * height / width``.

Files are written atomically (homeloop.core.io, readable as any output: 0644
under the usual umask) and deterministically: the same home, catalog and
usd-core version give the same bytes, in ``.usdc`` and ``.usda`` alike (no
timestamps or paths are written; references are relative). docs/pipeline.md
("USD homes") says how they load in Isaac Sim and Blender. How the specs,
meshes and their geometry are authored (and kept cheap: benchmarks/usd_export.py)
is :mod:`homeloop.pipeline.usd.author`.

**Modules.** :mod:`.author` authors specs, meshes and their geometry;
:mod:`.looks` the visual parts and their materials; :mod:`.assets` the
catalog assets; :mod:`.external` a build's own assets (``--assets``);
:mod:`.device_types` the device type assets; :mod:`.devices` a home's device looks; :mod:`.home` a home's stage;
:mod:`.validate` reading a stage back and the usd-core validators;
:mod:`.probes` what a simulator or viewer meets in a written home.
"""

from __future__ import annotations

from homeloop.pipeline.usd.assets import (asset_file_name, catalog_asset_paths, furniture_body_name, variant_roles,
                                          write_catalog_assets)
from homeloop.pipeline.usd.author import UsdExportError
from homeloop.pipeline.usd.device_types import DEVICE_ASSETS, device_asset_key
from homeloop.pipeline.usd.devices import DEVICE_BODY, DEVICE_VISUALS, body_placement, device_visual_name
from homeloop.pipeline.usd.home import (HOME_ROOT, LIGHT_RADIUS, ExportResult, camera_rotate_xyz, export_home,
                                        home_usd_path, light_intensity)
from homeloop.pipeline.usd.looks import COLOUR_VARIANT, TINTED, VISUAL, role_choice, role_options
from homeloop.pipeline.usd.validate import (ValidationReport, assets_held_open, labels_of, semantic_class_counts,
                                            thing_labels, validate_stage, validate_stage_report, validators,
                                            validators_for)

__all__ = ["COLOUR_VARIANT", "DEVICE_ASSETS", "DEVICE_BODY", "DEVICE_VISUALS", "ExportResult", "HOME_ROOT",
           "LIGHT_RADIUS", "TINTED", "UsdExportError", "VISUAL", "ValidationReport", "asset_file_name",
           "assets_held_open", "body_placement", "camera_rotate_xyz", "catalog_asset_paths", "device_asset_key",
           "device_visual_name", "export_home", "furniture_body_name", "home_usd_path", "labels_of",
           "light_intensity", "role_choice", "role_options", "semantic_class_counts", "thing_labels", "validate_stage",
           "validate_stage_report", "validators", "validators_for", "variant_roles", "write_catalog_assets"]
