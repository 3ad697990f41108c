"""Skills declared once: name, typed arguments, docstring, cost and duration.

A skill is a plain function of a :class:`~homeloop.sim.context.SkillContext` and keyword
arguments, decorated with :func:`skill`::

    @skill("hub", units=2, seconds=0.3)
    def set_state(ctx: SkillContext, device_id: str, field: str, value: bool | int | float | str) -> dict:
        \"\"\"Set a settable field of a device.

        device_id: the device, as hub_list_devices names it.
        \"\"\"

From that one definition come the tool name the model sees
(``<service>_<name>``, e.g. ``hub_set_state``), the JSON schema of its
arguments (from the type hints; argument descriptions from the docstring's
``name: text`` lines), argument validation (pydantic), the cost table in
``docs/skills.md`` (:func:`homeloop.sim.services.cost_table`) and the price an episode charges.
Costs and durations are those of docs/skills.md.

A skill returns its result data (any JSON-able value) or raises
:class:`SkillError` with a message the model can act on. A skill whose
duration depends on the body or the arguments (``seconds=None``) reports it
by advancing the world itself through the context; a fixed ``seconds`` is
advanced by the episode after the call.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable, Concatenate, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import ErrorDetails

from homeloop.sim.context import SkillContext
from homeloop.sim.errors import SkillError as SkillError

#: The services an agent may be given, in the order tools are listed.
SERVICES = ("hub", "cameras", "perception", "wearables", "messaging", "clock", "robot")

#: A skill's function: the context first, then its keyword arguments.
SkillFunction = Callable[Concatenate[SkillContext, ...], Any]
F = TypeVar("F", bound=SkillFunction)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


@dataclass(frozen=True)
class Skill:
    """One declared skill (see the module docstring)."""

    service: str
    name: str
    function: SkillFunction
    summary: str
    description: str
    arguments: type[BaseModel]
    units: int
    seconds: float | None
    price: Callable[..., int] | None = None
    cost_note: str = ""
    seconds_note: str = ""

    @property
    def tool_name(self) -> str:
        return f"{self.service}_{self.name}"

    def units_for(self, args: dict[str, Any], ctx: SkillContext | None = None) -> int:
        """Units this call costs (a skill with a price rule may charge more for some arguments; a
        rule taking a second parameter also gets the skill context, for prices that depend on
        what the call meets, such as a camera's privacy mode)."""
        if self.price is None:
            return self.units
        if len(inspect.signature(self.price).parameters) > 1:
            return self.price(args, ctx)
        return self.price(args)

    def validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments, or :class:`SkillError` naming each bad or missing one."""
        if not isinstance(raw, dict):
            raise SkillError(f"{self.tool_name}: arguments must be a JSON object, got {type(raw).__name__}")
        try:
            parsed = self.arguments.model_validate(raw)
        except ValidationError as exc:
            raise SkillError(f"{self.tool_name}: " + "; ".join(_describe(e) for e in exc.errors())) from None
        return {k: getattr(parsed, k) for k in self.arguments.model_fields}

    def tool_schema(self, show_costs: bool = False) -> dict[str, Any]:
        """The OpenAI-style function tool schema of this skill."""
        params = self.arguments.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        params.setdefault("properties", {})
        params["additionalProperties"] = False
        description = self.description
        if show_costs:
            description += f"\nCost: {self.cost_text()}."
        return {"type": "function",
                "function": {"name": self.tool_name, "description": description, "parameters": params}}

    def cost_text(self) -> str:
        units = f"{self.units} unit{'s' if self.units != 1 else ''}"
        return units + (f" ({self.cost_note})" if self.cost_note else "")

    def seconds_text(self) -> str:
        if self.seconds_note:
            return self.seconds_note
        return f"{self.seconds:g}" if self.seconds is not None else "as the body needs"


def _describe(error: ErrorDetails) -> str:
    where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
    kind = error.get("type", "")
    if kind == "missing":
        return f"missing argument '{where}'"
    if kind == "extra_forbidden":
        return f"unknown argument '{where}'"
    return f"argument '{where}': {error.get('msg', 'invalid')}"


#: Every declared skill by tool name, in declaration order.
REGISTRY: dict[str, Skill] = {}

_ARG_LINE = re.compile(r"^\s*(\w+):\s+(.+)$")


def _split_doc(doc: str, names: set[str]) -> tuple[str, str, dict[str, str]]:
    """(summary, description without argument lines, {argument: text}) from a docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    kept, args = [], {}
    for line in lines:
        m = _ARG_LINE.match(line)
        if m and m.group(1) in names:
            args[m.group(1)] = m.group(2).strip()
        else:
            kept.append(line)
    text = "\n".join(kept).strip()
    summary = text.split("\n\n", 1)[0].replace("\n", " ")
    return summary, text, args


def _arguments_model(function: SkillFunction, tool_name: str, docs: dict[str, str]) -> type[BaseModel]:
    hints = typing.get_type_hints(function)
    fields: dict[str, Any] = {}
    params = list(inspect.signature(function).parameters.values())[1:]  # the first is the context
    for p in params:
        if p.name not in docs:
            raise TypeError(f"skill {tool_name}: argument '{p.name}' has no description line in the docstring")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints[p.name], Field(default, description=docs[p.name]))
    return create_model(f"{tool_name}_arguments", __base__=_Args, **fields)


def skill(service: str, *, units: int, seconds: float | None = None,
          price: Callable[..., int] | None = None, cost_note: str = "",
          seconds_note: str = "", name: str | None = None) -> Callable[[F], F]:
    """Declare a skill of ``service`` (see the module docstring)."""
    if service not in SERVICES:
        raise ValueError(f"unknown service {service!r}; services: {', '.join(SERVICES)}")

    def register(function: F) -> F:
        skill_name = name or function.__name__
        tool_name = f"{service}_{skill_name}"
        names = set(list(inspect.signature(function).parameters)[1:])
        summary, description, docs = _split_doc(function.__doc__ or "", names)
        if not summary:
            raise TypeError(f"skill {tool_name} has no docstring")
        if tool_name in REGISTRY and REGISTRY[tool_name].function is not function:
            raise ValueError(f"skill {tool_name} is declared twice")
        REGISTRY[tool_name] = Skill(service=service, name=skill_name, function=function, summary=summary,
                                    description=description, arguments=_arguments_model(function, tool_name, docs),
                                    units=units, seconds=seconds, price=price, cost_note=cost_note,
                                    seconds_note=seconds_note)
        return function

    return register
