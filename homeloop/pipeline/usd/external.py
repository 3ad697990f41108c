"""A build's own assets in its USD catalog assets (docs/catalog.md, "Your own assets").

Where a build maps a catalog entry to a file of the user's (:mod:`homeloop.core.visuals.library`),
the entry's asset ``assets/<catalog id>.usdc`` keeps everything the catalog gives it (the solid
as the guide-purpose collider, the articulated parts with their panels, the physics, the labels)
and shows the user's mesh as its render-purpose ``visual`` instead of the built-in one:

- a glTF, GLB or OBJ file cannot be referenced by USD: its fitted mesh (as the build keeps it,
  ``assets/external/<id>.glb``) is written into the asset as one ``Mesh`` of the visual group,
  bound to the material its role (``body``, an object's ``tinted``) takes in the class's palette,
  as the CPU renderer draws it;
- a USD file is referenced: the build's copy of it (``assets/external/<id>_source.<ext>``) under
  ``visual/source``, an ``Xform`` whose ``xformOp:transform`` is the fit (the declared axes and
  units, the centring and the one uniform scale), so the file's own meshes and materials show.
"""

from __future__ import annotations

import numpy as np
from pxr import Gf, Sdf, Vt

from homeloop.core.catalog import FurnitureEntry, ObjectEntry
from homeloop.core.visuals import VisualPart
from homeloop.core.visuals.library import LIBRARY_FOLDER, VisualLibrary
from homeloop.pipeline.usd.author import RENDER, TYPES, attr, prim_spec, purpose

#: The prim under an asset's visual group that references a USD source.
SOURCE_PRIM = "source"


def mesh_parts(entry: FurnitureEntry | ObjectEntry, visuals: VisualLibrary | None) -> list[VisualPart] | None:
    """The visual parts an entry's asset holds as meshes where the library maps it: the fitted
    mesh of a glTF, GLB or OBJ source, none for a USD source (:func:`reference_source` draws it);
    None where the entry keeps its built-in visual."""
    parts = visuals.visual(entry) if visuals is not None else None
    if parts is None or visuals is None:
        return None
    return [] if visuals.fits.get(entry.id, {}).get("usd_source") else parts


def reference_source(root: Sdf.PrimSpec, entry: FurnitureEntry | ObjectEntry, visuals: VisualLibrary | None,
                     visual_group: str) -> None:
    """The render-purpose reference to an entry's USD source under ``root``'s ``visual_group``,
    moved by the fit (nothing where the library has no USD source for the entry; ``root``'s
    labels are its)."""
    fit = visuals.fits.get(entry.id) if visuals is not None and visuals.visual(entry) is not None else None
    if not fit or not fit.get("usd_source"):
        return
    group = root.nameChildren.get(visual_group) or prim_spec(root, visual_group)
    purpose(group, RENDER)
    source = prim_spec(group, SOURCE_PRIM)
    matrix = np.asarray(fit["matrix"], dtype=float)
    attr(source, "xformOp:transform", TYPES.Matrix4d, Gf.Matrix4d(matrix.T.tolist()))  # USD: row vectors
    attr(source, "xformOpOrder", TYPES.TokenArray, Vt.TokenArray(["xformOp:transform"]), uniform=True)
    attr(source, "homeloop:source_sha256", TYPES.String, fit["sha256"], custom=True)
    copy = "./" + "/".join((*LIBRARY_FOLDER[1:], fit["usd_source"]))
    source.referenceList.prependedItems = [Sdf.Reference(copy, Sdf.Path(fit["usd_prim"]))]
