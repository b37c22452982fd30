"""The ``otlp-push`` plugin's hooks: the ``export.otlp`` section, ``asz-pipeline push``, and a
push at the end of every pass when an endpoint is configured.

Sessions are private data: nothing is sent unless ``export.otlp.endpoint`` names a receiver.
The push machinery (protobuf, grpc, http) and the push's configuration are imported only then:
a pass that exports nothing does not pay for loading them.
A pass that pushes does it while it still holds the root's lock, and ``push`` takes the same
lock, so ``push.state`` has one writer at a time.

In ``run --watch`` the same process makes pass after pass, so what a receiver asked for lasts
across them: after a throttle with ``Retry-After`` no push is tried until that time has passed,
and the ``max_bytes_per_minute`` budget carries over from one pass to the next.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from asz_core import hookimpl
from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App
from asz_core.config import RENAMED_ADAPTERS
from asz_core.context import PassContext, PassSummary
from asz_core.errors import ConfigError
from asz_core.host import PluginHost
from asz_core.pipeline import hold_root
from asz_core.root.storage import StorageRoot
from asz_plugins.otlp_push.limiter import WireBudget
from asz_plugins.otlp_push.section import SCHEMA, SECTION, sends

if TYPE_CHECKING:
    import argparse  # annotations only: a landing process never builds a parser
    from pathlib import Path

    from asz_core.config import Config
    from asz_core.plugin import AdapterInfo
    from asz_plugins.otlp_push.config import OtlpConfig
    from asz_plugins.otlp_push.push import PushResult
    from asz_plugins.otlp_push.receipts import PushReceipts

__all__ = ["asz_add_commands", "asz_config_sections", "asz_pass_end", "asz_sessions_removed", "runtime_resolver"]

NAME = "otlp-push"

#: receiver → monotonic time before which a watching process does not push (Retry-After)
_hold_until: dict[str, float] = {}
#: (receiver, bytes per minute) → the budget a watching process spends across passes
_budgets: dict[tuple[str, int], WireBudget] = {}


def runtime_resolver(host: PluginHost) -> Callable[[str], str]:
    """Adapter name → its runtime's display name (``AdapterInfo.runtime``); an adapter not
    installed here is named by its own name."""
    return _runtimes(host.adapter_info)


def _runtimes(adapter_info: Callable[[str], AdapterInfo | None]) -> Callable[[str], str]:
    def runtime_of(adapter: str) -> str:
        # a header landed under an adapter's old name is that adapter's
        info = adapter_info(RENAMED_ADAPTERS.get(adapter, adapter))
        return info.runtime if info is not None and info.runtime else adapter
    return runtime_of


def _budget(cfg: OtlpConfig) -> WireBudget:
    key = (cfg.receiver, cfg.max_bytes_per_minute)
    budget = _budgets.get(key)
    if budget is None:
        budget = _budgets[key] = WireBudget(cfg.max_bytes_per_minute)
    return budget


def _remember_throttle(result: PushResult) -> None:
    if result.throttled and result.retry_after_s:
        _hold_until[result.receiver] = time.monotonic() + result.retry_after_s


@hookimpl
def asz_config_sections() -> dict[str, dict[str, Any]]:
    return {SECTION: SCHEMA}


@hookimpl
def asz_pass_end(ctx: PassContext, summary: PassSummary) -> None:
    """Push what the root holds and the receiver has not taken, when an endpoint is set."""
    if ctx.dry_run or ctx.config is None:
        return
    section = ctx.config.section(SECTION)
    if not sends(section):
        return
    from asz_core.redact import redact_text  # a pass that pushes: loaded only now
    from asz_plugins.otlp_push.config import OtlpConfig

    cfg = OtlpConfig.from_section(section)
    wait = _hold_until.get(cfg.receiver, 0.0) - time.monotonic()
    if wait > 0:
        ctx.reporter.warn(f"{NAME}: {cfg.receiver} asked to wait; the next push is in {wait:.0f}s")
        return
    plain = cfg.plain_text_secret()
    if plain:
        ctx.reporter.warn(f"{NAME}: {plain}")
    try:
        PushResult, push_root = _push_machinery()
    except OtlpNotInstalled as exc:
        ctx.error(NAME, str(exc))
        return
    try:
        result = push_root(ctx.root.path, cfg, runtime_of=_runtimes(ctx.adapter_info),
                           budget=_budget(cfg), clock=ctx.clock)
    except Exception as exc:  # noqa: BLE001 - a push failing must not lose the pass's summary
        result = PushResult(cfg.receiver, started_ns=ctx.clock())
        result.errors.append(f"{type(exc).__name__}: {exc}")
    _remember_throttle(result)
    print(f"{result.line()} -> {result.receiver}", file=sys.stderr)
    for note in result.notes:
        ctx.reporter.warn(f"{NAME}: {redact_text(note)}")
    for error in result.errors:
        ctx.error(NAME, redact_text(error))  # in the summary the pass finishes after this hook


@hookimpl
def asz_receipts(config: Config, root: Path) -> PushReceipts | None:
    """What the receiver of ``export.otlp`` has taken, for retention (``push.state``)."""
    section = config.section(SECTION)
    if not sends(section):
        return None
    from asz_plugins.otlp_push.config import OtlpConfig
    from asz_plugins.otlp_push.receipts import PushReceipts

    return PushReceipts.load(OtlpConfig.from_section(section), root)


@hookimpl
def asz_sessions_removed(config: Config, root: Path, sessions: list[str]) -> None:
    """A scenario removal took these sessions away: the metrics spool files they own and their
    lines in ``metrics.state`` go (steps 5 and 6), then their lines in ``push.state``."""
    import time

    from asz_core.metrics.removal import forget_sessions
    from asz_plugins.otlp_push.state import PushState

    forget_sessions(root, sessions, now_ns=time.time_ns())
    state = PushState.load(root)
    if state.forget(sessions):
        state.save()


@hookimpl
def asz_add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "push", help="send landed files to an OTLP logs receiver",
        description="Send every landed file the receiver named by export.otlp has not taken, "
                    "one OTLP log record per file, session by session. Refuses to run "
                    "without export.otlp.endpoint. Exit 1 on errors; a receiver that "
                    "throttles leaves the rest for the next push.")
    p.add_argument("--json", action="store_true", help="print the push line as one JSON object")
    p.add_argument("--wait", action="store_true",
                   help="if a pass holds the root, wait for it instead of failing")
    p.set_defaults(func=run_push)


def run_push(args: argparse.Namespace, app: App) -> int:
    """``asz-pipeline push``."""
    from asz_core.redact import redact_text
    from asz_plugins.otlp_push.config import OtlpConfig

    config = app.config
    cfg = OtlpConfig.from_section(config.section(SECTION))
    if not cfg.endpoint:
        print(f"asz: export.otlp.endpoint is empty in {config.source}, so nothing is sent: set it "
              f"to the receiver (grpc: host:port, such as 127.0.0.1:11800 for a SkyWalking OAP; "
              f"http: its base URL). Sessions are private: only a receiver named there gets them.",
              file=app.err)
        return EXIT_CONFIG
    if not cfg.logs and not cfg.metrics:
        print(f"asz: export.otlp.logs and export.otlp.metrics are both false in {config.source}, so "
              f"push has nothing to send; set either to true", file=app.err)
        return EXIT_CONFIG
    plain = cfg.plain_text_secret()
    if plain:
        print(f"warning: {plain}", file=app.err)
    _, push_root = _push_machinery()
    with hold_root(StorageRoot(config.root), wait=args.wait, doing="push"):
        result = push_root(config.root, cfg, runtime_of=runtime_resolver(app.host))
    if args.json:
        print(json.dumps(result.as_dict()), file=app.out)
    else:
        print(f"{result.line()} -> {result.receiver}", file=app.out)
        for error in result.errors:
            print(f"error: {redact_text(error)}", file=app.err)
        for note in result.notes:
            print(f"note: {redact_text(note)}", file=app.err)
    return EXIT_FAILED if result.failed else EXIT_OK


class OtlpNotInstalled(ConfigError):
    """``export.otlp`` is set, and the packages that speak OTLP are not installed (exit 2)."""


def _push_machinery() -> tuple[type[PushResult], Callable[..., PushResult]]:
    """The push, imported now; ``OtlpNotInstalled`` says what to install when it cannot be."""
    try:
        from asz_plugins.otlp_push.push import PushResult, push_root
    except ImportError as exc:
        raise OtlpNotInstalled([
            f"export.otlp.endpoint is set, but the OTLP packages are not installed ({exc}): "
            f"pip install 'asz[otlp]' (opentelemetry-proto, grpcio, googleapis-common-protos), or "
            f"empty export.otlp.endpoint"]) from None
    return PushResult, push_root
