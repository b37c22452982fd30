"""Small helpers the project's own tests share (adapter authors use ``asz_core.testing``)."""

from __future__ import annotations

import contextlib
import io
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
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


def run_cli_forked(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None,
                   timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """``asz-pipeline ARGS`` in a process of its own forked from this one, with ``env`` as its
    whole environment (as ``subprocess.run`` takes it): its exit status (minus the signal that
    killed it) and the bytes it printed, read, as ``subprocess.run`` reads them, until every
    process holding its output has ended (the workers of a pass killed outlive it a moment).

    For a pass a test kills (``ASZ_FAULT``, read again in the child): only a process shows a
    kill, but a fresh interpreter's start and asz's imports were most of such a child's CPU.
    Whatever the child changes in its memory dies with it; the parent sees only the files."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child never returns
        os.close(out_read)
        os.close(err_read)
        _run_forked_child(list(args), env, cwd, out_write, err_write)
    os.close(out_write)
    os.close(err_write)
    printed = {out_read: bytearray(), err_read: bytearray()}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as open_ends:
        for fd in printed:
            open_ends.register(fd, selectors.EVENT_READ)
        while open_ends.get_map():
            ready = open_ends.select(max(deadline - time.monotonic(), 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                for fd in printed:
                    os.close(fd)
                raise subprocess.TimeoutExpired(["asz-pipeline", *args], timeout)
            for key, _ in ready:
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    printed[key.fd] += chunk
                else:
                    open_ends.unregister(key.fd)
                    os.close(key.fd)
    _, status = os.waitpid(pid, 0)
    return subprocess.CompletedProcess(["asz-pipeline", *args], os.waitstatus_to_exitcode(status),
                                       bytes(printed[out_read]), bytes(printed[err_read]))


def _run_forked_child(args: list[str], env: Mapping[str, str] | None, cwd: Path | None,
                      out: int, err: int) -> None:
    """The forked child of :func:`run_cli_forked`: the console script's ``main`` as the
    process's own command line, then the process ends without running the parent's exit code."""
    code = 1
    try:
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 -- flushed at exit
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 -- flushed at exit
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        from asz_core.cli.main import main
        from asz_core.root import faults

        # read at import, as a fresh process would read it, and no step counted yet
        faults._spec, faults._counts = os.environ.get("ASZ_FAULT", ""), {}
        sys.argv = ["asz-pipeline", *args]
        code = main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 -- printed as an uncaught exception would be
        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def killed_in_fork(fault: str, call: Callable[[], object]) -> int:
    """``call()`` in a process forked from this one with ``ASZ_FAULT`` set to ``fault``: its
    exit status (minus the signal that killed it), for a step of asz's a test kills outside a
    command (a Python start and imports were most of what such a child cost)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child never returns
        code = 1
        try:
            from asz_core.root import faults

            os.environ["ASZ_FAULT"] = fault
            faults._spec, faults._counts = fault, {}
            call()
            code = 0
        except BaseException:  # noqa: BLE001 -- printed as an uncaught exception would be
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


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
