"""Audit rules for floor plans: one module per rule, a registry, and :func:`audit_plan`.

Importing this package registers every rule, in the order below; the audit
table lists them in that order. Thresholds live in :mod:`homeloop.audits.thresholds`.
"""

from homeloop.audits.findings import AUDIT_COLUMNS, AuditResult, Finding, extra_findings, finding_from_rejection
from homeloop.audits.registry import RULES, REGISTRY, Rule, RuleRegistry, audit_plan, audit_plans, external_rule, rule

# Rule modules register themselves on import; the order here is the audit's order.
from homeloop.audits import invalid_geometry  # noqa: E402,F401  isort: skip
from homeloop.audits import overlapping_spaces  # noqa: E402,F401  isort: skip
from homeloop.audits import duplicate_element  # noqa: E402,F401  isort: skip
from homeloop.audits import feature_outside_area  # noqa: E402,F401  isort: skip
from homeloop.audits import no_entrance  # noqa: E402,F401  isort: skip
from homeloop.audits import door_not_connecting  # noqa: E402,F401  isort: skip
from homeloop.audits import unreachable_space  # noqa: E402,F401  isort: skip
from homeloop.audits import blocked_doorway  # noqa: E402,F401  isort: skip
from homeloop.audits import no_shower_or_bath  # noqa: E402,F401  isort: skip
from homeloop.audits import no_kitchen  # noqa: E402,F401  isort: skip
from homeloop.audits import no_fridge_space  # noqa: E402,F401  isort: skip

__all__ = [
    "AUDIT_COLUMNS",
    "AuditResult",
    "Finding",
    "REGISTRY",
    "RULES",
    "Rule",
    "RuleRegistry",
    "audit_plan",
    "audit_plans",
    "external_rule",
    "extra_findings",
    "finding_from_rejection",
    "rule",
]
