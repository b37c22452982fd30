"""``export``: one file, self-contained, escaped, with what view.hide names withheld."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK
from asz_core.page.catalogue import Catalogue
from asz_core.page.export import Item, items, to_html, to_markdown
from tests.core.page.page_helpers import HOSTILE, PROMPT_WORD, hostile_session
from tests.helpers import run_cli


def asz(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, "--config", str(config), env={"ASZ_ROOT": ""})


def _config(tmp_path: Path, root: Path, hide: str = "[]") -> Path:
    path = tmp_path / "asz.yaml"
    path.write_text(f"storage:\n  root: {root}\nview:\n  hide: {hide}\nadapters: []\n", "utf-8")
    return path


def test_the_html_escapes_every_text_and_fetches_nothing(tmp_path: Path) -> None:
    session = hostile_session(tmp_path / "root")
    catalogue = Catalogue(tmp_path / "root")
    page = to_html(catalogue.document(session, ()), catalogue.additions(session, ()))
    assert HOSTILE not in page and "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert PROMPT_WORD in page and "&lt;script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "http://" not in page and "https://" not in page and "src=" not in page.replace("src=x", "")


def test_the_conversation_reads_in_order_with_its_tool_result(tmp_path: Path) -> None:
    session = hostile_session(tmp_path / "root")
    catalogue = Catalogue(tmp_path / "root")
    kinds = [i.kind for i in items(catalogue.document(session, ()), catalogue.additions(session, ()))]
    assert kinds == ["prompt", "call", "reply", "tool", "result"]


def test_withheld_records_leave_only_their_size(tmp_path: Path) -> None:
    session = hostile_session(tmp_path / "root")
    catalogue = Catalogue(tmp_path / "root", ["system_prompt"])
    hide = ("system_prompt",)
    text = to_markdown(catalogue.document(session, hide), catalogue.additions(session, hide))
    assert "SYSTEM" not in text and "Withheld: system_prompt" in text
    assert PROMPT_WORD in text


def test_export_writes_an_owner_only_file_with_view_hide_withheld(tmp_path: Path) -> None:
    session = hostile_session(tmp_path / "root")
    config = _config(tmp_path, tmp_path / "root", "[system_prompt]")
    out = tmp_path / "c.html"
    done = asz(config, "export", session, "--format", "html", "-o", str(out))
    assert done.returncode == EXIT_OK, done.stderr
    assert out.stat().st_mode & 0o777 == 0o600
    assert "SYSTEM" not in out.read_text() and PROMPT_WORD in out.read_text()
    again = asz(config, "export", session, "-o", str(out))
    assert again.returncode == EXIT_FAILED and "exists" in again.stderr
    md = asz(config, "export", session, "--format", "md")
    assert md.returncode == EXIT_OK and md.stdout.startswith("# ") and "SYSTEM" not in md.stdout
    missing = asz(config, "export", "no-such-session")
    assert missing.returncode == EXIT_FAILED and "no conversation" in missing.stderr
    bad = asz(config, "export", session, "--hide", "secrets")
    assert bad.returncode == EXIT_CONFIG


def test_usage_prints_json_and_serve_refuses_a_public_address(tmp_path: Path) -> None:
    hostile_session(tmp_path / "root")
    config = _config(tmp_path, tmp_path / "root")
    done = asz(config, "usage", "--by", "session", "--json")
    assert done.returncode == EXIT_OK, done.stderr
    report = json.loads(done.stdout)
    assert report["total"]["in"] == 10 and report["total"]["cache_write"] == 40
    refused = asz(config, "serve", "0.0.0.0:8787")
    assert refused.returncode == EXIT_CONFIG and "--allow-remote" in refused.stderr
    refused = asz(config, "serve", "192.168.1.5:8787")
    assert refused.returncode == EXIT_CONFIG


@pytest.mark.parametrize("addr", ["127.0.0.1:0", "localhost:0", "[::1]:0", ":0"])
def test_a_loopback_address_is_accepted(addr: str) -> None:
    from asz_core.page.server import parse_addr

    host, port = parse_addr(addr)
    assert port == 0 and host in ("127.0.0.1", "localhost", "::1")


def _session_flagged(root: Path, flag: str) -> str:
    for path in sorted(root.glob("*/streams/*/*.sd")):
        if f'"{flag}"'.encode() in path.read_bytes():
            return path.parts[-4]
    raise AssertionError(f"no landed record of the corpus is flagged {flag}")


@pytest.mark.corpus
def test_context_resets_their_summaries_and_errors_are_shown_as_such(catalogue: Catalogue, page_root: Path) -> None:
    def read(session: str) -> list[Item]:
        return list(items(catalogue.document(session, ()), catalogue.additions(session, ())))

    reset = read(_session_flagged(page_root, "context_reset"))
    kinds = [i.kind for i in reset]
    assert "reset" in kinds and kinds[kinds.index("reset") + 1] == "summary"
    assert not any(i.kind == "prompt" and i.text.startswith("This session is being continued") for i in reset)
    errors = [i for i in read(_session_flagged(page_root, "error")) if i.kind == "error"]
    assert errors and all(i.text.strip() for i in errors)


def test_serve_answers_as_a_user_runs_it_and_refuses_an_empty_root(tmp_path: Path) -> None:
    import socket
    import time
    import urllib.request

    empty = asz(_config(tmp_path, tmp_path / "nothing"), "serve", "127.0.0.1:0")
    assert empty.returncode == EXIT_FAILED and "asz-pipeline run" in empty.stderr
    session = hostile_session(tmp_path / "root")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "asz_core.cli.main", "serve", f"127.0.0.1:{port}", "--config",
                               str(_config(tmp_path, tmp_path / "root"))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "ASZ_ROOT": ""})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/conversations", timeout=5) as answer:
                    rows = json.loads(answer.read())
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "serve did not answer"
                time.sleep(0.2)
        assert [r["id"] for r in rows] == [session]
    finally:
        server.terminate()
        server.wait(timeout=10)
