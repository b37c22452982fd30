"""Retention as the configuration asks it: the policy, the receiver's receipts, one step."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from asz_core.retention.policy import RetentionPolicy
from asz_core.retention.receipts import NO_RECEIVER, Receipts
from asz_core.retention.retain import RetainResult, retain_root
from asz_core.retention.schema import SECTION

if TYPE_CHECKING:
    import pluggy

    from asz_core.config import Config

__all__ = ["SECTION", "policy_of", "receipts_of", "retain_configured"]


def policy_of(config: Config) -> RetentionPolicy:
    return RetentionPolicy.from_section(config.section(SECTION))


def receipts_of(hooks: pluggy.HookRelay, config: Config, root: Path) -> tuple[Receipts, str | None]:
    """The configured receiver's receipts, and why none could be had (then nothing is confirmed,
    so only ``local_only`` removes anything)."""
    try:
        found = hooks.asz_receipts(config=config, root=root)
    except Exception as exc:  # noqa: BLE001 - a plugin's state that does not read confirms nothing
        return NO_RECEIVER, f"what the receiver took cannot be read ({exc}); nothing counts as confirmed"
    return (found if found is not None else NO_RECEIVER), None


def retain_configured(hooks: pluggy.HookRelay, config: Config, now_ns: int, *, dry_run: bool = False,
                      sessions: list[str] | None = None) -> RetainResult:
    root = config.root
    receipts, problem = receipts_of(hooks, config, root)
    result = retain_root(root, policy_of(config), receipts, now_ns, dry_run=dry_run, sessions=sessions)
    if problem is not None:
        result.errors.insert(0, problem)
    return result
