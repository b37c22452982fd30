"""The removal step at the end of every pass over a scenario root, after the push.

It runs under the pass's root lock, so no other pass lands, pushes or removes meanwhile. The
steps, in this order:

1. Only over a root holding ``_scenario/`` (a ``claude-code`` build's sign), and only when the
   local adapter's source directory holds markers; anything else removes nothing and says
   nothing.
2. Whatever a stopped removal left in ``_removed/`` is deleted. A ``_removed`` that is a link or
   not a directory keeps every marked session, said once: nothing goes through it.
3. What keeps every marked session (:func:`~asz_core.removal.decide.blocked_for_all`, and a
   ``metrics.state`` that does not read while metrics are derived) is said once, as
   ``kept: every marked session: <reason>``, and nothing is removed.
4. Each marker is read: one saying ``removing`` first, and finished without deciding again; any
   other removed when :func:`~asz_core.removal.decide.decide` says it may go; at most
   :data:`MAX_PER_PASS` sessions a pass. A session kept for a
   reason a person must act on is said once per process as ``kept: <session>: <reason>``; one
   only waiting (not sent yet, not old enough) is said nothing of.
5. For every session removed (:func:`~asz_core.removal.remove.remove_session`, steps 1 to 4), the
   lines that name it in the state files go: ``push.state`` (through the sending plugin's
   ``asz_sessions_removed``) and the adapters' settled tables. Then its marker is deleted, last.

A removal that stops on a check is an error naming the file, and the session is left for a
person; one that fails otherwise is an error, and the next pass goes on with it.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from asz_core.removal.marker import MARKER_DIR, REMOVING, Marker, MarkerError, read_marker
from asz_core.removal.scenario_root import REMOVED_DIR, UnsafeRemoved, is_scenario_root, sweep_removed
from asz_core.root import faults

if TYPE_CHECKING:
    import pluggy

    from asz_core.context import ConfigSections, PassContext
    from asz_core.removal.decide import Sending, Sources

__all__ = ["LOCAL_ADAPTER", "NAME", "RemovalResult", "promise", "remove_sent"]

NAME = "scenario-removal"
#: the adapter under whose source directory a ``claude-code`` build writes its sessions and markers
LOCAL_ADAPTER = "claude-code-local"
EVERY = "every marked session"
#: how many sessions one pass removes, resumed ones included: the pass holds the root while it
#: removes, and a feed can mark sessions faster than that is worth holding it (a starting value,
#: as upstream's)
MAX_PER_PASS = 16

#: (who, reason) already said by this process: a kept line is said once
_said: set[tuple[str, str]] = set()
#: sessions whose removal stopped on a check in this process: left for a person
_stopped: set[str] = set()


@dataclass
class RemovalResult:
    removed: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)      #: (session or EVERY, reason)
    waiting: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def promise(config: ConfigSections, hooks: pluggy.HookRelay) -> str | None:
    """What a pipeline over ``config``'s root will remove, asked as every pass asks before it looks
    at a session (step 3), for the ``scenario :`` line a pipeline prints when it starts; ``None``
    over a root that is no scenario root."""
    from asz_core.config import Config
    from asz_core.removal.decide import blocked_for_all

    if not isinstance(config, Config) or not is_scenario_root(config.root):
        return None
    local = next((e for e in config.adapters if e.name == LOCAL_ADAPTER and e.enabled), None)
    if local is None or not local.options.get("source_root"):
        return f"no session is removed: {LOCAL_ADAPTER}, under whose source directory a build marks sessions, is off"
    reason = blocked_for_all(_sending(hooks, config, config.root), _sources(config))
    if reason:
        return f"no session is removed: {reason}"
    return "a session a build marked is removed by its policy once all of it is sent"


def remove_sent(ctx: PassContext) -> RemovalResult | None:
    """Steps 1 to 5 over the pass's root; ``None`` when it is no scenario root (step 1)."""
    from asz_core.config import Config

    root = ctx.root.path
    config = ctx.config
    if ctx.dry_run or not isinstance(config, Config) or not is_scenario_root(root):
        return None
    roots = _roots(config)
    source = roots.get(LOCAL_ADAPTER)
    names = _marker_names(source) if source is not None else []
    if source is None or not names:
        return None
    # the rest only over a root with markers: a pass over any other root loads none of it
    from asz_core.removal.decide import blocked_for_all, decide
    from asz_core.removal.remove import RemovalStopped, SessionBusy, remove_session

    result = RemovalResult()
    try:                                                                       # step 2
        sweep_removed(root)
    except UnsafeRemoved:
        _keep(result, EVERY, f"{root / REMOVED_DIR} is a symbolic link or not a directory; nothing is "
                             f"deleted or moved through it")
        return _said_and_done(ctx, result)
    except OSError as exc:
        result.errors.append(f"{root / REMOVED_DIR}: {exc.strerror or exc}")
    sending = _sending(ctx.hooks, config, root)                                      # step 3
    sources = _sources(config)
    reason = blocked_for_all(sending, sources) or _load_derived(sending, root)
    if reason:
        _keep(result, EVERY, reason)
        return _said_and_done(ctx, result)
    finished: list[tuple[str, Path]] = []
    reached = 0
    for marker, path in _markers(result, source, names):                       # step 4
        if marker.session in _stopped:
            continue
        if reached >= MAX_PER_PASS:
            result.waiting.append((marker.session, f"{MAX_PER_PASS} sessions went this pass; the rest go at the next"))
            continue
        if marker.state != REMOVING:
            verdict = decide(root, sources, marker, roots, sending, ctx.clock(), _attributed(ctx, config, marker))
            if not verdict.go:
                if verdict.kept:
                    _keep(result, marker.session, verdict.reason)
                else:
                    result.waiting.append((marker.session, verdict.reason))
                continue
        reached += 1
        try:
            remove_session(root, source, marker, path)
        except SessionBusy as exc:
            result.waiting.append((marker.session, str(exc)))
            continue
        except RemovalStopped as exc:
            _stopped.add(marker.session)
            result.errors.append(f"{marker.session}: the removal stopped: {exc}; the session is left for a person")
            continue
        except OSError as exc:
            result.errors.append(f"{marker.session}: the removal did not finish ({exc}); the next pass goes on with it")
            continue
        finished.append((marker.session, path))
    if finished and _forget(ctx, config, root, [s for s, _ in finished], result):  # step 5
        faults.checkpoint("remove-state")
        for session, path in finished:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                result.errors.append(f"{session}: its marker {path} cannot be deleted ({exc.strerror or exc})")
                continue
            result.removed.append(session)
            faults.checkpoint("remove-unmarked")
    return _said_and_done(ctx, result)


