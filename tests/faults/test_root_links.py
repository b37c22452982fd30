"""Links planted in the storage root: a pass never reads, writes, truncates, deletes or chmods
anything outside the root through one, and a root another user could plant them in is refused.

Each case lands a session through the example ``jsonl`` adapter, plants a link (or a hard link)
at one of the names a pass opens, with a file or directory outside the root as its target, runs
more passes, and checks that the target is exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from asz_core.pipeline import PassRefused
from asz_core.root import confined
from asz_core.root.index import CALL, SessionIndex, session_ids
from asz_core.root.storage import StorageRoot
from asz_core.root.upstream_index import drop_upstream_index
from asz_core.testing import PassRunner
from asz_core.verify import verify_root
from tests.helpers import jsonl_config

SESSION = "s1"
SECRET = b"root's own file, mode 0600\n"


def _line(n: int) -> bytes:
    return b'{"n":%d,"time":"2026-01-01T00:00:%02dZ"}\n' % (n, n % 60)


@pytest.fixture
def landed(asz_pass: PassRunner, tmp_path: Path) -> Path:
    """A root with session ``s1`` landed once from ``src/s1.jsonl``; returns the source."""
    source = tmp_path / "src"
    source.mkdir()
    log = source / f"{SESSION}.jsonl"
    log.write_bytes(b"".join(_line(i) for i in range(1, 6)))
    asz_pass.configure(**jsonl_config(source))
    assert not asz_pass.run().failed
    return log


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the root holding a private file and a file named like a temporary."""
    place = tmp_path / "outside"
    place.mkdir(mode=0o755)
    os.chmod(place, 0o755)
    (place / "secret").write_bytes(SECRET)
    os.chmod(place / "secret", 0o600)
    (place / ".tmp-0123456789ab-secret").write_bytes(SECRET)
    return place


