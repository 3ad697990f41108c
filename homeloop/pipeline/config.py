"""The parameters of one build, declared once.

:class:`BuildConfig` is what ``homeloop build`` reads from its options, what the Prefect flow
``build-home-set`` takes as its one parameter (its deployment's form is this model's schema), and
what every stage reads. Each field's description is the option's help; its default and bounds are
the option's too (homeloop/cli/build.py derives them).

The module imports only pydantic, so that the command line can read it without loading the pipeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from homeloop.pipeline.verify_settings import VerifySettings

#: Where builds go unless ``out`` names a folder.
OUTPUTS = Path("outputs")
#: The default build: the paper's pool of ~3,400 plans from ~900 sites, 2,100 homes (docs/pipeline.md).
DEFAULT_PLANS, DEFAULT_SITES, DEFAULT_HOMES = 3400, 900, 2100


class BuildConfig(BaseModel):
    """The parameters of one build; the same parameters give the same outputs (those that decide
    them are :meth:`parameters`; the rest say where the build writes and how it runs)."""

    # Deferred: ``homeloop --help`` reads the fields, and only a build needs the validator.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    source: Path | None = Field(None, description="A Swiss Dwellings geometries.csv; default: generate plans.")
    plans: int = Field(DEFAULT_PLANS, ge=1, description="Plans to generate (without --source).")
    sites: int = Field(DEFAULT_SITES, ge=1, description="Sites to spread generated plans over.")
    homes: int = Field(DEFAULT_HOMES, ge=1, description="Homes to keep, in selection order.")
    seed: int = Field(0, ge=0, description="Build seed; same inputs and seed give the same bytes.")
    out: Path | None = Field(None, description="Build folder (default outputs/<build name>).")
    dask_address: str | None = Field(
        None, description="Address of a running Dask scheduler (default: a local cluster).")
    workers: int | None = Field(
        None, ge=1, description="Local Dask workers (default: one per core; 1 = no cluster).")
    usda: bool = Field(False, description="Write homes as text .usda (for reading) instead of .usdc.")
    progress: bool = Field(True, description="Show a progress bar per stage.")
    verify: bool = Field(
        True, description="Play the screened pairs with the scripted reference agent (the verify stage).")
    verify_robots: tuple[str, ...] | None = Field(
        None, description="Robot bodies to verify, comma-separated (default: the experiments' body).")
    verify_seeds: tuple[int, ...] | None = Field(
        None, description="Seeds to verify at, comma-separated (default: 0); a pair is verified when it passes at each.")
    verify_homes: int | None = Field(
        None, description="Verify the house and a sample of this many further homes, stratified by task "
                          "(default: every home, 'all').")
    assets: Path | None = Field(
        None, description="A YAML file mapping catalog ids to your own USD, glTF/GLB or OBJ files "
                          "(docs/catalog.md, \"Your own assets\").")
    assets_fallback: bool = Field(
        False, description="Draw the built-in visual where an --assets file cannot be used (else the build stops).")
    air_devices: bool = Field(
        False, description="Add the humidifier, dehumidifier, fan and air purifier the home-control track drives "
                           "(docs/catalog.md, \"Air devices\"); off for the paper's home set.")

    @property
    def name(self) -> str:
        """The build's name: its folder under outputs/ unless ``out`` names one (a build with the air
        devices has its own, so it never takes the place of the paper's home set)."""
        return self._base_name + ("-air-devices" if self.air_devices else "")

    @property
    def _base_name(self) -> str:
        if self.source is not None:
            return f"{Path(self.source).stem}-seed{self.seed}"
        if (self.plans, self.sites, self.seed, self.homes) == (DEFAULT_PLANS, DEFAULT_SITES, 0, DEFAULT_HOMES):
            return "default"
        return f"generated-{self.plans}p-{self.sites}s-{self.homes}h-seed{self.seed}"

    @property
    def out_dir(self) -> Path:
        return Path(self.out) if self.out is not None else OUTPUTS / self.name

    def parameters(self) -> dict[str, Any]:
        """What decides the outputs (not where they go, nor how many workers)."""
        return {
            "source": str(self.source) if self.source else None,
            "plans": None if self.source else self.plans,
            "sites": None if self.source else self.sites,
            "homes": self.homes,
            "seed": self.seed,
            "usda": self.usda,
            "verify": self.verify_settings().parameters(),
        } | ({"assets": self.assets_parameters()} if self.assets is not None else {}) \
            | self.catalog_parameters()

    def catalog_parts(self) -> tuple[str, ...]:
        """The optional catalog parts the build reads (homeloop.core.catalog.OPTIONAL_FILES)."""
        return ("air_devices",) if self.air_devices else ()

    def catalog_parameters(self) -> dict[str, Any]:
        """What the optional catalog parts decide, for the parameters and the stages' cache keys: nothing
        without them, so a build without them has the parameters and keys it always had."""
        return {"catalog_parts": list(self.catalog_parts())} if self.catalog_parts() else {}

    def assets_parameters(self) -> dict[str, Any]:
        """What the ``assets`` mapping decides: each source's sha256 and fit, the rejections, and
        whether they fall back (homeloop.core.visuals.library); read once per file contents."""
        from homeloop.core.catalog import load_catalog
        from homeloop.core.visuals.library import prepare_library

        assert self.assets is not None
        return prepare_library(Path(self.assets), load_catalog()).parameters() | {"fallback": self.assets_fallback}

    def verify_settings(self) -> VerifySettings:
        """The verify stage's settings; a field left unset takes the stage's default."""
        from homeloop.pipeline.verify_settings import VerifySettings

        default = VerifySettings()
        return VerifySettings(
            enabled=self.verify,
            robots=tuple(self.verify_robots) if self.verify_robots is not None else default.robots,
            seeds=tuple(sorted(set(self.verify_seeds))) if self.verify_seeds is not None else default.seeds,
            homes=self.verify_homes,
        )
