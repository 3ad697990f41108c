"""The role prompts a model agent can open with, by name, and the default one (docs/agents.md).

The prompt text lives beside this module (``role_prompt.md`` and the files named here);
:func:`homeloop.bench.agents.conversation.role_prompt` assembles it. A home-control episode (its scenario
``control``; docs/tasks.md, "Home control") opens with the same prompt, its
"Your job" section replaced by :data:`REQUEST_JOB`'s: the agent takes a resident's request rather than
an alert. This module imports nothing, so the command line can list the prompts in its help.
"""

from __future__ import annotations

#: Role prompts by name (docs/agents.md): each is role_prompt.md, with the guidance of the file named
#: put in at its ``<!-- additions -->`` line. ``paper`` is the paper's prompt; ``calibrated`` adds hints
#: on judging alarms, an ablation (prompt changes can calibrate over-reaction).
PROMPTS: dict[str, str | None] = {"paper": None, "calibrated": "role_prompt_calibrated.md"}

#: The prompt a model agent opens with when none is named.
DEFAULT_PROMPT = "paper"

#: The "Your job" section of a home-control episode's prompt, in place of role_prompt.md's (docs/agents.md).
REQUEST_JOB = "role_prompt_control.md"
