"""The page's JSON API on the corpus, through a real socket: every status code it answers, the
withholding rules, and requests that try to leave the root."""

from __future__ import annotations

import http.client
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core.page.catalogue import MAX_FILES, Catalogue
from asz_core.page.server import CSP, PageServer
from asz_core.view.conversation import DOCUMENT_KEYS, SUMMARY_KEYS
from tests.core.page.conftest import serve

pytestmark = pytest.mark.corpus

#: 13 streams (12 child agents), provider bodies joined to its calls, one system-prompt record.
SUBAGENTS = "8a525d27-37a4-4a12-8523-a3ea345290cf"


def get(server: PageServer, path: str, *, method: str = "GET",
        host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
    try:
        headers = {} if host is None else {"Host": host}
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def get_json(server: PageServer, path: str) -> Any:
    status, _, body = get(server, path)
    assert status == 200, body
    return json.loads(body)


def nodes(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of an ``asz.view`` document's trees."""
    stack = list(reversed([*doc["talks"], *doc["loose"]]))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.get("children", [])))


def _body_ref(server: PageServer) -> tuple[int, int]:
    doc = get_json(server, f"/api/c/{SUBAGENTS}/view")
    refs = [b["ref"] for n in nodes(doc) for b in n.get("provider_bodies", [])]
    assert refs
    return refs[0]["seq"], refs[0]["row"]


def _transcript_seq(server: PageServer) -> int:
    doc = get_json(server, f"/api/c/{SUBAGENTS}/view")
    return next(f["seq"] for f in doc["files"] if f["kind"] == "transcript")


# ---- 200 ---------------------------------------------------------------------------------------


def test_the_list_has_a_row_for_every_session_of_every_adapter_newest_first(page_server: PageServer,
                                                                              page_root: Path) -> None:
    rows = get_json(page_server, "/api/conversations")
    assert {r["id"] for r in rows} == {n for n in os.listdir(page_root) if not n.startswith(("_", "."))}
    assert {"claude-code-local", "kiro"} <= {r["runtime"] for r in rows}
    upstream_keys = ["id", "title", "talks", "steps", "streams", "segments", "rounds", "from", "to", "unresolved",
                     "changes", "lines_added", "lines_removed", "llm_calls", "subagents", "bash_runs"]
    assert all(list(r)[:len(upstream_keys)] == upstream_keys for r in rows)
    times = [r["to"] for r in rows if r["to"] is not None]
    assert times == sorted(times, reverse=True)
    sub = next(r for r in rows if r["id"] == SUBAGENTS)
    assert sub["subagents"] == 12 and sub["llm_calls"] > 12 and sub["tokens"]["out"] > 0


def test_a_search_finds_a_session_by_a_word_of_its_prompt_and_not_others(page_server: PageServer) -> None:
    rows = get_json(page_server, "/api/conversations?q=Foreground+Subagent")
    assert SUBAGENTS in [r["id"] for r in rows]
    assert get_json(page_server, "/api/conversations?q=zzqqxx-not-a-word") == []


def test_the_document_is_upstreams_asz_view_with_clipped_text_and_tool_inputs(page_server: PageServer) -> None:
    doc = get_json(page_server, f"/api/c/{SUBAGENTS}/view")
    assert tuple(doc) == DOCUMENT_KEYS and (doc["format"], doc["version"]) == ("asz.view", "1.0")
    assert tuple(doc["summary"]) == SUMMARY_KEYS and doc["summary"]["state"] == "verified"
    texts = [n["text"] for n in nodes(doc) if "text" in n]
    assert any(len(t.encode()) > 240 for t in texts) and all(len(t.encode()) <= 2000 for t in texts)
    tools = [n for n in nodes(doc) if n["kind"] in ("tool", "agent.call")]
    assert tools and all(json.loads(n["text"]) is not None for n in tools if n["bytes"] == len(n["text"].encode()))
    assert any(e["type"] == "starts" for n in tools for e in n.get("edges", []))  # child agents, where started


