"""The equip steps' registry.

A step is a function ``(ctx) -> None`` over the :class:`~homeloop.pipeline.devices.context.EquipContext`
of one home, registered under an id with ``@step("plugs", description=...)``. It reads the
home and what the steps before it placed, and adds to the context what it places (devices,
cameras, notes, failures). :func:`homeloop.pipeline.devices.stage.equip` runs the steps in
registration order, which the package's ``__init__`` fixes by the order it imports the
family modules in: the order of the home file's devices, and of the generator's draws,
is that order.
"""

from __future__ import annotations

from dataclasses import dataclass
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

if TYPE_CHECKING:
    from homeloop.pipeline.devices.context import EquipContext

StepRun = Callable[["EquipContext"], None]


@dataclass(frozen=True)
class Step:
    """A registered step: its id, what it places, and the function that places it."""

    id: str
    description: str
    run: StepRun


class StepRegistry:
    """An ordered set of equip steps."""

    def __init__(self) -> None:
        self.steps: dict[str, Step] = {}

    def step(self, step_id: str, description: str) -> Callable[[StepRun], StepRun]:
        """Register the decorated function as the step ``step_id``, after those registered so far."""

        def register(run: StepRun) -> StepRun:
            if step_id in self.steps:
                raise ValueError(f"equip step {step_id!r} is already registered")
            self.steps[step_id] = Step(step_id, description, run)
            return run

        return register

    def run(self, ctx: EquipContext) -> None:
        """Run every step, in order, over one home's context."""
        for registered in self.steps.values():
            registered.run(ctx)

    @contextmanager
    def temporary_steps(self) -> Iterator[StepRegistry]:
        """Register steps for the duration of a block (they run after the others), then restore the registry."""
        saved = dict(self.steps)
        try:
            yield self
        finally:
            self.steps.clear()
            self.steps.update(saved)


#: The registry of HomeLoop's equip steps.
REGISTRY = StepRegistry()
#: The registered steps, in the order they run: id -> :class:`Step`.
STEPS: Mapping[str, Step] = REGISTRY.steps
step = REGISTRY.step
