"""Token counts and dollar cost of the requests an agent makes to a model (docs/agents.md, docs/scores.md).

Prices live in ``pricing.yaml`` of the catalog folder (``homeloop/catalog/pricing.yaml``,
or ``$HOMELOOP_CATALOG/pricing.yaml``): per model, USD per million input,
cached input and output tokens, and for providers that bill writing to the
prompt cache apart (Anthropic) cache-write tokens, each with the date it took
effect and its source. A model not listed gets its tokens counted and no cost.

Tokens come from each reply's ``usage``, in either provider's form: the
chat-completions one (``prompt_tokens``, ``completion_tokens``,
``prompt_tokens_details.cached_tokens``) or the Messages API's
(``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens``), where the prompt is the sum of the three
input counts and the cached tokens are the cache reads. A reply without usage
makes the episode's totals unknown (null), never zero, since a partial sum
would understate them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, ValidationError

from homeloop.core.errors import HomeLoopError
from homeloop.core.io import load_yaml

PRICING_FILE = "pricing.yaml"

#: Token counts an episode totals, in the order records list them.
TOKEN_KINDS = ("prompt", "completion", "cached", "total")


class Price(BaseModel):
    """One model's list price, USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    aliases: tuple[str, ...] = ()
    input: NonNegativeFloat
    cached_input: NonNegativeFloat
    #: Prompt tokens written to the provider's cache, where it bills them apart; None: at the input price.
    cache_write_input: NonNegativeFloat | None = None
    output: NonNegativeFloat
    as_of: dt.date
    source: str = Field(min_length=1)

    def cost(self, prompt: int, completion: int, cached: int | None, cache_write: int | None = None) -> float:
        """Dollars for one request: cached prompt tokens at the cached price, those written to the cache at
        the cache-write price, the rest of the prompt at the input price."""
        cached = min(cached or 0, prompt)
        written = min(cache_write or 0, prompt - cached)
        write_price = self.input if self.cache_write_input is None else self.cache_write_input
        return ((prompt - cached - written) * self.input + cached * self.cached_input + written * write_price
                + completion * self.output) / 1e6


class _PricingFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    models: list[Price]


def pricing_path() -> Path:
    from homeloop.core.catalog import catalog_dir

    return catalog_dir() / PRICING_FILE


@lru_cache(maxsize=4)
def _prices(path: str) -> dict[str, Price]:
    try:
        doc = load_yaml(Path(path).read_text(encoding="utf-8")) or {}
        parsed = _PricingFile.model_validate(doc)
    except OSError as exc:
        raise HomeLoopError(f"{path}: cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise HomeLoopError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise HomeLoopError(f"{path}: field {where}: {first['msg']}") from None
    prices: dict[str, Price] = {}
    for price in parsed.models:
        for name in (price.id, *price.aliases):
            if name in prices:
                raise HomeLoopError(f"{path}: model {name!r} is priced twice")
            prices[name] = price
    return prices


def price_of(model: str | None) -> Price | None:
    """The price of ``model`` (its exact name or an alias), or None when it is not listed."""
    return _prices(str(pricing_path())).get(model) if model else None


@dataclass
class Tally:
    """Running totals over an episode's requests."""

    price: Price | None
    requests: int = 0
    totals: dict[str, int | None] = field(default_factory=lambda: dict.fromkeys(TOKEN_KINDS, 0))
    cost_usd: float | None = 0.0

    def add(self, usage: object) -> dict[str, Any]:
        """Count one reply's ``usage`` (an SDK object, a dict or None); returns the per-call entry."""
        self.requests += 1
        tokens = read_usage(usage)
        written = _field(usage, "cache_creation_input_tokens") if usage is not None else None
        for kind in TOKEN_KINDS:
            have, got = self.totals[kind], tokens[kind]
            self.totals[kind] = None if have is None or got is None else have + got
        cost = None
        if self.price is not None and tokens["prompt"] is not None and tokens["completion"] is not None:
            cost = round(self.price.cost(tokens["prompt"], tokens["completion"], tokens["cached"], written), 8)
        self.cost_usd = None if self.cost_usd is None or cost is None else round(self.cost_usd + cost, 8)
        return {"tokens": tokens, "cost_usd": cost}

    def summary(self) -> dict[str, Any]:
        return {"tokens": dict(self.totals), "cost_usd": self.cost_usd if self.price is not None else None,
                "requests": self.requests}


def read_usage(usage: object) -> dict[str, int | None]:
    """Prompt, completion, cached and total tokens of one reply; unknown ones are None."""
    if usage is None:
        return dict.fromkeys(TOKEN_KINDS)
    if _field(usage, "input_tokens") is not None:
        return _messages_usage(usage)
    prompt, completion = _field(usage, "prompt_tokens"), _field(usage, "completion_tokens")
    details = _field(usage, "prompt_tokens_details")
    cached = _field(details, "cached_tokens") if details is not None else None
    total = _field(usage, "total_tokens")
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    return {"prompt": prompt, "completion": completion, "cached": cached, "total": total}


def _messages_usage(usage: object) -> dict[str, int | None]:
    """The Messages API's usage: its input tokens are those after the last cache breakpoint, so the
    prompt adds the cache reads and writes to them."""
    fresh, completion = _field(usage, "input_tokens"), _field(usage, "output_tokens")
    read, written = _field(usage, "cache_read_input_tokens") or 0, _field(usage, "cache_creation_input_tokens") or 0
    prompt = fresh + read + written
    return {"prompt": prompt, "completion": completion, "cached": read,
            "total": prompt + completion if completion is not None else None}


def _field(usage: object, name: str) -> Any:
    """A field of a usage report, a dict or an SDK object alike; None where it has none."""
    return usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