def test_the_additions_carry_what_the_document_does_not(page_server: PageServer) -> None:
    doc = get_json(page_server, f"/api/c/{SUBAGENTS}/view")
    extra = get_json(page_server, f"/api/c/{SUBAGENTS}/additions")
    shown = {(n["ref"]["seq"], n["ref"]["row"]) for n in nodes(doc) if "text" in n}
    prompts = {(p["ref"]["seq"], p["ref"]["row"]): p for p in extra["prompts"]}
    assert prompts and not set(prompts) & shown  # a prompt the document shows is not repeated
    assert any("ir:test-sub-fg" in p["text"] for p in prompts.values())
    calls = [n for n in nodes(doc) if n["kind"] == "llm.call"]
    assert all(extra["models"][f"{c['ref']['seq']}:{c['ref']['row']}"].startswith("claude-") for c in calls)


def test_a_record_is_served_as_landed(page_server: PageServer, page_root: Path) -> None:
    seq = _transcript_seq(page_server)
    record = get_json(page_server, f"/api/c/{SUBAGENTS}/record/{seq}/1")
    path = next(p for p in (page_root / SUBAGENTS).rglob(f"*-{seq:06d}.sd"))
    landed = json.loads(path.read_bytes().split(b"\n")[1])
    assert {k: v for k, v in record.items() if k != "dropped"} == {k: v for k, v in landed.items() if k != "dropped"}
    assert record["dropped"] == landed.get("dropped", [])


def test_a_provider_body_rebuilds_and_its_file_is_served_whole(page_server: PageServer, page_root: Path) -> None:
    seq, row = _body_ref(page_server)
    status, _, body = get(page_server, f"/api/c/{SUBAGENTS}/body/{seq}/{row}")
    assert status == 200 and json.loads(body)
    files = get_json(page_server, f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq={seq}&seq=999999")
    assert [f["seq"] for f in files] == [seq]  # a seq with no landed file is left out
    import base64

    landed = next((page_root / SUBAGENTS / "provider_body").glob(f"*-{seq:06d}.sd"))
    assert base64.b64decode(files[0]["data"]) == landed.read_bytes()


def test_status_and_glossary_answer(page_server: PageServer, page_root: Path) -> None:
    status = get_json(page_server, "/api/status")
    assert status["mode"] == "view" and status["conversations"] > 60
    # read-only: the last refresh is when a file last landed, which the page polls to redraw
    newest = max(p.stat().st_mtime_ns for p in page_root.glob("*/streams/*/*.sd")) // 1_000_000
    assert status["last_refresh"] == status["last_landed"] >= newest and status["next_refresh"] is None
    glossary = get_json(page_server, "/api/glossary")
    assert glossary["dialect"] == "claude-code/1" and set(glossary) == {"dialect", "dialects", "terms", "fields"}
    assert {"kiro-cli/1", "kiro-ide/1"} <= set(glossary["dialects"])
    assert glossary["terms"]["call"]["native"] == "message.id"  # the adapter's own declaration
    kiro = get_json(page_server, "/api/glossary?dialect=kiro-cli/1")
    assert kiro["dialect"] == "kiro-cli/1" and kiro["terms"] and "claude-code/1" in kiro["dialects"]
    assert get(page_server, "/api/glossary?dialect=langchain/1")[0] == 404


# ---- 400 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["hide=secrets", "Hide=system_prompt", "hide[]=system_prompt",
                                   "hide%5B0%5D=system_prompt", "HIDE=tool_schemas", "hide=", "a=%ff", "&&=",
                                   "hide=system_prompt,,tool_schemas"])
def test_a_hide_that_cannot_be_read_is_400(page_server: PageServer, query: str) -> None:
    for path in (f"/api/c/{SUBAGENTS}/view", f"/api/c/{SUBAGENTS}/record/1/1",
                 f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq=1", f"/api/c/{SUBAGENTS}/additions",
                 f"/api/c/{SUBAGENTS}/body/1/1"):
        status, _, body = get(page_server, f"{path}{'&' if '?' in path else '?'}{query}")
        assert status == 400, (path, query, body)


def test_a_path_that_is_not_utf8_is_400(page_server: PageServer) -> None:
    status, headers, _ = get(page_server, "/api/c/%ff%fe/view")
    assert status == 400 and headers["content-security-policy"] == CSP


