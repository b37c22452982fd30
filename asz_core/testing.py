"""Test helpers for adapter authors: a pytest plugin (loaded automatically once asz is installed).

Fixtures:

* ``asz_root`` — an empty storage root in a temporary directory;
* ``asz_pass`` — a :class:`PassRunner`: write an ``asz.yaml``, register adapters (installed ones
  load from their entry points; others can be registered as modules), run passes;
* ``assert_root_verifies`` — reads the root with ``verify`` and, where the independent checker
  ``sdcheck`` is available (``$ASZ_SDCHECK`` or ``../shared/tools/sdcheck``), with it too;
* ``as_record`` (a function) — a record as a dialect makes it, read back as a reader reads it:
  what a dialect's own tests look into (``as_record(MyDialect().convert(SourceLine(raw))).parts``);
* ``assert_lands_known_parts`` — fails when some dialect in the root landed records and not
  one part of them that is not ``unknown``: a dialect whose lines never reach it, or that reads
  none of them, lands a root that verifies and holds nothing anyone can read.

    def test_my_adapter(asz_pass, assert_root_verifies, tmp_path):
        asz_pass.configure(adapters=[{"name": "my-agent", "source_root": str(tmp_path / "src")}])
        summary = asz_pass.run()
        assert summary.totals.records == 3
        assert_root_verifies(asz_pass.root)
        assert_lands_known_parts(asz_pass.root)
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from asz_core.config import Config, load_config
from asz_core.context import PassSummary, QuietReporter
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass
from asz_core.sessiondata import Record, RecordFields, decode_record, encode_fields, open_file
from asz_core.verify import verify_root

__all__ = ["PassRunner", "as_record", "dialects_landing_only_unknown", "find_sdcheck", "run_sdcheck"]


def as_record(fields: RecordFields) -> Record:
    """A record as a dialect makes it (:func:`~asz_core.sessiondata.record`), encoded as the
    collector encodes it and read back as a reader reads it, so a test looks at what lands."""
    return decode_record(encode_fields(fields))


def find_sdcheck() -> Path | None:
    """The independent checker, if this machine has it."""
    explicit = os.environ.get("ASZ_SDCHECK")
    if explicit:
        return Path(explicit)
    for base in (Path.cwd(), *Path.cwd().parents):
        candidate = base.parent / "shared" / "tools" / "sdcheck"
        if candidate.is_file():
            return candidate
    return None


def run_sdcheck(root: Path) -> dict[str, Any] | None:
    """``sdcheck ROOT --json``'s verdict, or ``None`` when sdcheck is not available.

    The tool is a script of the standard library's modules alone and keeps no state between
    calls, so it runs in this process, read once: a Python start and its imports for each
    check were most of what a check cost (a test suite runs it after nearly every landing)."""
    tool = find_sdcheck()
    if tool is None:
        return None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        _sdcheck_main(str(tool))([str(root), "--json"])
    result: dict[str, Any] = json.loads(printed.getvalue())
    return result


@functools.cache
def _sdcheck_main(tool: str) -> Callable[[list[str]], int]:
    """The tool's ``main(argv)``: its script run once as a module of its own that is not
    ``__main__``, compiled from its source (no bytecode written beside it)."""
    module = types.ModuleType("asz_sdcheck")
    module.__file__ = tool
    exec(compile(Path(tool).read_bytes(), tool, "exec"), module.__dict__)
    depth_ok = getattr(module, "_depth_ok", None)
    limit = getattr(module, "MAX_DEPTH", None)
    if callable(depth_ok) and isinstance(limit, int):
        setattr(module, "_depth_ok", _bracket_count_first(depth_ok, limit))  # noqa: B010 -- a name of the tool's
    main: Callable[[list[str]], int] = module.main
    return main


def _bracket_count_first(depth_ok: Callable[[bytes], bool], limit: int) -> Callable[[bytes], bool]:
    """The tool's nesting check, answered without its byte-at-a-time walk where the answer
    cannot depend on it: a line never nests deeper than the number of ``[`` and ``{`` bytes it
    holds, so one holding at most ``limit`` of them is within the limit, whatever is quoted.
    Any other line goes to the tool's own check, so the verdict is the tool's for every line
    (that walk over every landed byte was half of a check's time)."""
    def within_limit(raw: bytes) -> bool:
        if raw.count(b"[") + raw.count(b"{") <= limit:
            return True
        return depth_ok(raw)
    return within_limit


def dialects_landing_only_unknown(root: Path) -> dict[str, int]:
    """Each dialect named by the root's landed files whose records hold no part but ``unknown``,
    with how many records it landed."""
    records: dict[str, int] = {}
    known: set[str] = set()
    for path in sorted(root.glob("*/*/*/*.sd")) + sorted(root.glob("*/provider_body/*.sd")):
        with open_file(path) as landed:
            dialect = str(landed.header.get("dialect", ""))
            for record in landed:
                records[dialect] = records.get(dialect, 0) + 1
                if any(part.k != "unknown" for part in record.parts):
                    known.add(dialect)
    return {dialect: count for dialect, count in records.items() if dialect not in known}


class PassRunner:
    """Runs passes against a temporary root with a configuration the test writes."""

    def __init__(self, workdir: Path, root: Path) -> None:
        self.workdir = workdir
        self.root = root
        self.host = PluginHost().load_entry_points()
        self.config_path = workdir / "asz.yaml"
        self.clock: Callable[[], int] | None = None
        self.reporter = QuietReporter()

    def register(self, name: str, module: Any) -> None:
        """Use ``module`` as the adapter ``name`` without installing it."""
        self.host.register(name, module)

    def configure(self, **sections: Any) -> Path:
        """Write ``asz.yaml`` from keyword sections; ``storage.root`` is the temporary root.
        ``adapters`` lists the only adapters the pass runs: every other installed one (the
        built-in ones stay on unless switched off) is written as switched off, so a test never
        reads the machine's own sessions."""
        if "adapters" in sections:
            named = {entry["name"] for entry in sections["adapters"]}
            sections["adapters"] = [*sections["adapters"], *({"name": name, "enabled": False}
                                                             for name in self.host.adapter_names()
                                                             if name not in named)]
        data = {"storage": {"root": str(self.root)}, **sections}
        self.config_path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
        return self.config_path

    def config(self) -> Config:
        return load_config(self.host, str(self.config_path))

    def run(self, **kwargs: Any) -> PassSummary:
        if self.clock is not None:
            kwargs.setdefault("clock", self.clock)
        kwargs.setdefault("reporter", self.reporter)
        return run_pass(self.host, self.config(), **kwargs)


@pytest.fixture
def asz_root(tmp_path: Path) -> Path:
    return tmp_path / "root"


@pytest.fixture
def asz_pass(tmp_path: Path, asz_root: Path) -> Iterator[PassRunner]:
    yield PassRunner(tmp_path, asz_root)


@pytest.fixture
def assert_root_verifies() -> Callable[[Path], None]:
    host = PluginHost().load_entry_points()  # so each installed adapter's own check (asz_verify) runs too

    def check(root: Path) -> None:
        problems = [str(p) for r in verify_root(root, host=host) for p in r.problems]
        assert not problems, "verify found:\n" + "\n".join(problems)
        verdict = run_sdcheck(root)
        if verdict is not None:
            assert verdict["ok"], "sdcheck found:\n" + "\n".join(verdict["problems"])
    return check


@pytest.fixture
def assert_lands_known_parts() -> Callable[[Path], None]:
    def check(root: Path) -> None:
        unknown_only = dialects_landing_only_unknown(root)
        assert not unknown_only, "\n".join(
            f"dialect {dialect} landed {count} record(s) and every part of them is unknown: "
            f"does it say reads_non_json = True for a source that is not JSON, and does its "
            f"convert() put what it reads into parts (data_part, text_part, call_part)?"
            for dialect, count in sorted(unknown_only.items()))
    return check
