"""Shared fixtures, the suite's two lanes, and running it over every CPU.

* **The corpus.** Tests that read ``../shared/corpus`` take the ``corpus`` fixture. On a user's
  clone the corpus is absent and they skip with the reason; ``.ci/run`` sets
  ``ASZ_REQUIRE_CORPUS=1`` where it is present, so there they fail instead of skipping.
* **Two lanes.** ``pytest`` runs the default lane, quick enough to run before every commit. Tests
  marked ``slow`` (the long fault seeds, whole-corpus sweeps) are deselected unless ``--slow`` is
  given; ``.ci/run`` gives it, so CI runs everything.
* **Parallel.** ``pytest`` with no paths runs the suite over the machine's CPUs (pytest-xdist,
  two workers a CPU since many tests wait on fsync, idle workers steal queued tests); naming
  files or directories runs them in this process, as does ``-n 0``. Each process has its own
  temporary directories and asz cache, all in one directory of the run's, in memory
  (``/dev/shm``) where it has room and ``$TMPDIR`` names no other place, removed when the run
  ends (a failed run's files are kept, and the summary says where; ``--basetemp`` puts them
  where you say); a corpus landing that tests only read is built once per run (``landed_once``).
* **Property tests.** Every hypothesis test runs under the ``asz`` profile below. Hypothesis's two
  timing rules, a deadline for each example and the ``too_slow`` health check on generating the
  first ones, measure wall time, which a loaded machine (CI shares two CPUs among many workers)
  stretches without bound, so they are off: these tests assert properties, and how fast anything
  is belongs to ``benchmarks/``. The rules on what is generated (too much data, too much
  filtered out) stay on; a test that has a reason to waive one says so in its own ``settings``.
"""

from __future__ import annotations

import fcntl
import gc
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO

import pytest
from hypothesis import HealthCheck, settings

from asz_core.scenario.scratch import scratch_parent
from tests.compiled import compiled_modules, refusal_if_stale
from tests.helpers import REPO

SHARED = Path(os.environ.get("ASZ_SHARED", REPO.parent / "shared"))

