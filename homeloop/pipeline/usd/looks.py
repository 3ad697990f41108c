"""Visual parts and their materials: each part's mesh (render purpose) and the UsdPreviewSurface
of its catalog material, with the per-home choices as variant sets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol

import numpy as np
from pxr import Sdf

from homeloop.core.catalog import Catalog, MaterialEntry
from homeloop.core.visuals import VisualPart, material_of
from homeloop.pipeline.usd.author import (
    BINDING_API,
    RENDER,
    RGB,
    MeshData,
    Names,
    apply_apis,
    bind,
    from_trimesh,
    mesh_prim,
    preview_material,
    prim_spec,
    purpose,
    valid_name,
    variant_over,
)
from homeloop.sim.render import materials


#: The group holding a thing's visual meshes (render purpose), and an asset's group of materials.
VISUAL = "visual"
ASSET_LOOKS = "Looks"
#: The role whose parts take an object's own colour word (a red pill box), and the prefix of the
#: variants (and materials) those colours make; their roughness.
TINTED = "tinted"
COLOUR_VARIANT = "colour_"
COLOUR_ROUGHNESS = 0.5


@dataclass(frozen=True)
class MaterialOption:
    """One material a part of a role may be made of: its variant (and material prim) name and
    the surface it gives (linear albedo, roughness, metalness)."""

    name: str
    albedo: RGB
    roughness: float
    metallic: float


def _option(material: MaterialEntry) -> MaterialOption:
    r, g, b = (float(c) for c in material.albedo)
    return MaterialOption(valid_name(material.id, "material"), (r, g, b), float(material.roughness),
                          float(material.metallic))


def role_options(catalog: Catalog, semantic_class: str, role: str) -> list[MaterialOption]:
    """The materials a part of ``role`` on a thing of ``semantic_class`` may take: the palette's
    choices :func:`homeloop.core.visuals.material_of` picks from (the class's palette, else the
    ``default`` one, else its ``body``), and for :data:`TINTED` parts every colour word too."""
    choices: list[str] | None = None
    for palette_id in (semantic_class, "default"):
        palette = catalog.palettes.get(palette_id)
        if palette is not None and role in palette.roles:
            choices = list(dict.fromkeys(palette.roles[role]))
            break
    options = [_option(catalog.materials[m]) for m in choices or catalog.palettes["default"].roles["body"][:1]]
    if role == TINTED:
        options += [MaterialOption(f"{COLOUR_VARIANT}{valid_name(word, 'colour')}", colour, COLOUR_ROUGHNESS, 0.0)
                    for word, colour in sorted(materials.COLOUR_WORDS.items())]
    return options


def role_choice(catalog: Catalog, semantic_class: str, role: str, variant: int, colour: str | None = None) -> str:
    """The name of the option (:func:`role_options`) a thing takes for a role: its colour word's for
    a :data:`TINTED` part of a thing with one, else the palette's pick by ``variant``
    (:func:`homeloop.core.visuals.material_of`, as the CPU renderer picks)."""
    word = (colour or "").strip().lower()
    if role == TINTED and word in materials.COLOUR_WORDS:
        return f"{COLOUR_VARIANT}{valid_name(word, 'colour')}"
    return valid_name(material_of(catalog, semantic_class, role, variant).id, "material")


@dataclass(frozen=True)
class PartMesh:
    """A visual part ready to author: its name, role, catalog joint and mesh (in the item frame)."""

    name: str
    role: str
    joint: str | None
    data: MeshData


def part_meshes(parts: Iterable[VisualPart]) -> list[PartMesh]:
    return [PartMesh(p.name, p.role, p.joint, from_trimesh(p.mesh)) for p in parts]


class AssetLooks:
    """The materials of one asset (under ``<item>/Looks``) and their bindings: a part of a role with
    one option is bound to it; each role with several is a variant set of the role's name on the
    asset's root, whose variants (one per option) bind the role's parts to the option's material
    and hold that material, so that a home picks the item's materials by variant selection
    without a copy of its meshes, and its stage composes the chosen materials only."""

    def __init__(self, catalog: Catalog, semantic_class: str, root: Sdf.PrimSpec) -> None:
        self.catalog, self.cls, self.root = catalog, semantic_class, root
        self.options: dict[str, list[MaterialOption]] = {}
        self.parts: dict[str, list[Sdf.PrimSpec]] = {}

    def path(self, option: MaterialOption) -> Sdf.Path:
        return self.root.path.AppendChild(ASSET_LOOKS).AppendChild(option.name)

    def bind(self, part: Sdf.PrimSpec, role: str) -> None:
        """Bind a visual part (with :data:`BINDING_API` applied) to its role's material."""
        options = self.options.setdefault(role, role_options(self.catalog, self.cls, role))
        if len(options) == 1:
            bind(part, self.path(options[0]))
        else:
            self.parts.setdefault(role, []).append(part)

    def write(self, defaults: dict[str, str]) -> None:
        """The materials of the roles of one option, the variant sets with theirs, and the
        default selections (``defaults``: role -> option name)."""
        looks = prim_spec(self.root, ASSET_LOOKS, "Scope")
        single = {o[0].name: o[0] for role, o in self.options.items() if role not in self.parts}
        for name in sorted(single):
            _option_material(looks, single[name])
        for role in sorted(self.parts):
            for option in self.options[role]:
                _option_material(variant_over(self.root, role, option.name, [ASSET_LOOKS]), option)
                for part in self.parts[role]:
                    where = part.path.MakeRelativePath(self.root.path).pathString.split("/")
                    bind(variant_over(self.root, role, option.name, where), self.path(option))
            self.root.variantSelections[role] = defaults.get(role, self.options[role][0].name)
        self.root.variantSetNameList.prependedItems = sorted(self.parts)


def _option_material(parent: Sdf.PrimSpec, option: MaterialOption) -> None:
    """A material option's ``UsdPreviewSurface`` (its albedo, roughness and metalness)."""
    preview_material(parent, option.name, option.albedo, option.roughness, metallic=option.metallic)


class Binds(Protocol):
    """What binds a visual part to its role's material (:class:`AssetLooks`, or a home's choices)."""

    def bind(self, part: Sdf.PrimSpec, role: str) -> None: ...


def visual_group(parent: Sdf.PrimSpec, parts: list[PartMesh], looks: Binds,
                 to_parent: np.ndarray | None = None) -> None:
    """The ``visual`` group (render purpose) of ``parts``, one mesh each, moved by ``to_parent``
    (4 x 4, from the item frame to the frame of ``parent``), each bound to its role's material
    (``parent``'s labels are theirs)."""
    if not parts:
        return
    group = prim_spec(parent, VISUAL)
    purpose(group, RENDER)
    names = Names()
    for p in parts:
        data = p.data
        if to_parent is not None:
            data = MeshData(data.points @ to_parent[:3, :3].T + to_parent[:3, 3], data.counts, data.indices)
        mesh = mesh_prim(group, names(p.name, "part"), data, colour=None)
        apply_apis(mesh, BINDING_API)
        looks.bind(mesh, p.role)