def _snapshot(place: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every name under ``place`` with its mode and bytes."""
    out: dict[str, tuple[int, bytes | None]] = {".": (os.lstat(place).st_mode, None)}
    for path in sorted(place.rglob("*")):
        st = os.lstat(path)
        out[str(path.relative_to(place))] = (st.st_mode, path.read_bytes() if path.is_file() else None)
    return out


def _grow(log: Path, more: int = 3) -> None:
    start = log.read_bytes().count(b"\n") + 1
    with log.open("ab") as fh:
        fh.write(b"".join(_line(i) for i in range(start, start + more)))


def _replace_with_link(name: Path, target: Path) -> None:
    if name.is_dir() and not name.is_symlink():
        shutil.rmtree(name)
    elif name.exists() or name.is_symlink():
        name.unlink()
    name.symlink_to(target)


def test_a_linked_root_lock_is_replaced_and_its_target_is_not_truncated(
        asz_pass: PassRunner, landed: Path, outside: Path) -> None:
    before = _snapshot(outside)
    _replace_with_link(asz_pass.root / ".lock", outside / "secret")
    _grow(landed)
    assert asz_pass.run().totals.records == 3
    assert _snapshot(outside) == before
    assert not (asz_pass.root / ".lock").is_symlink()


@pytest.mark.parametrize("kind", ["symlink", "hard link"])
def test_session_state_as_a_link_never_writes_its_target(
        asz_pass: PassRunner, landed: Path, outside: Path, kind: str) -> None:
    before = _snapshot(outside)
    state = asz_pass.root / SESSION / "session.state"
    state.unlink()
    if kind == "symlink":
        state.symlink_to(outside / "secret")
    else:
        os.link(outside / "secret", state)
    _grow(landed)
    summary = asz_pass.run()
    assert summary.totals.records == 3 and not summary.failed
    assert _snapshot(outside) == before
    assert b"next_seq" in state.read_bytes() and os.lstat(state).st_nlink == 1


@pytest.mark.parametrize("name", ["streams", "streams/main", "."])
def test_a_linked_directory_in_the_root_is_refused_and_nothing_is_written_through_it(
        asz_pass: PassRunner, landed: Path, outside: Path, name: str) -> None:
    """``streams/``, a stream directory or the session directory itself as a link to a directory
    outside: the session is an error naming the link, every pass; the target is untouched (no
    file landed there, no ``.tmp-*`` swept there, its mode not changed)."""
    where = (asz_pass.root / SESSION / name).resolve()
    shutil.copytree(where, outside / "copy", symlinks=True)
    before = _snapshot(outside)
    _replace_with_link(where, outside / "copy")
    _grow(landed)
    for _ in range(2):
        summary = asz_pass.run()
        assert summary.totals.errors == 1 and summary.totals.records == 0
        assert "link" in str(summary.errors[0])
    assert _snapshot(outside) == before


def test_a_linked_cursor_is_rebuilt_and_its_target_is_not_written(
        asz_pass: PassRunner, landed: Path, outside: Path) -> None:
    before = _snapshot(outside)
    cursor = asz_pass.root / SESSION / "streams" / "main" / "transcript.cursor"
    _replace_with_link(cursor, outside / "secret")
    _grow(landed)
    summary = asz_pass.run()
    assert summary.totals.records == 3 and not summary.failed  # nothing landed twice
    assert _snapshot(outside) == before
    assert not cursor.is_symlink()


def test_a_linked_temporary_file_is_unlinked_not_its_target(
        asz_pass: PassRunner, landed: Path, outside: Path) -> None:
    before = _snapshot(outside)
    for directory in (asz_pass.root, asz_pass.root / SESSION / "streams" / "main"):
        (directory / ".tmp-ffffffffffff-x").symlink_to(outside / ".tmp-0123456789ab-secret")
    _grow(landed)
    assert asz_pass.run().totals.records == 3
    assert _snapshot(outside) == before
    assert not list(asz_pass.root.rglob(".tmp-*"))


def test_index_and_provider_directories_as_links_are_refused(
        asz_pass: PassRunner, landed: Path, outside: Path) -> None:
    """``index/`` (the ids index, upstream's index) and ``_provider/`` (the provider's table and
    its lock) as links to a directory outside."""
    from asz_adapters.claude_code_provider.seen import SeenTable

    session_dir = asz_pass.root / SESSION
    target = outside / "index"
    target.mkdir()
    (target / "index.state").write_bytes(SECRET)
    (session_dir / "index").symlink_to(target)
    (asz_pass.root / "_provider").symlink_to(outside)
    before = _snapshot(outside)
    with pytest.raises(confined.LinkRefused):
        SessionIndex(session_dir).extend([("call", "msg_1")], 1, begun=True)
    assert session_ids(session_dir)[CALL] == set()  # read from the landed files (no call in them) ...
    assert SessionIndex(session_dir).load() is None  # ... and no index begun through the link
    with pytest.raises(confined.LinkRefused):
        drop_upstream_index(session_dir)
    root = StorageRoot(asz_pass.root)
    with pytest.raises(confined.LinkRefused):
        SeenTable.load(root)
    assert _snapshot(outside) == before


def test_verify_names_links_where_the_root_has_directories(
        asz_pass: PassRunner, landed: Path, outside: Path) -> None:
    shutil.copytree(asz_pass.root / SESSION / "streams", outside / "streams")
    _replace_with_link(asz_pass.root / SESSION / "streams", outside / "streams")
    (asz_pass.root / "s2").symlink_to(outside)
    problems = [p for r in verify_root(asz_pass.root) for p in r.problems]
    assert sorted((p.session, p.kind) for p in problems) == [(SESSION, "link"), ("s2", "link")]


def test_the_walk_without_openat2_refuses_the_same_links(
        asz_pass: PassRunner, landed: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confined, "_openat2_fn", None)
    shutil.copytree(asz_pass.root / SESSION / "streams", outside / "copy")
    before = _snapshot(outside)
    _replace_with_link(asz_pass.root / SESSION / "streams", outside / "copy")
    _grow(landed)
    summary = asz_pass.run()
    assert summary.totals.errors == 1 and _snapshot(outside) == before


def test_a_root_writable_by_others_is_refused_with_what_to_do(asz_pass: PassRunner, landed: Path) -> None:
    os.chmod(asz_pass.root, 0o777)
    with pytest.raises(PassRefused, match=r"writable by its group or by others \(mode 0777\).*chmod 700"):
        asz_pass.run()
    os.chmod(asz_pass.root, 0o755)  # readable by others is not a way in
    assert not asz_pass.run().failed


# --- another user: the tests run as root, and drop to ``nobody`` in a forked child ---

NOBODY = 65534


def _as_nobody(action: str, *paths: Path) -> None:
    """Run ``action`` (``plant``: links at the root's names; ``make``: a root of its own) as an
    unprivileged user in a forked child."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            root, victim = paths
            if action == "make":
                root.mkdir(mode=0o700)
            (root / ".lock").symlink_to(victim)
            (root / SESSION).mkdir(mode=0o777)
            (root / SESSION / "session.state").symlink_to(victim)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the unprivileged child could not plant its links"


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user can reach (the tests' own temporary directory is root's alone)."""
    if os.geteuid() != 0:
        pytest.skip("planting links as another user needs to switch user, which needs root")
    place = Path(tempfile.mkdtemp(prefix="asz-shared-"))
    os.chmod(place, 0o755)
    yield place
    shutil.rmtree(place)


def test_links_an_unprivileged_user_planted_in_a_shared_root_change_nothing(
        asz_pass: PassRunner, shared_dir: Path, tmp_path: Path) -> None:
    victim = shared_dir / "victim"
    victim.write_bytes(SECRET)
    os.chmod(victim, 0o600)
    root = shared_dir / "root"
    root.mkdir()
    os.chmod(root, 0o777)  # a root made shared
    _as_nobody("plant", root, victim)
    source = tmp_path / "src"
    source.mkdir()
    (source / f"{SESSION}.jsonl").write_bytes(_line(1))
    asz_pass.root = root
    asz_pass.configure(**jsonl_config(source))
    with pytest.raises(PassRefused, match="writable by its group or by others"):
        asz_pass.run()
    assert victim.read_bytes() == SECRET and os.stat(victim).st_mode & 0o777 == 0o600


def test_a_root_another_user_owns_is_refused(asz_pass: PassRunner, shared_dir: Path, tmp_path: Path) -> None:
    victim = shared_dir / "victim"
    victim.write_bytes(SECRET)
    os.chmod(victim, 0o600)
    root = shared_dir / "theirs"
    os.chmod(shared_dir, 0o777)
    _as_nobody("make", root, victim)
    source = tmp_path / "src"
    source.mkdir()
    (source / f"{SESSION}.jsonl").write_bytes(_line(1))
    asz_pass.root = root
    asz_pass.configure(**jsonl_config(source))
    with pytest.raises(PassRefused, match=rf"owned by uid {NOBODY}, not by you"):
        asz_pass.run()
    assert victim.read_bytes() == SECRET


def test_a_root_reached_through_a_link_is_used_as_its_owner_chose(asz_pass: PassRunner, tmp_path: Path) -> None:
    """Only what is below the root is confined: its own path may pass through links (a home
    on another disk), and the root itself may be one."""
    source = tmp_path / "src"
    source.mkdir()
    log = source / f"{SESSION}.jsonl"
    log.write_bytes(_line(1))
    real = tmp_path / "disk"
    real.mkdir()
    (tmp_path / "home").symlink_to(real)
    asz_pass.root = tmp_path / "home" / "asz"
    asz_pass.configure(**jsonl_config(source))
    assert asz_pass.run().totals.records == 1
    (tmp_path / "alias").symlink_to(real / "asz")
    asz_pass.root = tmp_path / "alias"
    asz_pass.configure(**jsonl_config(source))
    _grow(log)
    summary = asz_pass.run()
    assert summary.totals.records == 3 and not summary.failed
    assert not [p for r in verify_root(asz_pass.root) for p in r.problems]