def _marker_names(source: Path) -> list[str]:
    """The markers' names; none when the marker directory is a link (nothing is read through it)."""
    try:
        if not stat.S_ISDIR(os.lstat(source / MARKER_DIR).st_mode):
            return []
        entries = list(os.scandir(source / MARKER_DIR))
    except OSError:
        return []
    return sorted(e.name for e in entries
                  if e.name.endswith(".json") and not e.name.startswith(".") and e.is_file(follow_symlinks=False))


def _markers(result: RemovalResult, source: Path, names: list[str]) -> list[tuple[Marker, Path]]:
    """Every marker that reads, a removal already begun first."""
    out = []
    for name in names:
        path = source / MARKER_DIR / name
        try:
            # a marker is the source tree's (rule 5 of confined): only its own name is never
            # followed, and nothing waits on a fifo in its place
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise MarkerError(f"marker {path}: not a regular file")
                marker = read_marker(path, f.read(1 << 24))
        except (OSError, MarkerError) as exc:
            _keep(result, name.removesuffix(".json"), str(exc))
            continue
        out.append((marker, path))
    return sorted(out, key=lambda mp: mp[0].state != REMOVING)


def _sending(hooks: pluggy.HookRelay | None, config: object, root: Path) -> Sending:
    """The receiver this configuration sends to, its switches, what it confirmed, and whether
    metrics are derived."""
    from asz_core.config import Config
    from asz_core.removal.decide import Sending
    from asz_core.retention.step import receipts_of

    assert isinstance(config, Config) and hooks is not None
    section = config.section("export.otlp")
    receipts, _problem = receipts_of(hooks, config, root)
    sends = bool(section.get("endpoint")) and bool(receipts.receiver)
    return Sending(receiver=receipts.receiver if sends else "", logs=bool(section.get("logs", True)),
                   metrics=bool(section.get("metrics", True)), receipts=receipts if sends else None,
                   derives=bool(config.section("metrics").get("enabled", True)))


