"""What an audit says about a plan: findings, and the result of auditing one plan.

A :class:`Finding` is one violation of one rule: the rule's id, the plan, the
elements involved and a sentence a person can act on. An :class:`AuditResult`
holds a plan's findings together with the rules that were checked, so the
audit table (``audit.parquet``) shows every plan × rule pair: a row per
finding, and a passing row for each rule checked that found nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

#: Columns of the audit table: one row per finding, one passing row per clean rule.
AUDIT_COLUMNS = ("plan", "rule", "passed", "element", "message")


@dataclass(frozen=True)
class Finding:
    """One violation of one rule in one plan."""

    rule: str
    plan: str
    elements: tuple[str, ...]
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", tuple(str(e) for e in self.elements))


@dataclass(frozen=True)
class AuditResult:
    """The findings of auditing one plan, and the rules that were checked."""

    plan: str
    findings: tuple[Finding, ...] = ()
    rules_checked: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "findings", tuple(self.findings))
        # A rule that produced a finding was checked, whatever the caller listed.
        checked = list(dict.fromkeys(self.rules_checked))
        for f in self.findings:
            if f.rule not in checked:
                checked.append(f.rule)
        object.__setattr__(self, "rules_checked", tuple(checked))

    @property
    def passed(self) -> bool:
        """True when no rule found anything."""
        return not self.findings

    @property
    def failed_rules(self) -> tuple[str, ...]:
        """Ids of the rules with at least one finding, in the order they were checked."""
        failed = {f.rule for f in self.findings}
        return tuple(r for r in self.rules_checked if r in failed)

    def findings_of(self, rule_id: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.rule == rule_id)

    def with_findings(self, findings: Iterable[Finding], rules_checked: Iterable[str] = ()) -> "AuditResult":
        """This result with more findings (e.g. from a later stage) and more rules checked.

        List a rule in ``rules_checked`` when it was checked and passed, so its
        passing row appears in the table; the rules of ``findings`` are added anyway.
        """
        findings = tuple(findings)
        for f in findings:
            if f.plan != self.plan:
                raise ValueError(f"finding for plan {f.plan!r} added to the audit of {self.plan!r}")
        return AuditResult(
            self.plan,
            self.findings + findings,
            self.rules_checked + tuple(rules_checked),
        )

    def to_records(self) -> list[dict[str, object]]:
        """Rows of the audit table (:data:`AUDIT_COLUMNS`).

        One row per finding (its elements joined by ``,``), then one passing row
        (empty element and message) for every checked rule that found nothing.
        """
        rows: list[dict[str, object]] = []
        failed = set()
        for rule_id in self.rules_checked:
            for f in self.findings_of(rule_id):
                failed.add(rule_id)
                rows.append(
                    {
                        "plan": self.plan,
                        "rule": rule_id,
                        "passed": False,
                        "element": ",".join(f.elements),
                        "message": f.message,
                    }
                )
        for rule_id in self.rules_checked:
            if rule_id not in failed:
                rows.append({"plan": self.plan, "rule": rule_id, "passed": True, "element": "", "message": ""})
        return rows


def extra_findings(plan_key: str, findings: Iterable[Finding], rules_checked: Iterable[str] = ()) -> AuditResult:
    """An audit result made only of findings from outside the geometric rules.

    For a later stage (furnishing) or the ingest, which report on a plan
    without running the geometric audit; merge it with
    :meth:`AuditResult.with_findings` when the plan was also audited.
    """
    return AuditResult(plan_key, (), tuple(rules_checked)).with_findings(findings)


def finding_from_rejection(plan_key: str, row: int | None, message: str) -> Finding:
    """An ``invalid_geometry`` finding for a source row the ingest rejected.

    ``row`` is the row of the source file (or None when unknown); the element
    is named ``row_<row>`` since the rejected row never became a plan element.
    """
    element = f"row_{row}" if row is not None else "plan"
    where = f"row {row}" if row is not None else "the plan"
    return Finding("invalid_geometry", plan_key, (element,), f"{where} was rejected at ingest: {message}")
