"""Reading a written stage back (semantic labels, counts) and checking it with the usd-core
validators."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from pxr import Sdf, Usd, UsdValidation



def labels_of(prim: Usd.Prim, taxonomy: str = "class") -> list[str]:
    """A prim's semantic labels of ``taxonomy`` (empty when it has none)."""
    attr = prim.GetAttribute(f"semantics:labels:{taxonomy}")
    value = attr.Get() if attr else None
    return [str(v) for v in value] if value else []


def thing_labels(prim: Usd.Prim, taxonomy: str = "class") -> list[str]:
    """The labels of ``taxonomy`` a prim has from its thing: its own, else its nearest labelled
    ancestor's (the prims below a thing carry none of their own and take its labels, as
    UsdSemantics' inherited labels and a segmentation that reads them do)."""
    while prim and not prim.IsPseudoRoot():
        found = labels_of(prim, taxonomy)
        if found:
            return found
        prim = prim.GetParent()
    return []


def semantic_class_counts(stage: Usd.Stage) -> dict[str, int]:
    """Things in ``stage`` by semantic class: prims with a class label whose
    parent does not carry the same class (a fridge's door and body are the fridge)."""
    counts: Counter[str] = Counter()
    for prim in stage.Traverse():
        own = labels_of(prim)
        if not own:
            continue
        parent = set(labels_of(prim.GetParent()))
        for cls in own:
            if cls not in parent:
                counts[cls] += 1
    return dict(sorted(counts.items()))


# --- validation --------------------------------------------------------------------------------------------


@dataclass
class ValidationReport:
    """Messages of the usd-core validators: errors and warnings, each "[validator] message (at prims)"."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


_VALIDATORS: list[Any] | None = None
#: The keyword of the validators that look inside usdz packages. They run only on a stage
#: with a package among its layers: on others they find nothing, and the costliest of them
#: (UsdzPackageValidator) gathers every dependency of the stage to learn that.
PACKAGE_VALIDATORS = "UsdzValidators"


def validators(packages: bool = True) -> list[Any]:
    """Every validator the usd-core plugins register (loaded once); with ``packages=False``,
    those of usdz packages left out."""
    global _VALIDATORS
    if _VALIDATORS is None:
        registry = UsdValidation.ValidationRegistry()
        _VALIDATORS = [v for v in registry.GetOrLoadAllValidators() if not v.GetMetadata().isSuite]
    if packages:
        return _VALIDATORS
    return [v for v in _VALIDATORS if PACKAGE_VALIDATORS not in v.GetMetadata().GetKeywords()]


def validators_for(stage: Usd.Stage) -> list[Any]:
    """The validators that apply to a stage: all of them if a usdz package is among its layers."""
    has_package = any(layer.GetFileFormat().IsPackage() for layer in stage.GetUsedLayers())
    return validators(packages=has_package)


def _message(error: Any) -> str:
    validator = error.GetValidator()
    name = validator.GetMetadata().name if validator else error.GetName()
    sites = []
    for site in error.GetSites():
        if site.IsPrim() or site.IsProperty():
            sites.append(str(site.GetPrim().GetPath() if site.IsPrim() else site.GetProperty().GetPath()))
    where = f" (at {', '.join(sites)})" if sites and any(sites) else ""
    return f"[{name}] {error.GetMessage()}{where}"


#: The validators that look at a stage as a whole (its metadata, its composition, every file it
#: depends on, its usdz packages); every other registered validator looks at prims
#: (``tests/test_usd.py`` names each one, so a usd-core that registers a new one is seen).
STAGE_VALIDATORS = frozenset({
    "usdValidation:CompositionErrorTest", "usdValidation:StageMetadataChecker",
    "usdGeomValidators:StageMetadataChecker", "usdUtilsValidators:MissingReferenceValidator",
    "usdUtilsValidators:FileExtensionValidator", "usdUtilsValidators:RootPackageValidator",
    "usdUtilsValidators:UsdzPackageValidator", "usdUtilsValidators:PackageEncapsulationValidator",
})

#: Each asset layer's report while :func:`assets_held_open` holds the assets (by the layer's
#: identifier): a batch of homes references the same few dozen assets.
_ASSET_REPORTS: dict[str, "ValidationReport"] | None = None


@contextlib.contextmanager
def assets_held_open(paths: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Keep the catalog asset layers open while homes that reference them are validated, and each
    asset's report once made: each home's stage would otherwise read them from disk again, and its
    validation check them again. Held for one batch of homes only, so a long-lived worker never sees
    assets older than the files; a missing asset stays missing for the validators to report."""
    global _ASSET_REPORTS
    layers = [Sdf.Layer.FindOrOpen(str(p)) for p in paths if Path(p).is_file()]
    before, _ASSET_REPORTS = _ASSET_REPORTS, {}
    try:
        yield
    finally:
        _ASSET_REPORTS = before
        del layers