def _load_derived(sending: Sending, root: Path) -> str:
    """``metrics.state`` into ``sending``, once a pass; why every session stays when it does not read."""
    from asz_core.metrics.spool import SPOOL_DIR
    from asz_core.metrics.state import MetricsState, MetricsStateError

    if not sending.derives:
        return ""
    try:
        state = MetricsState.load(root / SPOOL_DIR)
    except MetricsStateError as exc:
        return f"{exc}; no session goes before its metrics are known to be derived"
    sending.derived = None if state.first else state
    return ""


def _enabled(config: object) -> list[tuple[str, Path]]:
    """Each enabled adapter entry with a source directory, as ``(name, source_root)``."""
    from asz_core.config import Config

    assert isinstance(config, Config)
    return [(e.name, Path(str(e.options["source_root"]))) for e in config.adapters
            if e.enabled and e.options.get("source_root")]


def _roots(config: object) -> dict[str, Path]:
    """Each enabled adapter's source directory by name; of an adapter listed more than once, the
    entry reading where a build writes for it, so its landed files are traced to the build's."""
    from asz_core.removal.decide import CHANGES_NAMES, CHANGES_PREFIX

    enabled = _enabled(config)
    roots = dict(enabled)
    local = roots.get(LOCAL_ADAPTER)
    if local is not None:
        want = os.path.realpath(local / CHANGES_PREFIX.rstrip("/"))
        for name, root in enabled:
            if name in CHANGES_NAMES and os.path.realpath(root) == want:
                roots[name] = root
    return roots


def _sources(config: object) -> Sources:
    """The source directories rules 2 and 3 compare (the caller knows the local adapter is on)."""
    from asz_core.config import Config
    from asz_core.filters import SessionFilter
    from asz_core.removal.decide import CHANGES_NAMES, PROVIDER, Sources

    assert isinstance(config, Config)
    enabled = _enabled(config)
    local = dict(enabled)[LOCAL_ADAPTER]  # of a local adapter listed twice, the one _roots keeps
    entry = next(e for e in config.adapters if e.enabled and e.name == LOCAL_ADAPTER
                 and Path(str(e.options.get("source_root") or "")) == local)
    return Sources(local=local, changes=tuple(root for name, root in enabled if name in CHANGES_NAMES),
                   provider=next((root for name, root in enabled if name == PROVIDER), None),
                   local_filter=SessionFilter.of(entry.options.get("include") or (),
                                                 entry.options.get("exclude") or ()))


def _attributed(ctx: PassContext, config: object, marker: Marker) -> dict[str, tuple[str, int]]:
    """Every source file the adapters attribute to the session beside its cursors."""
    assert ctx.hooks is not None
    out: dict[str, tuple[str, int]] = {}
    for answer in ctx.hooks.asz_session_sources(config=config, root=ctx.root.path, session=marker.session):
        out.update(answer or {})
    return out


def _forget(ctx: PassContext, config: object, root: Path, sessions: list[str], result: RemovalResult) -> bool:
    """Step 5's state lines: the sending plugin's, then each adapter's settled table; whether
    they went (else the markers stay, and the next pass tries again)."""
    from asz_core.config import Config
    from asz_core.root.settled import SettledSessions

    assert isinstance(config, Config) and ctx.hooks is not None
    try:
        ctx.hooks.asz_sessions_removed(config=config, root=root, sessions=sessions)
    except Exception as exc:  # noqa: BLE001 - a plugin's failure keeps the markers: the next pass tries again
        result.errors.append(f"the state lines of {', '.join(sessions)} cannot be dropped ({exc}); the next pass "
                             f"tries again")
        return False
    for entry in config.adapters:
        info = ctx.adapter_info(entry.name)
        if info is None:
            continue
        table = SettledSessions.load(root, entry.name, info.version)
        for session in sessions:
            table.forget(session)
        table.save()
    return True


def _keep(result: RemovalResult, who: str, reason: str) -> None:
    result.kept.append((who, reason))


def _said_and_done(ctx: PassContext, result: RemovalResult) -> RemovalResult:
    for who, reason in result.kept:
        if (who, reason) not in _said:
            _said.add((who, reason))
            print(f"  kept: {who}: {reason}", file=sys.stderr)
    if result.removed:
        print(f"removed  : {len(result.removed)} scenario session(s), sent in full: {', '.join(result.removed)}",
              file=sys.stderr)
    for error in result.errors:
        ctx.error(NAME, error)
    return result
