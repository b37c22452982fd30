"""Small helpers the project's own tests share (adapter authors use ``asz_core.testing``)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest

from asz_core.root.storage import landed_files
from asz_core.sessiondata import Record, open_file

#: the repository's top directory
REPO = Path(__file__).resolve().parent.parent


def records_of(root: Path, session: str) -> list[tuple[int, Record]]:
    """``(seq, record)`` for every landed record of a session, in seq order."""
    out = []
    for seq, path in sorted(landed_files(root / session)):
        out.extend((seq, r) for r in open_file(path))
    return out


def temp_files(root: Path) -> list[Path]:
    return [Path(d) / f for d, _, files in os.walk(root) for f in files if f.startswith(".tmp-")]


def jsonl_config(source: Path, **collector: object) -> dict[str, object]:
    """An adapters section with just the example ``jsonl`` adapter over ``source``."""
    entry: dict[str, object] = {"name": "jsonl", "source_root": str(source), "exclude": []}
    if collector:
        entry["collector"] = collector
    return {"adapters": [entry]}


def examples(n: int) -> int:
    """A property's ``max_examples``: ``n`` with ``--slow`` (CI), a fifth of it in the default lane."""
    return n if os.environ.get("ASZ_TESTS_SLOW") else max(n // 5, 5)


def count_syncs(monkeypatch: pytest.MonkeyPatch, syncing: ModuleType) -> dict[str, int]:
    """Count the ``fsync`` calls of this process and the ``syncfs`` calls ``syncing`` (a module
    that imported ``sync_filesystem``) makes, from now until the test ends; each still syncs."""
    counts = {"fsync": 0, "syncfs": 0}
    real_fsync, real_syncfs = os.fsync, syncing.sync_filesystem

    def fsync(fd: int) -> None:
        counts["fsync"] += 1
        real_fsync(fd)

    def syncfs(fd: int) -> None:
        counts["syncfs"] += 1
        real_syncfs(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(syncing, "sync_filesystem", syncfs)
    return counts


def run_cli(*args: str, cwd: Path | None = None,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``asz-pipeline ARGS`` run in this process as a child would run it from ``cwd`` with ``env``
    over this process's environment: its exit status and what it printed, as ``subprocess.run``
    returns them.

    A child costs a Python start and asz's imports, most of such a test's CPU; what a test of a
    command's status and output checks is the same in-process. The console script itself,
    signals, kills, a closed pipe and what a process imports keep their real subprocess tests."""
    done = run_cli_bytes(*args, cwd=cwd, env=env)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def run_cli_bytes(*args: str, cwd: Path | None = None,
                  env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``run_cli`` with the bytes printed, for a command that writes bytes (a body) to its
    standard output's buffer."""
    from asz_core.cli.app import App
    from asz_core.cli.main import main

    out, err = io.BytesIO(), io.BytesIO()
    out_text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    err_text = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    with _in(cwd, env), contextlib.redirect_stdout(out_text), contextlib.redirect_stderr(err_text):
        code = main(list(args), app=App(out=out_text, err=err_text))
    out_text.flush()
    err_text.flush()
    return subprocess.CompletedProcess(["asz-pipeline", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _in(cwd: Path | None, env: Mapping[str, str] | None) -> Iterator[None]:
    """This process in ``cwd`` with ``env`` set over its environment, both put back after."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    try:
        if cwd is not None:
            os.chdir(cwd)
        os.environ.update(env or {})
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
