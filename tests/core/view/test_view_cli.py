"""``asz-pipeline view`` as a user runs it (in-process, ``run_cli_bytes``; its help in a
subprocess), on the parsed corpus root: the list, a session's document (JSON, YAML, and for a
person), one body's bytes, ``view.hide`` and ``--hide``, and every error by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from asz_core.view import Session, list_sessions
from tests.core.view.view_helpers import calls_of
from tests.helpers import run_cli_bytes

pytestmark = pytest.mark.corpus


def asz(config: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return run_cli_bytes("view", "--config", str(config), *args, env={"ASZ_ROOT": ""})


def _config(tmp_path: Path, root: Path, hide: str = "[]") -> Path:
    path = tmp_path / "asz.yaml"
    path.write_text(f"storage:\n  root: {root}\nview:\n  hide: {hide}\nadapters: []\n", "utf-8")
    return path


def _joined(root: Path) -> tuple[str, dict[str, object], dict[str, int]]:
    """A session, one of its calls with both bodies listed, and that call's request ref."""
    for session in sorted(p.name for p in root.iterdir() if (p / "provider_body").is_dir()):
        for call in calls_of(Session(root, session).document()).values():
            if len(call.get("provider_bodies", [])) == 2:
                return session, call, call["provider_bodies"][0]["ref"]
    raise AssertionError("no call with both bodies joined")


def test_the_list_names_every_session_with_its_head_rounds_counts(corpus_root: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, corpus_root)
    done = asz(config, "--json")
    assert done.returncode == EXIT_OK, done.stderr
    rows = json.loads(done.stdout)["sessions"]
    on_disk = sorted(p.name for p in corpus_root.iterdir() if p.is_dir() and not p.name.startswith("_"))
    assert [r["id"] for r in rows] == on_disk and rows == list_sessions(corpus_root)
    for row in rows[:5]:  # what the head round says is what the document says
        summary = Session(corpus_root, row["id"]).document()["summary"]
        assert {k: row[k] for k in ("title", "rounds", "talks", "steps", "streams", "from", "to")} == \
            {k: summary[k] for k in ("title", "rounds", "talks", "steps", "streams", "from", "to")}
    text = asz(config)
    assert text.returncode == EXIT_OK
    assert text.stdout.decode().endswith(f"view: root={corpus_root} sessions={len(rows)}\n")
    assert all(r["id"].encode() in text.stdout for r in rows)


def test_a_session_prints_its_document_and_a_body_its_exact_bytes(corpus: Path, corpus_root: Path,
                                                                  tmp_path: Path) -> None:
    config = _config(tmp_path, corpus_root)
    session, call, ref = _joined(corpus_root)
    done = asz(config, session, "--json")
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout) == Session(corpus_root, session).document()
    as_yaml = asz(config, session, "--yaml")
    assert as_yaml.returncode == EXIT_OK and yaml.safe_load(as_yaml.stdout) == json.loads(done.stdout)
    pretty = asz(config, session)
    assert pretty.returncode == EXIT_OK and f"conversation {session}".encode() in pretty.stdout
    assert b"verified" in pretty.stdout and b"talk/" in pretty.stdout
    body = asz(config, session, "--body", f"{ref['seq']}:{ref['row']}")
    assert body.returncode == EXIT_OK, body.stderr
    src = Session(corpus_root, session).entry(ref).manifest.src
    assert body.stdout == (corpus / "provider-bodies" / src).read_bytes()
    assert call["kind"] == "llm.call"


def test_view_hide_from_the_configuration_and_the_flag_that_overrides_it(corpus_root: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, corpus_root, hide="[system_prompt]")
    session, _, ref = _joined(corpus_root)
    hidden = json.loads(asz(config, session, "--json").stdout)
    assert list(hidden["summary"]["withheld"]) == ["provider_bodies", "system_prompt"]
    assert not [c for c in calls_of(hidden).values() if "provider_bodies" in c]
    withheld = asz(config, session, "--body", f"{ref['seq']}:{ref['row']}")
    assert withheld.returncode == EXIT_FAILED and b"withholds system_prompt" in withheld.stderr
    assert withheld.stdout == b""
    shown = asz(config, session, "--json", "--hide", "none")
    assert json.loads(shown.stdout) == Session(corpus_root, session).document()
    assert asz(config, session, "--hide", "none", "--body", f"{ref['seq']}:{ref['row']}").returncode == EXIT_OK
    both = json.loads(asz(config, session, "--json", "--hide", "tool_schemas,system_prompt").stdout)
    assert list(both["summary"]["withheld"]) == ["provider_bodies", "system_prompt", "tool_schemas"]


def test_each_error_says_what_and_exits_non_zero(corpus_root: Path, tmp_path: Path) -> None:
    config = _config(tmp_path, corpus_root)
    session, _, _ = _joined(corpus_root)
    transcript = min(int(p.name.rsplit("-", 1)[1][:-3]) for p in (corpus_root / session).glob("streams/main/*.sd"))
    cases = [
        ((["00000000-0000-4000-8000-000000000000"]), EXIT_FAILED, b"no session"),
        ((["../etc"]), EXIT_FAILED, b"cannot name a session"),
        ((["_provider"]), EXIT_FAILED, b"cannot name a session"),
        (([session, "--body", f"{transcript}:1"]), EXIT_FAILED, b"is not a provider body"),
        (([session, "--body", "999:1"]), EXIT_FAILED, b"is not a provider body"),
        (([session, "--body", "two"]), EXIT_CONFIG, b"is not SEQ:ROW"),  # a bad command line
        (([session, "--body", "abc"]), EXIT_CONFIG, b"a body is named SEQ:ROW"),
        (([session, "--body", "2:1:0"]), EXIT_CONFIG, b"names a part"),
        (([session, "--hide", "secrets"]), EXIT_CONFIG, b"'secrets' is not one of system_prompt, tool_schemas"),
        ((["--body", "2:1"]), EXIT_CONFIG, b"--body needs a SESSION"),
    ]
    for args, code, message in cases:
        done = asz(config, *args)
        assert (done.returncode, message in done.stderr) == (code, True), (args, done.stderr)
        assert done.stdout == b"", args


def test_the_help_lists_every_flag_hide_takes() -> None:
    from asz_core.view import HIDEABLE

    done = subprocess.run([sys.executable, "-m", "asz_core.cli.main", "view", "--help"],
                          capture_output=True, text=True, check=True)
    assert f"({', '.join(HIDEABLE)};" in " ".join(done.stdout.split())