def test_the_files_endpoint_refuses_a_transcript_and_too_many_files(page_server: PageServer) -> None:
    seq = _transcript_seq(page_server)
    assert get(page_server, f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq={seq}")[0] == 400
    many = ",".join(str(n) for n in range(1, MAX_FILES + 2))
    assert get(page_server, f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq={many}")[0] == 400
    assert get(page_server, f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq=x")[0] == 400
    assert get(page_server, f"/api/c/{SUBAGENTS}/files")[0] == 400


# ---- 403 ---------------------------------------------------------------------------------------


def test_a_reader_who_withholds_anything_is_served_no_provider_body(page_server: PageServer) -> None:
    seq, row = _body_ref(page_server)
    for hide in ("system_prompt", "tool_schemas"):
        assert get(page_server, f"/api/c/{SUBAGENTS}/body/{seq}/{row}?hide={hide}")[0] == 403
        assert get(page_server, f"/api/c/{SUBAGENTS}/record/{seq}/{row}?hide={hide}")[0] == 403
        assert get(page_server, f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq={seq}&hide={hide}")[0] == 403
        doc = get_json(page_server, f"/api/c/{SUBAGENTS}/view?hide={hide}")
        assert not any("provider_bodies" in n for n in nodes(doc)) and doc["summary"]["captured_prompts"] == 0


def test_a_request_for_another_host_is_403(page_server: PageServer) -> None:
    status, headers, _ = get(page_server, "/api/status", host="attacker.example:80")
    assert status == 403 and headers["content-security-policy"] == CSP


# ---- 404 and 405 -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    "/api/c/no-such-session/view", "/api/c/no-such-session/additions",
    "/api/c/../view", "/api/c/%2e%2e/view", "/api/c/..%2F..%2Fetc/view",
    "/api/c/_conversations/view", "/api/c/.hidden/view", "/api/c/%00/view",
    f"/api/c/{SUBAGENTS}/record/999999/1", f"/api/c/{SUBAGENTS}/record/1/0", f"/api/c/{SUBAGENTS}/record/1/999999",
    f"/api/c/{SUBAGENTS}/record/-1/1", f"/api/c/{SUBAGENTS}/body/1/1", "/api/nothing", "/static/../asz.yaml",
    "/static/%2e%2e/pyproject.toml", "/c/../../etc/passwd", "/etc/passwd", "/c/", "/static/",
])
def test_a_path_that_names_nothing_is_404_and_leaves_no_root(page_server: PageServer, path: str) -> None:
    status, headers, body = get(page_server, path)
    assert status == 404, (path, body)
    assert headers["content-security-policy"] == CSP


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_nothing_writes(page_server: PageServer, method: str) -> None:
    assert get(page_server, f"/api/c/{SUBAGENTS}/view", method=method)[0] == 405


def test_every_response_carries_the_policy(page_server: PageServer) -> None:
    for path in ("/", f"/c/{SUBAGENTS}", "/static/page.js", "/static/page.css", "/api/status"):
        status, headers, _ = get(page_server, path)
        assert status == 200
        assert headers["content-security-policy"] == CSP
        assert headers["x-content-type-options"] == "nosniff"
        assert "script-src 'self'" in CSP and "'unsafe-inline'" not in CSP


# ---- withholding -------------------------------------------------------------------------------


def test_a_withheld_step_keeps_its_place_and_loses_its_content(page_server: PageServer, flagged: str) -> None:
    doc = get_json(page_server, f"/api/c/{flagged}/view?hide=system_prompt")
    steps = [n for n in nodes(doc) if "system_prompt" in n.get("flags", [])]
    assert steps and all(n["state"] == "omitted" and "text" not in n and n["bytes"] > 0 for n in steps)
    assert doc["summary"]["withheld"]["system_prompt"] == len(steps)
    extra = get_json(page_server, f"/api/c/{flagged}/additions?hide=system_prompt")
    assert not any(p["ref"] == n["ref"] for p in extra["prompts"] for n in steps)
    shown = get_json(page_server, f"/api/c/{flagged}/view")
    steps = [n for n in nodes(shown) if "system_prompt" in n.get("flags", [])]
    assert steps and all("text" in n for n in steps)  # a reader who did not ask sees it


def test_the_record_of_a_withheld_step_keeps_its_envelope(page_server: PageServer, flagged: str) -> None:
    doc = get_json(page_server, f"/api/c/{flagged}/view")
    step = next(n for n in nodes(doc) if "system_prompt" in n.get("flags", []))
    seq, row = step["ref"]["seq"], step["ref"]["row"]
    whole = get_json(page_server, f"/api/c/{flagged}/record/{seq}/{row}")
    withheld = get_json(page_server, f"/api/c/{flagged}/record/{seq}/{row}?hide=system_prompt")
    assert withheld["flags"] == whole["flags"] and withheld["ord"] == whole["ord"]
    assert all(p["state"] == "omitted" and "data" not in p and "text" not in p for p in withheld["parts"])
    assert [p["bytes"] for p in withheld["parts"]] == [p["bytes"] for p in whole["parts"]]


@pytest.fixture(scope="module")
def withholding_server(page_root: Path) -> Iterator[PageServer]:
    """An instance whose ``view.hide`` names the system prompt: withheld from every reader."""
    yield from serve(Catalogue(page_root, ["system_prompt"]))


def test_what_the_instance_withholds_no_request_can_take_back(withholding_server: PageServer, page_server: PageServer,
                                                              page_root: Path, flagged: str) -> None:
    doc = get_json(withholding_server, f"/api/c/{flagged}/view")
    steps = [n for n in nodes(doc) if "system_prompt" in n.get("flags", [])]
    assert steps and all(n["state"] == "omitted" for n in steps)
    assert get(withholding_server, f"/api/c/{SUBAGENTS}/files?session={SUBAGENTS}&seq=1")[0] == 403
    # nor can a search find a session by a word that only a withheld record holds
    word = _word_only_in_withheld_records(page_root)
    assert get_json(withholding_server, f"/api/conversations?q={word}") == []
    # nor does the document, the page's additions or an export carry it
    for path in (f"/api/c/{flagged}/view", f"/api/c/{flagged}/additions", f"/api/c/{flagged}/view?hide=tool_schemas"):
        assert word not in get(withholding_server, path)[2].decode().lower()
    assert word in get(page_server, f"/api/c/{flagged}/view")[2].decode().lower()  # what the others see
    assert get_json(withholding_server, "/api/status")["withheld"] == ["system_prompt"]


def _word_only_in_withheld_records(root: Path) -> str:
    withheld, elsewhere = set(), set()
    for path in root.rglob("streams/*/*.sd"):
        for line in path.read_bytes().split(b"\n")[1:]:
            if not line.startswith(b'{"ord"'):
                continue
            words = set(line.decode("utf-8", "replace").lower().replace("\\n", " ").split())
            (withheld if b'"system_prompt"' in line else elsewhere).update(words)
    only = sorted(w for w in withheld - elsewhere if w.isalpha() and len(w) > 6)
    assert only, "the corpus has a word only a system prompt record holds"
    return only[0]


# ---- nothing through a link --------------------------------------------------------------------


def test_a_session_or_file_reached_through_a_link_is_not_served(page_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(page_root / SUBAGENTS, root / SUBAGENTS, symlinks=True)
    shutil.copytree(page_root / "_conversations" / SUBAGENTS, root / "_conversations" / SUBAGENTS)
    os.symlink(page_root / "839f0678-4dbc-4aa5-a37c-10f12406d23f", root / "linked-session")
    main = root / SUBAGENTS / "streams" / "main"
    first = sorted(main.glob("*.sd"))[0]
    secret = tmp_path / "secret.sd"
    shutil.copy(first, secret)
    seq = int(first.stem.rsplit("-", 1)[1])
    first.unlink()
    os.symlink(secret, first)
    for server in serve(Catalogue(root)):
        rows = get_json(server, "/api/conversations")
        assert [r["id"] for r in rows] == [SUBAGENTS]
        assert get(server, "/api/c/linked-session/view")[0] == 404
        assert get(server, f"/api/c/{SUBAGENTS}/record/{seq}/1")[0] == 404
        # the root's own listing never returns a link (asz_core/root/confined.py), so the session
        # is served without the linked file: nothing of it, nor of what it points at, is read
        status, _, body = get(server, f"/api/c/{SUBAGENTS}/view")
        assert status == 200 and secret.name.encode() not in body
        doc = json.loads(body)
        assert seq not in [f["seq"] for f in doc["files"]] and doc["summary"]["state"] != "verified", \
            doc["summary"]
