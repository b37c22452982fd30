"""Links planted where the provider adapter reads inside the root: its ``_provider/seen.state``
and ``seen.log``, a session's ``provider_body/`` and the files in it. Nothing outside the root is
read or written through one; the pass says what it refused and loses nothing.

The bodies are a small session of the shared corpus (its transcripts' index written as
claude-code-local would), as in ``test_provider_hostile``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from asz_core.providerbody import ProviderBodies, provider_body_files
from asz_core.providerbody.errors import BodyNotFound
from asz_core.providerbody.manifest import LitSeg, Manifest
from asz_core.root import confined
from asz_core.root.storage import StorageRoot
from asz_core.sessiondata import Header, Part, Record, raw_json_of
from asz_core.sessiondata.writer import record_line
from asz_core.testing import PassRunner
from tests.provider_support import (
    SMALL,
    land_small_session,
    seen_states,
)

SECRET = b"a file of the user's own, outside the root\n"


@pytest.fixture
def small_root(corpus: Path, asz_pass: PassRunner, tmp_path: Path) -> PassRunner:
    """One pass landed the small session's bodies into ``asz_pass.root``."""
    land_small_session(corpus, asz_pass, tmp_path)
    return asz_pass


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    (place / "secret").write_bytes(SECRET)
    return place


def _snapshot(place: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """Every name under ``place`` with its mode, its mtime and its bytes."""
    out = {}
    for path in sorted(place.rglob("*")):
        st = os.lstat(path)
        out[str(path.relative_to(place))] = (st.st_mode, st.st_mtime_ns, path.read_bytes() if path.is_file() else None)
    return out


@pytest.mark.corpus
def test_a_linked_seen_state_is_refused_rebuilt_and_its_target_neither_read_nor_written(
        small_root: PassRunner, outside: Path) -> None:
    runner = small_root
    table = runner.root / "_provider" / "seen.state"
    landed = {n for n, s in seen_states(runner.root).items() if s == "landed"}
    # a table outside that, were it read, would say none of the bodies landed
    (outside / "secret").write_bytes(table.read_bytes().replace(b"state=landed", b"state=waiting"))
    table.unlink()
    table.symlink_to(outside / "secret")
    before = _snapshot(outside)
    runner.reporter.warnings.clear()
    second = runner.run()
    assert not second.failed and second.totals.records == 0  # nothing lands twice
    assert [w for w in runner.reporter.warnings if "seen.state is a link" in w and "rebuilt" in w]
    assert not table.is_symlink()  # the link itself replaced by the table
    assert {n for n, s in seen_states(runner.root).items() if s == "landed"} == landed
    assert _snapshot(outside) == before


@pytest.mark.corpus
def test_a_linked_seen_log_is_refused_not_applied_and_its_target_not_written(
        small_root: PassRunner, outside: Path) -> None:
    runner = small_root
    log = runner.root / "_provider" / "seen.log"
    log.symlink_to(outside / "secret")
    before = _snapshot(outside)
    runner.reporter.warnings.clear()
    second = runner.run()
    assert not second.failed and second.totals.records == 0
    assert [w for w in runner.reporter.warnings if "seen.log is a link" in w and "not applied" in w]
    assert not log.is_symlink()
    assert _snapshot(outside) == before


@pytest.mark.corpus
def test_a_linked_provider_body_directory_is_refused_by_the_pass_naming_it(
        small_root: PassRunner, outside: Path) -> None:
    """``seen.state`` gone, so the pass rebuilds it from the landed bodies: the session whose
    ``provider_body/`` is a link is not read through, and landing into it is an error naming
    the link, every pass; the copy outside is untouched."""
    runner = small_root
    bodies = runner.root / SMALL / "provider_body"
    shutil.copytree(bodies, outside / "provider_body")
    shutil.rmtree(bodies)
    bodies.symlink_to(outside / "provider_body")
    (runner.root / "_provider" / "seen.state").unlink()
    before = _snapshot(outside)
    for _ in range(2):
        summary = runner.run()
        assert summary.totals.errors >= 1 and summary.totals.records == 0
        assert any("provider_body is a link" in str(e) for e in summary.errors)
    assert _snapshot(outside) == before


def _land_body(root: Path, raw: bytes) -> Path:
    digest = hashlib.sha256(raw).hexdigest()
    manifest = Manifest("request", "a.request.json", digest, len(raw), segments=[LitSeg(raw.decode())])
    record = Record(ord=1, off=0, sha=digest[:12], bytes=len(raw), id="a.request",
                    parts=[Part.data_part(raw_json_of(manifest.to_json()))])
    store = StorageRoot(root, pass_started_ns=10**9)
    store.ensure()  # entered, as a pass enters its root: below it, no link is followed
    with store.open_session("s1") as session:
        landing = session.begin("provider_body", Header(kind="provider_body", session="", src="a.request.json",
                                                        dialect="provider_body/1", adapter="test"))
        landing.write(*record_line(record))
        return session.commit(landing).path


def test_the_body_reader_refuses_a_linked_provider_body_directory(tmp_path: Path) -> None:
    root = tmp_path / "root"
    landed = _land_body(root, b'{"a":"hello"}')
    assert ProviderBodies(root / "s1").body(1, 1) == b'{"a":"hello"}'
    elsewhere = tmp_path / "elsewhere"
    shutil.move(landed.parent, elsewhere)
    landed.parent.symlink_to(elsewhere)
    with pytest.raises(confined.LinkRefused, match="provider_body is a link"):
        ProviderBodies(root / "s1").body(1, 1)


def test_the_body_reader_never_takes_a_linked_file_for_a_landed_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    landed = _land_body(root, b'{"a":"hello"}')
    # a file landed in another root, linked in under the name of the session's next file
    other = _land_body(tmp_path / "other", b'{"b":"not this root\'s"}')
    planted = landed.parent / landed.name.replace("-000001.sd", "-000002.sd")
    assert planted != landed
    planted.symlink_to(other)
    assert [seq for seq, _ in provider_body_files(root / "s1")] == [1]
    with pytest.raises(BodyNotFound):
        ProviderBodies(root / "s1").body(2, 1)