def validate_stage_report(path: str | os.PathLike[str] | Usd.Stage) -> ValidationReport:
    """Run the registered usd-core validators on the stage at ``path`` (or an open stage): every
    one, those of usdz packages only where the stage has one (:func:`validators_for`).

    The prim validators look at the prims the stage's own layers author (a ``def`` or an ``over``:
    a thing referencing an asset, what a home authors below it); each asset a prim references is
    checked as a stage of its own, once while :func:`assets_held_open` holds the assets, and its
    messages name it. A home's thousands of prims are mostly its assets' meshes, so this spares
    checking every asset again under every thing that references it."""
    stage = path if isinstance(path, Usd.Stage) else Usd.Stage.Open(str(path))
    if stage is None:
        return ValidationReport(errors=[f"cannot open {path}"])
    own = stage.GetLayerStack(includeSessionLayers=False)
    checks = validators_for(stage)
    report = _report(UsdValidation.ValidationContext([v for v in checks if v.GetMetadata().name in STAGE_VALIDATORS])
                     .Validate(stage))
    prims = _authored_prims(stage, own)
    _add(report, _report(UsdValidation.ValidationContext(
        [v for v in checks if v.GetMetadata().name not in STAGE_VALIDATORS]).Validate(prims)))
    for layer in stage.GetUsedLayers():
        if layer not in own and not layer.anonymous:
            _add(report, _asset_report(layer), f" in {Path(layer.realPath).name}")
    report.errors.sort()
    report.warnings.sort()
    return report


def _authored_prims(stage: Usd.Stage, layers: Iterable[Sdf.Layer]) -> list[Usd.Prim]:
    """The prims of ``stage`` that ``layers`` author a spec of and a traversal of the stage visits
    (active, loaded, defined, not abstract, not an instance proxy), in the traversal's order. A layer
    holds a spec for every ancestor of a spec it holds, so the traversal skips whatever lies below a
    prim none of ``layers`` authors (the prims of a referenced asset)."""
    layers = list(layers)
    prims = []
    walk = iter(Usd.PrimRange(stage.GetPseudoRoot()))
    for prim in walk:
        path = prim.GetPath()
        if path == Sdf.Path.absoluteRootPath:
            continue
        if any(layer.GetPrimAtPath(path) for layer in layers):
            prims.append(prim)
        else:
            walk.PruneChildren()
    return prims


def _asset_report(layer: Sdf.Layer) -> ValidationReport:
    """Every validator's messages on an asset layer opened as a stage (kept while the assets are held)."""
    kept = _ASSET_REPORTS if _ASSET_REPORTS is not None else {}
    report = kept.get(layer.identifier)
    if report is None:
        stage = Usd.Stage.Open(layer)
        report = kept[layer.identifier] = _report(UsdValidation.ValidationContext(validators_for(stage)).Validate(stage))
    return report


def _report(errors: Iterable[Any]) -> ValidationReport:
    report = ValidationReport()
    for error in errors:
        kind = error.GetType()
        if kind == UsdValidation.ValidationErrorType.Error:
            report.errors.append(_message(error))
        elif kind == UsdValidation.ValidationErrorType.Warn:
            report.warnings.append(_message(error))
    return report


def _add(report: ValidationReport, more: ValidationReport, where: str = "") -> None:
    report.errors.extend(m + where for m in more.errors)
    report.warnings.extend(m + where for m in more.warnings)


def validate_stage(path: str | os.PathLike[str] | Usd.Stage) -> list[str]:
    """The errors (not warnings) the usd-core validators find in the stage at ``path``."""
    return validate_stage_report(path).errors
