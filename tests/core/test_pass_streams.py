"""A pass lands each claim as the adapter yields it, so an adapter whose hooks are generators
holds one session at a time; what it found is counted however much of it the claim hook walks."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator

from asz_core import hookimpl
from asz_core.context import PassSummary
from asz_core.plugin import AdapterInfo, Found, SessionClaim
from asz_core.testing import PassRunner

SESSIONS = ("s-one", "s-two", "s-three")


def _adapter(events: list[str], *, walk_found: bool = True,
             fail_after: str | None = None) -> types.ModuleType:
    """An adapter whose discover and claim are generators, noting each step in ``events``."""
    module = types.ModuleType("streaming")

    @hookimpl
    def asz_adapter_info() -> AdapterInfo:
        return AdapterInfo(version="1.0", runtime="streaming")

    def discovered() -> Iterator[Found]:
        for session in SESSIONS:
            events.append(f"discover {session}")
            yield Found(kind="session", key=session, session=session)

    @hookimpl
    def asz_discover(ctx):  # type: ignore[no-untyped-def]
        return discovered()

    @hookimpl
    def asz_claim(ctx, found):  # type: ignore[no-untyped-def]
        for item in (found if walk_found else [Found(kind="session", key=s, session=s) for s in SESSIONS]):
            events.append(f"claim {item.session}")
            yield SessionClaim(item.session, [item])
            if item.session == fail_after:
                raise RuntimeError("the runtime's directory went away")

    @hookimpl
    def asz_land(ctx, claim, session):  # type: ignore[no-untyped-def]
        events.append(f"land {claim.session}")

    for fn in (asz_adapter_info, asz_discover, asz_claim, asz_land):
        setattr(module, fn.__name__, fn)
    return module


def _run(asz_pass: PassRunner, make: Callable[[list[str]], types.ModuleType]) -> tuple[list[str], PassSummary]:
    events: list[str] = []
    asz_pass.register("streaming", make(events))
    asz_pass.configure(adapters=[{"name": "streaming"}])
    return events, asz_pass.run()


def test_each_claim_lands_before_the_next_session_is_discovered(asz_pass: PassRunner) -> None:
    events, summary = _run(asz_pass, _adapter)
    assert events == [step for s in SESSIONS for step in (f"discover {s}", f"claim {s}", f"land {s}")]
    counters = summary.by_adapter["streaming"]
    assert (counters.found, counters.sessions, summary.failed) == (3, 3, False)


def test_what_the_claim_hook_does_not_walk_is_found_all_the_same(asz_pass: PassRunner) -> None:
    events, summary = _run(asz_pass, lambda e: _adapter(e, walk_found=False))
    assert [e for e in events if e.startswith("land")] == [f"land {s}" for s in SESSIONS]
    assert summary.by_adapter["streaming"].found == 3


def test_a_claim_hook_raising_midway_keeps_what_landed_and_fails_the_pass(asz_pass: PassRunner) -> None:
    events, summary = _run(asz_pass, lambda e: _adapter(e, fail_after="s-one"))
    assert [e for e in events if e.startswith("land")] == ["land s-one"]
    assert summary.failed and summary.totals.errors == 1
    (error,) = summary.errors
    assert error.adapter == "streaming" and "went away" in error.message
    assert (asz_pass.root / "s-one").is_dir() and not (asz_pass.root / "s-two").exists()
