"""The rule registry and :func:`audit_plan`.

A rule is a function ``(plan) -> Iterable[Finding]`` registered under an id with
``@rule("blocked_doorway", description=...)``. :func:`audit_plan` runs the
rules in registration order. A rule that raises never stops the audit: its
error becomes an ``invalid_geometry`` finding naming the rule, because a rule
that cannot evaluate a plan almost always meets geometry it cannot handle.

Some rule ids are not geometric checks but are reported by other stages
(``furnish_failed`` by furnishing); :func:`external_rule` declares them so the
audit table documents every id that can appear in it.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from homeloop.core.plan import Plan

from homeloop.audits.findings import AuditResult, Finding
from homeloop.audits.geometry import auditing

RuleCheck = Callable[[Plan], Iterable[Finding]]

#: The rule a failing rule's error is reported under.
INVALID_GEOMETRY = "invalid_geometry"


@dataclass(frozen=True)
class Rule:
    """A registered rule: its id, what it checks, and the check (None when external)."""

    id: str
    description: str
    check: RuleCheck | None = None

    @property
    def is_external(self) -> bool:
        """True for ids reported by other stages, not checked by :func:`audit_plan`."""
        return self.check is None


class RuleRegistry:
    """An ordered set of rules and the audit that runs them."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}

    def rule(self, rule_id: str, description: str) -> Callable[[RuleCheck], RuleCheck]:
        """Register the decorated function as the check of ``rule_id``."""

        def register(check: RuleCheck) -> RuleCheck:
            if rule_id in self.rules:
                raise ValueError(f"rule {rule_id!r} is already registered")
            self.rules[rule_id] = Rule(rule_id, description, check)
            return check

        return register

    def external_rule(self, rule_id: str, description: str) -> Rule:
        """Declare a rule id that another stage reports (not run by the audit)."""
        existing = self.rules.get(rule_id)
        if existing is not None:
            return existing
        self.rules[rule_id] = Rule(rule_id, description, None)
        return self.rules[rule_id]

    @property
    def checked_rule_ids(self) -> tuple[str, ...]:
        """Ids of the rules :meth:`audit_plan` runs by default."""
        return tuple(r.id for r in self.rules.values() if not r.is_external)

    def audit_plan(self, plan: Plan, rules: Sequence[str] | None = None) -> AuditResult:
        """Run the rules (all checked rules, or the ids given) over one plan."""
        ids = self.checked_rule_ids if rules is None else tuple(rules)
        findings: list[Finding] = []
        with auditing(plan):
            for rule_id in ids:
                r = self.rules.get(rule_id)
                if r is None:
                    raise KeyError(f"unknown audit rule {rule_id!r}")
                if r.check is None:
                    continue
                try:
                    findings.extend(r.check(plan))
                except Exception as error:  # noqa: BLE001 - a rule never stops the audit
                    findings.append(
                        Finding(
                            INVALID_GEOMETRY,
                            plan.key,
                            (),
                            f"rule {rule_id} could not evaluate the plan: "
                            f"{type(error).__name__}: {error}",
                        )
                    )
        checked = tuple(i for i in ids if self.rules[i].check is not None)
        if any(f.rule == INVALID_GEOMETRY for f in findings) and INVALID_GEOMETRY not in checked:
            checked += (INVALID_GEOMETRY,)
        return AuditResult(plan.key, tuple(findings), checked)

    def audit_plans(self, plans: Iterable[Plan], rules: Sequence[str] | None = None) -> Iterator[AuditResult]:
        for plan in plans:
            yield self.audit_plan(plan, rules)

    @contextmanager
    def temporary_rules(self) -> Iterator["RuleRegistry"]:
        """Register rules for the duration of a block, then restore the registry."""
        saved = dict(self.rules)
        try:
            yield self
        finally:
            self.rules.clear()
            self.rules.update(saved)


#: The registry of HomeLoop's audit rules.
REGISTRY = RuleRegistry()
#: The registered rules, in the order they run: id -> :class:`Rule`.
RULES: Mapping[str, Rule] = REGISTRY.rules
rule = REGISTRY.rule
external_rule = REGISTRY.external_rule


def audit_plan(plan: Plan, rules: Sequence[str] | None = None) -> AuditResult:
    """Audit one plan with HomeLoop's rules (all of them, or the ids given)."""
    return REGISTRY.audit_plan(plan, rules)


def audit_plans(plans: Iterable[Plan], rules: Sequence[str] | None = None) -> Iterator[AuditResult]:
    """Audit plans one after another."""
    return REGISTRY.audit_plans(plans, rules)


external_rule(
    "furnish_failed",
    "Furnishing could not place the furniture a home needs (reported by the furnishing stage).",
)


# Re-exported so callers find every audit entry point here.
from homeloop.audits.findings import extra_findings, finding_from_rejection  # noqa: E402,F401
