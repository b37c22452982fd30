"""The hooks asz offers, each documented where it is declared.

There are two kinds of plugin, loaded from two entry-point groups:

**Adapters** (group ``asz.adapters``; entry-point name = the adapter's name in ``asz.yaml``)
turn one runtime's files into Session Data. The host calls the hooks of each adapter named in
``asz.yaml`` itself, in the order the file lists them, so an adapter never sees another's
calls: ``asz_discover`` → ``asz_claim`` → ``asz_land`` (once per claimed session; for a session
new to the root, ``asz_new_session`` first, when the adapter has it). ``verify``
calls ``asz_verify`` of every installed adapter that implements it.

A pass lands each claim as ``asz_claim`` yields it and lets it go before asking for the next. So
an adapter whose ``asz_discover`` and ``asz_claim`` are generators (``yield`` one unit, one
claim at a time) holds one session at a time, whatever the size of the corpus; returning lists
works the same and holds them all.

**Plugins** (group ``asz.plugins``) observe passes (``asz_pass_start``, ``asz_file_landed``,
``asz_pass_end``) and may add configuration sections and commands. Every loaded plugin sees
every pass that runs. What happens in a pass, step by step, is in ``docs/architecture.md``.

Implement a hook by decorating a function of your module with :data:`asz_core.hookimpl`; a
module needs only the hooks it uses. The parameter names are the contract: pluggy passes
arguments by name, and a hook implementation may accept fewer of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from asz_core.collect import AppendSource
    from asz_core.context import AdapterContext, ConfigSections, PassContext
    from asz_core.glossary import Glossary
    from asz_core.plugin import AdapterInfo, Found, SessionClaim
    from asz_core.retention.receipts import Receipts
    from asz_core.root.landing import LandedFile
    from asz_core.root.storage import SessionHandle
    from asz_core.session_report import Problem
    from asz_core.tally import PassSummary

hookspec = pluggy.HookspecMarker("asz")


# ---- adapters ------------------------------------------------------------------------------


@hookspec(firstresult=True)
def asz_adapter_info() -> AdapterInfo:  # type: ignore[empty-body]
    """Describe the adapter: its version, the runtime it reads and what it counts.

    Called once when the adapter loads. ``AdapterInfo.runtime`` is the runtime's display name
    ("Claude Code"), used where a person or a receiver needs one.
    """


@hookspec(firstresult=True)
def asz_options_schema() -> dict[str, Any]:  # type: ignore[empty-body]
    """Return the JSON Schema (``properties`` of an object) of this adapter's own options.

    The host adds them to the options every adapter has (``name``, ``enabled``,
    ``source_root``, ``include``, ``exclude``, ``collector``) and validates each entry of
    ``asz.yaml`` against the result before any pass, so an unknown key or a wrong type is
    reported with its file, line and key path. ``default`` values fill options left out.
    """


@hookspec(firstresult=True)
def asz_discover(ctx: AdapterContext) -> Iterable[Found]:  # type: ignore[empty-body]
    """Find what the adapter's sources hold now, without reading them whole.

    Return (or yield) one :class:`~asz_core.plugin.Found` per unit the adapter lands by (a
    session, a body file, a store it does not read yet). Give each unit the ``directory`` its
    session belongs to, and the host applies ``include``/``exclude``: units it leaves out never
    reach ``asz_claim``. Discovery should only list and stat: a pass that finds nothing new must
    cost little more than that. A generator is walked once, by
    the pass's ``asz_claim``, while earlier sessions land. ``asz-pipeline sources`` shows what
    this finds without landing anything.
    """


@hookspec(firstresult=True)
def asz_claim(ctx: AdapterContext, found: Iterable[Found]) -> Iterable[SessionClaim]:  # type: ignore[empty-body]
    """Decide which session each found unit belongs to, and which to land now.

    ``found`` is what ``asz_discover`` returned, less the units the session filter leaves out,
    to walk once (make a list of it to walk it again). Count what cannot be placed yet as
    waiting and what cannot be read as unreadable (``ctx.counters``). Return (or yield) one
    :class:`~asz_core.plugin.SessionClaim` per session to land; each is landed under that
    session's lock as soon as it is yielded. Units left out are simply not landed this pass.

    A claim that lists its sources in ``settled_by`` gets the host's settled protocol: a
    session whose sources and cursors stat as the pass that settled it left them is counted,
    not locked or landed (:class:`~asz_core.plugin.SettledBy`).
    """


@hookspec(firstresult=True)
def asz_new_session(ctx: AdapterContext, claim: SessionClaim) -> AppendSource | None:
    """The one append-only source ``claim`` holds, for a session new to the root; ``None`` when
    it holds anything else. Optional.

    Asked only when the session's directory is not in the root and the pass lands in a group.
    The host then lands the source itself, in one place (:mod:`asz_core.collect.fresh`): the
    bytes, the steps and their order are those ``asz_land`` with
    :func:`~asz_core.collect.collect_append` would give, without the session handle, the
    landing file and the collector around each step, which a new session of a few lines pays
    more for than for its lines. Whatever that landing does not take as it is (the source holds
    no whole line, a line the dialect warns about, more than one file's worth) and every session
    already in the root goes to ``asz_land`` as always. Return a source only when landing it
    alone is everything ``asz_land`` would do for a new session: the host calls nothing else.
    """


@hookspec(firstresult=True)
def asz_land(ctx: AdapterContext, claim: SessionClaim, session: SessionHandle) -> None:
    """Land what ``claim`` holds into ``session``, which the host has locked.

    Write through ``session.begin``/``session.commit`` or the collectors of
    :mod:`asz_core.collect`, and move a cursor only after the file it covers has landed. A
    collector is handed a dialect, which makes each record as the mapping it lands as
    (:func:`~asz_core.sessiondata.record` and the part functions, :func:`~asz_core.sessiondata.text_part`,
    :func:`~asz_core.sessiondata.data_part`, ...); a file written by hand takes each record as its
    encoded line with its ``ord``, ``off``, ``bytes`` and ``time``
    (:meth:`~asz_core.root.landing.LandingFile.write`). What
    ``ctx`` counts, warns and fails meanwhile is this session's outcome, merged by the pass once
    this returns (:mod:`asz_core.land`). An exception here is reported with the adapter's name
    and the session, counts as an error, and does not stop other sessions or adapters.
    """


@hookspec
def asz_glossary() -> list[Glossary]:  # type: ignore[empty-body]
    """The vocabulary of each dialect the adapter reads: what its runtime calls every name the
    model uses, and where it records it (:class:`~asz_core.glossary.Glossary`).

    Called only by ``asz-pipeline glossary`` (and what else shows a glossary), never by a pass,
    so the data may be imported inside the hook. Keep it beside the dialect code that reads
    those names: a rename in the runtime then changes both in one place. Optional.
    """


@hookspec
def asz_verify(root: Path, sessions: frozenset[str] | None) -> Iterable[Problem]:  # type: ignore[empty-body]
    """Check what the adapter keeps of its own in ``root`` (its tables under ``_<name>/``) against
    the landed files, for ``asz-pipeline verify``: return each problem found.

    The core reads every landed file, but not an adapter's tables, so only the adapter can see
    that its table says a file landed that is no longer there (deleted together with the
    session's ``index/``, where the core's summary would have said so). Each
    :class:`~asz_core.session_report.Problem` names the session it belongs to (its report takes
    it, and verify exits 1), a ``kind`` (``gone``, ``link``; ``gone`` for what the table says
    landed and no landed file holds), the path where it should be, and a message that says
    what to do. ``sessions``: only those (``None``: every session). An exception here is a
    ``check failed`` problem under the adapter's name. Optional.

    Read only, as verify does: take no lock (a pass may be landing), write nothing, never follow
    a link inside the root (read through :func:`~asz_core.root.durable.read_small` and
    :mod:`~asz_core.root.confined`; a link is a ``link`` problem). Read the table before listing
    the files it names: a table written only after the files it names are durable then never
    names one the listing can miss.
    """


# ---- plugins -------------------------------------------------------------------------------


@hookspec
def asz_pass_start(ctx: PassContext) -> None:
    """A pass is starting; the root is locked and the configuration validated."""


@hookspec
def asz_file_landed(ctx: PassContext, adapter: str, landed: LandedFile) -> None:
    """``adapter`` has installed ``landed`` in the root (not called in a dry run). Called in the
    pass's own process, in the order the adapter claimed its sessions, once the session that
    landed it is done (wherever it landed). An exception here is that session's error."""


@hookspec
def asz_pass_end(ctx: PassContext, summary: PassSummary) -> None:
    """The pass is over; ``summary`` holds its counts and errors. Runs even after errors. A
    failure to report goes to ``ctx.error(name, message)``: the pass's summary, finished after
    this hook, counts it and fails."""



@hookspec(firstresult=True)
def asz_receipts(config: ConfigSections, root: Path) -> Receipts | None:
    """What the receiver this configuration sends to has confirmed of ``root``'s landed files
    (:class:`~asz_core.retention.receipts.Receipts`), for retention to decide which may go.

    Implemented by the plugin that sends files and records what its receiver took; ``None``
    when it sends nothing under this configuration. With no answer, nothing is confirmed.
    """


@hookspec
def asz_session_sources(config: ConfigSections, root: Path, session: str) -> dict[str, tuple[str, int]] | None:
    """The source files this plugin attributes to ``session`` that no cursor of the session
    names (a file read whole into a store many sessions share, such as a provider body):
    absolute path → (its state, ``landed`` once every byte of it is, and its size as last seen).
    A scenario removal (:mod:`asz_core.removal`) removes a session only when every file its build
    wrote is landed, and only when every file attributed to it is one the build wrote. ``None``:
    this plugin reads no such file under this configuration."""


@hookspec
def asz_sessions_removed(config: ConfigSections, root: Path, sessions: list[str]) -> None:
    """A scenario removal (:mod:`asz_core.removal`) deleted these sessions' landed files and
    chains from ``root``: drop every line of this plugin's state there that names one of them.
    Called only once the files are gone, so nothing is sent or derived twice; an exception keeps
    the sessions' markers, and the next pass calls again."""


@hookspec
def asz_config_sections() -> dict[str, dict[str, Any]]:  # type: ignore[empty-body]
    """Top-level ``asz.yaml`` sections this plugin owns, as ``{"dotted.key": JSON Schema}``.

    For example ``{"export.otlp": {...}}``. They are validated with the rest of the file.
    """


@hookspec
def asz_add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add subcommands to ``asz-pipeline``. A command sets ``func`` with
    ``parser.set_defaults(func=...)``; it is called with the parsed arguments and the
    loaded :class:`~asz_core.cli.app.App`, and returns the exit status."""
