"""One format's work directory during a check: build into it, collect it, read what landed.

A check drives the ordinary code, never a copy of it: ``build`` is :func:`~.build.build`, and a
collect is one :func:`~asz_core.pipeline.run_pass` over the ``asz.yaml`` the build wrote, with the
adapters installed here. Its clock is fixed (the plan's last record plus a minute per pass), so
a check writes the same bytes every time.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asz_core.context import PassSummary, QuietReporter
from asz_core.host import PluginHost
from asz_core.root.durable import open_landed
from asz_core.root.storage import landed_files
from asz_core.scenario.build import SOURCE_DIR, BuildOptions, build
from asz_core.scenario.expect import Expectations
from asz_core.scenario.model import Scenario
from asz_core.scenario.plan import Plan
from asz_core.sessiondata.model import Record

if TYPE_CHECKING:
    from asz_core.scenario.receiver import GrpcReceiver, HttpReceiver
    from asz_core.scenario.receiver_pool import ReceiverPool

__all__ = ["LandedRecords", "Workspace", "read_landed"]


@dataclass
class LandedRecords:
    """One landed file: its path relative to the root, header and records with their lines."""

    relpath: str
    seq: int
    header: dict[str, Any]
    records: list[tuple[bytes, Record]]


def read_landed(root: Path, session: str) -> list[LandedRecords]:
    """Every landed file of a session, in landed order (by seq)."""
    out = []
    for seq, path in sorted(landed_files(root / session)):
        with open_landed(path) as landed:
            rows = list(landed.raw_records())
            out.append(LandedRecords(str(path.relative_to(root)), seq, landed.header, rows))
    return out


@dataclass
class Workspace:
    scenario: Scenario
    expect: Expectations
    format: str
    out: Path
    at_ms: int
    scale: float = 1.0
    interval_ms: float = 0.0
    plan: Plan | None = None
    passes: int = 0
    #: what ``lose`` deleted so far, relative to the root
    lost: list[str] = field(default_factory=list)
    #: what the last :meth:`parse` did (``None`` before the first)
    last_parse: Any = None
    #: the check's receivers, which :meth:`receiver` lends (``None``: one of its own each time)
    receivers: ReceiverPool | None = None

    @property
    def runtime(self) -> bool:
        """A runtime format: its files are collected through the runtime's adapter."""
        return self.format == "claude-code"

    @property
    def session(self) -> str:
        assert self.plan is not None, "nothing built yet"
        return self.plan.session

    @property
    def source(self) -> Path:
        return self.out / SOURCE_DIR

    @cached_property
    def host(self) -> PluginHost:
        return PluginHost().load_entry_points()

    @cached_property
    def command_host(self) -> PluginHost:
        """The host :meth:`command` runs commands with: every installed plugin, and the mock
        runtime an ``sd`` build's own files name, so a push says which runtime made them."""
        from asz_core.scenario import mock_adapter

        host = PluginHost().load_entry_points()
        host.register("mock", mock_adapter)
        return host

    def command(self, *argv: str) -> tuple[int, str]:
        """``asz-pipeline ARGV`` as the command line runs it: its exit status, and what it printed."""
        from asz_core.cli.app import App
        from asz_core.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), App(host=self.command_host, out=out, err=err))
        return code, out.getvalue() + err.getvalue()

    @contextmanager
    def receiver(self, protocol: str, **settings: Any) -> Iterator[GrpcReceiver | HttpReceiver]:
        """A loopback receiver for the block, as new (:mod:`.receiver_pool`)."""
        from asz_core.scenario.receiver_pool import lend_receiver

        with lend_receiver(self.receivers, protocol, **settings) as rx:
            yield rx

    def options(self, through: str = "") -> BuildOptions:
        return BuildOptions(format=self.format, at_ms=self.at_ms, scale=self.scale, interval_ms=self.interval_ms,
                            through=through, max_delta_bytes=self.expect.max_delta_bytes)

    def build(self, through: str = "") -> Plan:
        self.plan = build(self.scenario, self.out, self.options(through)).plans[0]
        return self.plan

    def collect(self, root: Path | None = None) -> PassSummary | None:
        """One pass over ``root``'s configuration (this workspace's by default); an sd build is
        landed already, so it has nothing to collect."""
        if not self.runtime:
            return None
        from asz_core.config import load_config
        from asz_core.pipeline import run_pass

        base = root or self.out
        config = load_config(self.host, str(base / "asz.yaml"))
        self.passes += 1
        moment = ((self.plan.at + self.plan.span_ms()) if self.plan else self.at_ms) + 60_000 * self.passes
        return run_pass(self.host, config, clock=lambda: moment * 1_000_000, reporter=QuietReporter())

    def parse(self, root: Path | None = None) -> Any:
        """Parse the session into its round chain, as a pass's parse does; kept as :attr:`last_parse`."""
        from asz_core.assembly.parse import DEFAULT_MAX_ROUND_BYTES, parse_session

        result = parse_session(root or self.out, self.session,
                               max_round_bytes=self.expect.max_round_bytes or DEFAULT_MAX_ROUND_BYTES,
                               now="2026-01-01T00:00:00Z")
        if root is None:
            self.last_parse = result
        return result

    def landed(self, root: Path | None = None) -> list[LandedRecords]:
        return read_landed(root or self.out, self.session)

    def copy(self, name: str) -> Path:
        """A copy of the whole work directory (root, source, configuration) beside it."""
        target = self.out.parent / f"{self.out.name}-{name}"
        if target.exists():
            remove_tree(target)
        shutil.copytree(self.out, target, symlinks=True, ignore=shutil.ignore_patterns(".lock"))
        config = target / "asz.yaml"
        if config.exists():  # it names its directory by absolute path: now the copy's
            config.write_bytes(config.read_bytes().replace(str(self.out.resolve()).encode(),
                                                           str(target.resolve()).encode()))
        return target


def remove_tree(path: Path) -> None:
    """Remove a work directory; landed files are read-only, their directories are not."""
    shutil.rmtree(path)