settings.register_profile("asz", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("asz")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow (long fault seeds, corpus sweeps); CI does")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # before xdist reads -n: the whole suite goes parallel; a run the user aimed at files stays in
    # one process, where -s and --pdb behave as usual
    if (config.pluginmanager.hasplugin("xdist") and config.option.numprocesses is None
            and config.args_source is pytest.Config.ArgsSource.TESTPATHS
            and not os.environ.get("PYTEST_XDIST_WORKER")):
        # two workers a CPU: many tests wait on fsync, and a waiting worker leaves its CPU idle
        config.option.numprocesses = 2 * (os.cpu_count() or 1)
        if config.option.dist == "no":
            config.option.dist = "worksteal"
    if config.option.basetemp is None and not os.environ.get("PYTEST_XDIST_WORKER"):
        # the tests' files in the run's own directory, in memory where there is room: the same
        # code runs (every fsync and syncfs made), but on a disk their waits and the deletion
        # of the files afterwards were a fifth of the default lane's time (benchmarks/README.md)
        config.option.basetemp = os.path.join(_run_directory(config, None), "tmp")


def pytest_configure(config: pytest.Config) -> None:
    refusal = refusal_if_stale()
    if refusal:
        pytest.exit(refusal, returncode=pytest.ExitCode.USAGE_ERROR)
    # read as the test modules are imported (helpers.examples), in xdist's workers too
    os.environ["ASZ_TESTS_SLOW"] = "1" if config.getoption("--slow") else ""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    run = _run_directory(config, worker)
    # asz's caches (entry points, validated configurations, quiet passes) of this test process's
    # own: a run never repeats a pass a previous test run recorded, the tests' temporary paths do
    # not end up in the user's cache, and two xdist workers never share one
    if "ASZ_TEST_CACHE" not in os.environ or worker:
        cache = tempfile.mkdtemp(prefix=f"cache-{worker or 'main'}-", dir=run)
        os.environ["ASZ_TEST_CACHE"] = os.environ["XDG_CACHE_HOME"] = cache
    if not worker and os.environ.get("PYTHONDONTWRITEBYTECODE") and "PYTHONPYCACHEPREFIX" not in os.environ:
        # with bytecode off, every python the tests start (the workers, each asz child a kill
        # test runs) compiled asz again: the children compile once into a directory of this run's
        # own and share it, and nothing is written beside the sources, as the user asked
        bytecode = tempfile.mkdtemp(prefix="bytecode-", dir=run)
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = os.environ["ASZ_TEST_BYTECODE"] = bytecode


#: the run's directory, in the process that made it; and its files kept when the run failed
_RUN, _KEPT = pytest.StashKey[str](), pytest.StashKey[str]()
#: what the tests write, in memory when it has this much free (the ``--slow`` lane writes more)
_MEMORY_ROOM = {False: 2 << 30, True: 8 << 30}


def _run_directory(config: pytest.Config, worker: str | None) -> str:
    """The directory of this test run's own caches and files, removed when the run ends,
    however it ends but SIGKILL (a failed run's files are kept: :func:`pytest_terminal_summary`
    says where): made by the run's first process, which its xdist workers share (a worker the
    run's end kills cannot remove its own cache, so the process that made it does)."""
    if os.environ.get("ASZ_TEST_RUN") and (worker or _RUN in config.stash):
        return os.environ["ASZ_TEST_RUN"]
    memory = scratch_parent(room=_MEMORY_ROOM[bool(config.getoption("--slow"))])
    run = os.environ["ASZ_TEST_RUN"] = tempfile.mkdtemp(prefix="asz-test-run-", dir=memory)
    config.stash[_RUN] = run
    config.add_cleanup(lambda: _remove_run(config, run))
    if not worker and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        # a run stopped by SIGTERM (a CI time limit, `timeout`) ends as Ctrl-C ends it:
        # pytest stops its workers and the cleanup above runs; by default it would just die
        signal.signal(signal.SIGTERM, _interrupted)
    return run


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _remove_run(config: pytest.Config, run: str) -> None:
    kept = config.stash.get(_KEPT, None)
    for entry in os.scandir(run):
        if entry.path != kept:
            shutil.rmtree(entry.path, ignore_errors=True)
    if kept is None:
        shutil.rmtree(run, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) and _RUN in config.stash:
        config.stash[_KEPT] = os.path.join(config.stash[_RUN], "tmp")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    kept = config.stash.get(_KEPT, None)
    if kept and os.path.isdir(kept):
        terminalreporter.write_line(f"the failed run's files are kept in {kept} (remove them when done)")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, None, None]:
    # into the run's own bytecode directory, which starts empty, every xdist worker compiled asz
    # and assertion-rewrote every test module at once, each for itself: the first worker to get
    # here collects alone while the others wait, and they then read the bytecode it wrote
    first = _first_to_collect()
    try:
        yield
    finally:
        if first is not None:
            (Path(first.name).parent / "collected").touch()
            first.close()


def pytest_collection_finish(session: pytest.Session) -> None:
    # what collecting made (modules, items, fixtures' definitions) lives until the run ends:
    # kept out of the collector's reach, so that each full collection during the tests walks only
    # what the tests made (benchmarks/README.md, the default lane, round 13)
    gc.collect()
    gc.freeze()


def _first_to_collect() -> IO[str] | None:
    """The held lock if this xdist worker is the first to collect into the run's own bytecode
    directory; None, once the first has collected, or when there is no such directory."""
    bytecode = os.environ.get("ASZ_TEST_BYTECODE")
    if not (bytecode and os.environ.get("PYTEST_XDIST_WORKER") and sys.pycache_prefix == bytecode):
        return None
    lock = open(Path(bytecode) / "collect.lock", "w")  # noqa: SIM115 -- held until collected
    fcntl.flock(lock, fcntl.LOCK_EX)  # waits while the first collects
    if (Path(bytecode) / "collected").exists():
        lock.close()
        return None
    return lock


