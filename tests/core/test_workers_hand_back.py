"""``AdapterContext.hand_back``: what an adapter gives the pass while a session lands runs in the
pass's own process, in order, when the pass merges the session's outcome, wherever the session
landed. An exception from it is the session's error, not the pass's end."""

from __future__ import annotations

import os
import sys
import types

import pytest

from asz_core import hookimpl
from asz_core.context import AdapterContext
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.testing import PassRunner

SESSIONS = [f"s-{i}" for i in range(6)]
FAILING = "s-4"


def _apply(ctx: AdapterContext, value: tuple[str, int, int]) -> None:
    """Module-level, so that a worker's call pickles back by name."""
    session, step, pid = value
    if session == FAILING and step == 1:
        raise RuntimeError("the pass could not apply this")
    applied = ctx.kept(list)
    assert applied is not None
    applied.append((session, step, pid, os.getpid()))


def _adapter(applied: list[tuple[str, int, int, int]]) -> types.ModuleType:
    module = types.ModuleType("handing_back")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1.0", runtime="handing back", parallel_sessions=True)

    @hookimpl
    def asz_discover(ctx):  # type: ignore[no-untyped-def]
        ctx.keep(applied)  # the adapter's own state in the pass, where ``_apply`` adds to it
        return [Found(kind="session", key=s, session=s) for s in SESSIONS]

    @hookimpl
    def asz_claim(ctx, found):  # type: ignore[no-untyped-def]
        return [SessionClaim(item.session, [item]) for item in found]

    @hookimpl
    def asz_land(ctx, claim, session):  # type: ignore[no-untyped-def]
        for step in range(3):
            ctx.hand_back(_apply, (claim.session, step, os.getpid()))

    for fn in (asz_adapter_info, asz_discover, asz_claim, asz_land):
        setattr(module, fn.__name__, fn)
    return module


@pytest.mark.parametrize("workers", [1, 2])
def test_what_a_session_hands_back_runs_in_the_pass(asz_pass: PassRunner, monkeypatch: pytest.MonkeyPatch,
                                                    workers: int) -> None:
    if workers > 1 and sys.platform != "linux":
        pytest.skip("workers fork on Linux only")
    monkeypatch.delenv("ASZ_WORKERS", raising=False)
    notes: list[tuple[str, int, int, int]] = []
    asz_pass.register("handing_back", _adapter(notes))
    asz_pass.configure(adapters=[{"name": "handing_back", "collector": {"workers": workers}}])
    summary = asz_pass.run()
    here = os.getpid()
    assert all(applied_in == here for _, _, _, applied_in in notes)
    handed_from = {pid for _, _, pid, _ in notes}
    assert (handed_from == {here}) if workers == 1 else (here not in handed_from)
    for session in SESSIONS:  # each session's calls, in order; the failing one stops at its failure
        steps = [step for s, step, _, _ in notes if s == session]
        assert steps == ([0] if session == FAILING else [0, 1, 2])
    assert [(e.session, "could not apply" in e.message) for e in summary.errors] == [(FAILING, True)]
    assert summary.by_adapter["handing_back"].errors == 1
