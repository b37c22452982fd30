"""A plugin reads its own configuration section from the pass it observes."""

from __future__ import annotations

from typing import Any

from asz_core import hookimpl
from asz_core.context import PassContext, PassSummary
from asz_core.testing import PassRunner


class _SeesConfig:
    """An observer that notes what the pass tells it about the configuration."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def asz_pass_end(self, ctx: PassContext, summary: PassSummary) -> None:
        self.seen.append(None if ctx.config is None else ctx.config.section("storage"))


def test_pass_end_sees_the_configuration_the_pass_ran_with(asz_pass: PassRunner) -> None:
    observer = _SeesConfig()
    asz_pass.host.register("sees-config", observer, adapter=False)
    asz_pass.configure(adapters=[])
    asz_pass.run()
    assert observer.seen == [{"root": str(asz_pass.root),
                              "retention": {"metadata_only_after": -1, "local_only": False}}]
