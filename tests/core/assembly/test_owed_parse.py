"""The parse that ends ``run`` looks only at the sessions the passes' log says landed since the
last parse (``asz_core.root.owed``); a kill anywhere between a landing and that parse leaves the
session owed, and a parse run alone still looks at every session."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from asz_core.assembly import rounds
from asz_core.assembly.chain import Chain
from asz_core.assembly.parse import parse_root, parse_session
from asz_core.cli.main import main
from asz_core.root import durable, writeonce
from asz_core.root.owed import OWED_NAME, PassOwed, read_owed, settle_owed
from asz_core.root.storage import StorageRoot
from asz_core.testing import PassRunner
from tests.helpers import count_syncs, jsonl_config, run_cli_forked


def _sources(src: Path, sessions: int = 3, lines: int = 4) -> None:
    src.mkdir(exist_ok=True)
    for s in range(sessions):
        rows = [b'{"n":%d,"time":"2026-01-01T00:00:0%dZ","text":"line %d"}\n' % (i, i, i) for i in range(lines)]
        (src / f"s{s}.jsonl").write_bytes(b"".join(rows))


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    _sources(tmp_path / "src")
    runner = PassRunner(tmp_path, tmp_path / "root")
    return runner.configure(**jsonl_config(tmp_path / "src")), tmp_path / "root"


def _run(config: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    # each run a process of its own: what one leaves in memory never reaches the next
    return run_cli_forked("run", "--config", str(config), env={**os.environ, **env})


def _up_to_date(root: Path) -> dict[str, bool]:
    """Each session: whether its chain reaches its landed files (a parse would write nothing)."""
    out = {}
    for session in StorageRoot(root).sessions():
        head = Chain(root, session).head_name()
        out[session] = head is not None and not parse_session(root, session).rounds
    return out


def _chains(root: Path) -> set[str]:
    top = root / "_conversations"
    return {p.name for p in top.iterdir()} if top.is_dir() else set()


def test_a_run_after_a_pass_that_landed_nothing_parses_no_session(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert main(["run", "--config", str(config)]) == 0
    assert _chains(root) == {"s0", "s1", "s2"}
    assert (root / OWED_NAME).read_bytes() == b"asz-parse-owed 1\n"
    shutil.rmtree(root / "_conversations" / "s1")  # a parse that looked at s1 would build it again
    assert main(["run", "--config", str(config)]) == 0
    assert _chains(root) == {"s0", "s2"}
    assert main(["parse", "--config", str(config)]) == 0  # a parse alone looks at every session
    assert _chains(root) == {"s0", "s1", "s2"}


def test_a_run_parses_the_sessions_its_pass_landed_and_no_other(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert main(["run", "--config", str(config)]) == 0
    shutil.rmtree(root / "_conversations" / "s1")
    with (tmp_path / "src" / "s0.jsonl").open("ab") as f:
        f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"more"}\n')
    assert main(["run", "--config", str(config)]) == 0
    assert _chains(root) == {"s0", "s2"}
    assert _up_to_date(root)["s0"]
    assert (root / OWED_NAME).read_bytes() == b"asz-parse-owed 1\n"


def test_a_root_without_the_log_or_with_a_damaged_one_is_parsed_whole(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert main(["run", "--config", str(config)]) == 0
    for damage in (None, b"asz-parse-owed 1\nowed ../../etc\n", b"asz-parse-owed 1\nstart\n",
                   b"asz-parse-owed 1\nstart\nstart\nowed s0\nend\n", b"something\n"):
        shutil.rmtree(root / "_conversations" / "s2")
        if damage is None:
            (root / OWED_NAME).unlink()
        else:
            (root / OWED_NAME).write_bytes(damage)
        assert main(["run", "--config", str(config)]) == 0
        assert _chains(root) == {"s0", "s1", "s2"}, damage
        assert (root / OWED_NAME).read_bytes() == b"asz-parse-owed 1\n"


def test_a_run_killed_between_its_landings_and_its_parse_leaves_them_owed(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert _run(config).returncode == 0
    for s in range(3):
        with (tmp_path / "src" / f"s{s}.jsonl").open("ab") as f:
            f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"more"}\n')
    # killed after every landing of the pass, before it says which sessions landed
    assert _run(config, ASZ_FAULT="kill:owed-end:1").returncode == -9
    assert read_owed(root).sessions is None  # an open ``start``: every session owed
    assert not any(_up_to_date(root).values())
    assert _run(config).returncode == 0  # lands nothing more, parses every session
    assert all(_up_to_date(root).values())


def test_a_parse_killed_before_it_settles_the_log_is_done_again_next_run(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert _run(config).returncode == 0
    with (tmp_path / "src" / "s1.jsonl").open("ab") as f:
        f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"more"}\n')
    assert _run(config, ASZ_FAULT="kill:owed-replace:1").returncode == -9
    assert read_owed(root).sessions == frozenset({"s1"})
    assert _run(config).returncode == 0
    assert all(_up_to_date(root).values())
    assert read_owed(root).sessions == frozenset()


def test_a_run_killed_at_any_landing_step_is_parsed_by_a_later_run(tmp_path: Path, slow: bool) -> None:
    config, root = _setup(tmp_path)
    assert _run(config).returncode == 0
    steps = [("owed-start", 1), ("install", 2)]  # the log opened, a file installed: two processes each
    if slow:
        steps += [("temp-fsync", 2), ("dir-fsync", 2), ("state-rename", 2)]
    for step, nth in steps:
        for s in range(3):
            with (tmp_path / "src" / f"s{s}.jsonl").open("ab") as f:
                f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"%s"}\n' % step.encode())
        assert _run(config, ASZ_FAULT=f"kill:{step}:{nth}").returncode == -9, step
        assert _run(config).returncode == 0, step
        assert all(_up_to_date(root).values()), step


def test_a_run_killed_at_any_step_of_its_parse_leaves_the_sessions_owed_and_the_next_parses_them(
        tmp_path: Path, slow: bool) -> None:
    config, root = _setup(tmp_path)
    assert _run(config).returncode == 0
    # the parse stages every session's round, then one syncfs (round-fsync once a round before
    # it), the renames (round-install), one syncfs for the names (round-names), the states;
    # the default lane kills the first, --slow each (two processes a step)
    steps = [("round-fsync", 1)]
    if slow:
        steps += [("round-install", 2), ("round-names", 1)]
    for step, nth in steps:
        for s in range(3):
            with (tmp_path / "src" / f"s{s}.jsonl").open("ab") as f:
                f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"%s"}\n' % step.encode())
        assert _run(config, ASZ_FAULT=f"kill:{step}:{nth}").returncode == -9, step
        assert read_owed(root).sessions == frozenset({"s0", "s1", "s2"}), step
        assert not all(_up_to_date(root).values()) or step == "round-names", step
        assert _run(config).returncode == 0, step
        assert all(_up_to_date(root).values()), step
        assert read_owed(root).sessions == frozenset(), step
        assert [p for p in (root / "_conversations").rglob(".tmp-*")] == [], step


@pytest.mark.skipif(not durable.can_sync_filesystem(), reason="syncfs is Linux's")
def test_a_parse_of_many_sessions_installs_their_rounds_with_two_syncfs_a_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _sources(tmp_path / "src", sessions=5)
    root = tmp_path / "root"
    runner = PassRunner(tmp_path, root)
    runner.configure(**jsonl_config(tmp_path / "src"))
    assert runner.run().fields()["landed"] == 5  # landed, not parsed
    counts = count_syncs(monkeypatch, writeonce)
    monkeypatch.setattr(rounds, "GROUP_SESSIONS", 2)
    parsed = parse_root(root)
    assert [len(p.rounds) for p in parsed] == [1] * 5 and not any(p.outcome for p in parsed)
    assert counts == {"syncfs": 6, "fsync": 0}  # groups of 2, 2 and 1; a chain's state is a cache
    assert all(_up_to_date(root).values())


def test_lines_a_pass_appends_while_a_parse_runs_are_kept_when_it_settles(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    (root / OWED_NAME).write_bytes(b"asz-parse-owed 1\nstart\nowed a\nend\n")
    owed = read_owed(root)
    assert owed.sessions == frozenset({"a"})
    later = PassOwed(root, dry_run=False)  # a pass that ran while "a" was being parsed
    later.before_landing()
    later.landed("b")
    later.finish()
    assert settle_owed(root, owed, ["c"])  # "c" could not be parsed: still owed
    assert read_owed(root).sessions == frozenset({"b", "c"})


def test_a_log_replaced_by_another_parse_meanwhile_is_left_to_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    (root / OWED_NAME).write_bytes(b"asz-parse-owed 1\nstart\nowed a\nend\n")
    owed = read_owed(root)
    (root / OWED_NAME).write_bytes(b"asz-parse-owed 1\nstart\nowed b\nend\n")
    assert not settle_owed(root, owed, [])
    assert read_owed(root).sessions == frozenset({"b"})


def test_a_dry_run_and_a_pass_that_lands_nothing_leave_the_log_untouched(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert main(["run", "--config", str(config)]) == 0
    settled = (root / OWED_NAME).read_bytes()
    with (tmp_path / "src" / "s0.jsonl").open("ab") as f:
        f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"more"}\n')
    assert main(["run", "--dry-run", "--config", str(config)]) == 0
    assert (root / OWED_NAME).read_bytes() == settled
    summary = PassRunner(tmp_path, root).run()  # a pass alone, no parse after it
    assert summary.fields()["landed"] == 1
    assert read_owed(root).sessions == frozenset({"s0"})
    owed = (root / OWED_NAME).read_bytes()
    assert PassRunner(tmp_path, root).run().fields()["landed"] == 0
    assert (root / OWED_NAME).read_bytes() == owed  # still owed, and nothing appended


def test_a_log_that_cannot_be_written_before_the_first_landing_lands_nothing(tmp_path: Path) -> None:
    config, root = _setup(tmp_path)
    assert _run(config).returncode == 0
    with (tmp_path / "src" / "s2.jsonl").open("ab") as f:
        f.write(b'{"n":9,"time":"2026-01-01T00:00:09Z","text":"more"}\n')
    refused = _run(config, ASZ_FAULT="enospc:owed-start:1")
    assert refused.returncode == 1 and b".parse-owed" in refused.stdout + refused.stderr
    assert len(list((root / "s2" / "streams" / "main").glob("*.sd"))) == 1  # nothing more landed
    assert _run(config).returncode == 0
    assert len(list((root / "s2" / "streams" / "main").glob("*.sd"))) == 2
    assert all(_up_to_date(root).values())