def pytest_report_header(config: pytest.Config) -> list[str]:
    modules = compiled_modules()
    compiled = sum(1 for module in modules if module.extension)
    return ["slow tests: " + ("included (--slow)" if config.getoption("--slow") else "deselected; --slow runs them"),
            f"per-record path: {compiled} of {len(modules)} modules compiled (hatch_build.py)"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "corpus").is_dir():
        if os.environ.get("ASZ_REQUIRE_CORPUS"):
            pytest.fail(f"ASZ_REQUIRE_CORPUS is set but {SHARED / 'corpus'} is missing")
        pytest.skip(f"the shared corpus is not here ({SHARED / 'corpus'}); set ASZ_SHARED to its parent")
    return SHARED


@pytest.fixture(scope="session")
def corpus(shared: Path) -> Path:
    return shared / "corpus"


@pytest.fixture(scope="session")
def small_corpus(corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """Fifteen sessions of the corpus and their provider bodies, laid out as the corpus is
    (``claude-code/projects/``, ``provider-bodies/``), copied once per run: for a default-lane
    test whose rule a few sessions show, while its sweep of the whole corpus runs with ``--slow``
    (``tests.provider_support.build_small_corpus`` says which)."""
    from tests.provider_support import build_small_corpus

    return landed_once("small-corpus", lambda directory: build_small_corpus(corpus, directory))


#: what the Kiro adapter would otherwise read of the machine running the tests
_KIRO_ENV = ("KIRO_HOME", "KIRO_CLI_DB_PATH", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


@pytest.fixture(scope="session")
def every_adapter_root(corpus: Path, landed_once: Callable[[str, Callable[[Path], None]], Path]) -> Path:
    """Every corpus transcript, every provider body the provider adapter can claim and every Kiro
    session, nothing excluded, each parsed into its round chain: landed once for the whole run and
    only read (the view's and the page's tests share it: a second landing cost seconds of CPU)."""
    from asz_core.assembly.parse import parse_root
    from asz_core.testing import PassRunner

    def land(work: Path) -> None:
        saved = {name: os.environ.get(name) for name in (*_KIRO_ENV, "HOME")}
        os.environ["HOME"] = str(work / "no-home")
        for name in _KIRO_ENV:
            os.environ.pop(name, None)
        try:
            runner = PassRunner(work, work / "root")
            runner.configure(adapters=[
                {"name": "claude-code-local", "source_root": str(corpus / "claude-code" / "projects"), "exclude": []},
                {"name": "claude-code-provider", "source_root": str(corpus / "provider-bodies"), "exclude": []},
                {"name": "kiro", "source_root": str(corpus / "kiro" / ".kiro"),
                 "cli_database": "../.local/share/kiro-cli/data.sqlite3", "exclude": []},
            ])
            summary = runner.run()
            parsed = parse_root(runner.root)  # the page draws the conversations' rounds
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        assert not summary.failed and summary.totals.records
        assert parsed and not [p.message for p in parsed if p.outcome]
    return landed_once("every-adapter-corpus", land) / "root"


@pytest.fixture
def slow(request: pytest.FixtureRequest) -> bool:
    """Whether ``--slow`` was given, for a test that changes its size with the lane; a test that
    only runs there takes ``@pytest.mark.slow`` instead."""
    return bool(request.config.getoption("--slow"))


@pytest.fixture(scope="session")
def landed_once(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[Path], None]], Path]:
    """``landed_once(name, build)``: the directory ``name``, which ``build(directory)`` fills once
    for the whole test run.

    Under xdist every worker asks; the first builds while the others wait on a lock, then all read
    the same directory. Only for what the tests never change: a test that writes copies it first.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's directory, above each worker's own

    def once(name: str, build: Callable[[Path], None]) -> Path:
        directory, done = base / f"once-{name}", base / f"once-{name}.done"
        with open(base / f"once-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                shutil.rmtree(directory, ignore_errors=True)  # a build that failed in another worker
                directory.mkdir()
                build(directory)
                done.touch()
        return directory
    return once
