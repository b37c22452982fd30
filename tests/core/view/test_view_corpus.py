"""The view on the real corpus: every transcript and every body the provider adapter can claim,
landed by both Claude Code adapters beside the Kiro captures and parsed, then each session's
document checked against the shape ``formats/asz-view.md`` gives (``spec_shape``) and its joins
against an oracle read from the **source** files (transcripts and body files), which neither the
view nor the parse reads.

The oracle pins each call's bodies with evidence the view does not use: its response is the file
named after the ``requestId`` its transcript line records; its request is the one request file of
the session that names the previous call's ``requestId`` (none for a stream's first call), carries
a tool list and a prompt id, is for the call's model, and names the call's prompt where the
transcript records one. Against it:

* every body the view lists is the oracle's, and rebuilds (``Session.body``) to its file's bytes;
* every call whose response landed has it joined;
* every call whose request and response both landed has its request joined, unless the rule the
  spec states refuses it for a reason the sources confirm: ``no_prompt`` (the transcript records
  no ``promptId`` up to the call, so its prompt is unknown) or ``shared_ids`` (another landed
  request, or another call, carries the same previous request and prompt).

What the corpus gives (``pytest -s`` prints the table per session). The spec's capture joined
13 of 13; this corpus's bodies are synthesized (``corpus/provider-bodies/SOURCES.md``), and two of
its choices leave requests unjoined by the rule, each by the reason named:

* ``no_prompt``: most transcripts predate ``promptId`` (2.1.76); their requests carry invented
  prompt ids no transcript records (235 calls: 4d5611e5 151, 8a525d27 41 of its subagents' calls,
  c64cc478 14, 491e126e 12, cb88ae13 6, ...). A real 2.1.260 capture comes with transcripts that
  record them.
* ``shared_ids``: the synthesized request that names the session carries the first call's prompt
  id and no previous request, so the first call of 38 sessions has two candidate requests. The
  spec's 13 of 13 says the real one does not collide.

On the corpus: 356 calls in the 56 sessions with bodies; 355 with a response landed, all 355
joined (the compaction stream's one call has no response); 82 requests joined, none wrong; the
other 273 calls whose request and response both landed are 235 ``no_prompt`` and 38 ``shared_ids``.
Fully joined sessions include 839f0678 (6 of 6), 469f7b3b and 8ba5a9cc (2 of 2), 06f604ec,
635339f8 and 8dcc178f (1 of 1).
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from asz_core.assembly.chain import Chain
from asz_core.root.storage import landed_files
from asz_core.sessiondata import open_file
from asz_core.view import Session, list_sessions
from tests.core.view.spec_shape import TOP, shape_problems, spec_top_keys
from tests.core.view.view_helpers import calls_of, walk

pytestmark = pytest.mark.corpus

_PROMPT = re.compile(r"cc_prompt_id=([^;\s]+);")
_PREV = re.compile(r"cc_prev_req=([^;\s]+);")


# ---- the oracle, from the source files ---------------------------------------------------------


@dataclass
class SourceRequest:
    name: str
    prompt: str | None
    previous: str | None
    model: str | None
    tools: bool


@dataclass
class SourceCall:
    stream: str
    message: str
    request_id: str | None
    model: str | None
    prompt: str | None             #: the promptId the transcript records up to the call
    previous: str | None           #: the previous call's requestId (None: first call of the file)
    first: bool


@dataclass
class Oracle:
    requests: dict[str, list[SourceRequest]] = field(default_factory=dict)  # session → requests
    responses: dict[str, str] = field(default_factory=dict)                 # file name → message id

    def response_for(self, call: SourceCall) -> str | None:
        """The file named after the call's requestId; without one (Claude Code then names the file
        with a random UUID), the one response file carrying the call's message id."""
        if call.request_id is not None:
            return f"{call.request_id}.response.json"
        (name,) = [n for n, message in self.responses.items() if message == call.message]
        return name

    def request_for(self, session: str, call: SourceCall) -> list[SourceRequest]:
        return [r for r in self.requests.get(session, [])
                if r.previous == call.previous and r.model == call.model and r.tools and r.prompt is not None
                and (call.prompt is None or r.prompt == call.prompt)]


def _read_bodies(bodies: Path) -> Oracle:
    oracle = Oracle()
    for path in sorted(bodies.glob("*.json")):
        value = json.loads(path.read_bytes())
        if path.name.endswith(".response.json"):
            oracle.responses[path.name] = value["id"]
            continue
        session = json.loads(value["metadata"]["user_id"])["session_id"]
        system = value["system"][0]["text"]
        prompt, previous = _PROMPT.search(system), _PREV.search(system)
        oracle.requests.setdefault(session, []).append(SourceRequest(
            path.name, prompt.group(1) if prompt else None, previous.group(1) if previous else None,
            value.get("model"), "tools" in value))
    return oracle


def _source_calls(path: Path, stream: str) -> Iterator[SourceCall]:
    """The calls of one transcript file in line order, ``<synthetic>`` ones left out."""
    prompt: str | None = None
    previous: str | None = None
    seen: set[str] = set()
    first = True
    with path.open("rb") as fh:
        for raw in fh:
            line = json.loads(raw)
            if line.get("promptId"):
                prompt = line["promptId"]
            message = line.get("message") if line.get("type") == "assistant" else None
            if not isinstance(message, dict) or not message.get("id") or message.get("model") == "<synthetic>":
                continue
            if message["id"] in seen:
                continue
            seen.add(message["id"])
            yield SourceCall(stream, message["id"], line.get("requestId"), message.get("model"), prompt, previous,
                             first)
            previous, first = line.get("requestId"), False


def _session_calls(session_dir: Path, projects: Path) -> list[SourceCall]:
    sources: dict[str, str] = {}  # a stream's transcript can land as several files of one source
    for path in sorted(session_dir.glob("streams/*/transcript-*.sd")):
        with open_file(path) as landed:
            sources.setdefault(landed.header["stream"], landed.header["src"])
    return [c for stream, src in sources.items() for c in _source_calls(projects / src, stream)]


# ---- the view against it -------------------------------------------------------------------------


@dataclass
class Row:
    session: str
    calls: int = 0
    responses_landed: int = 0
    responses_joined: int = 0
    requests_joined: int = 0
    missed: Counter[str] = field(default_factory=Counter)


@pytest.fixture(scope="module")
def oracle(corpus: Path) -> Oracle:
    return _read_bodies(corpus / "provider-bodies")


@pytest.fixture(scope="module")
def documents(corpus_root: Path) -> dict[str, dict[str, Any]]:
    """Every session's document (nothing hidden), in list order, built once: each sweep below
    checks its own rule over the same documents, which the tests only read."""
    return {session_id: Session(corpus_root, session_id).document() for session_id in _sessions(corpus_root)}


def _listed(session: Session, doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Call id → role → the source file name of the body listed."""
    return {call_id: {b["role"]: session.entry(b["ref"]).manifest.src for b in call.get("provider_bodies", [])}
            for call_id, call in calls_of(doc).items()}


def _compare(corpus: Path, root: Path, oracle: Oracle, session_id: str, doc: dict[str, Any]) -> Row:
    session = Session(root, session_id)
    listed = _listed(session, doc)
    landed = {e.manifest.src for e in session.provider_bodies.entries()}
    calls = _session_calls(root / session_id, corpus / "claude-code" / "projects")
    keys = Counter((c.previous, c.prompt) for c in calls)
    row = Row(session_id, calls=len(calls))
    for call in calls:
        bodies = listed[call.message]
        response = oracle.response_for(call)
        if response in landed:
            row.responses_landed += 1
            assert bodies.get("response") == response, (session_id, call)
            row.responses_joined += 1
        else:
            assert "response" not in bodies, (session_id, call)
        pinned = oracle.request_for(session_id, call)
        if "request" in bodies:
            assert [r.name for r in pinned] == [bodies["request"]], (session_id, call, pinned)
            row.requests_joined += 1
            continue
        if response not in landed or not [r for r in pinned if r.name in landed]:
            continue
        if call.prompt is None:  # the oracle may not pin it either: sibling subagents' first calls
            row.missed["no_prompt"] += 1
            continue
        (truth,) = pinned
        twins = [r for r in oracle.requests[session_id]
                 if (r.previous, r.prompt) == (truth.previous, truth.prompt) and r.name in landed]
        if len(twins) > 1 or keys[(call.previous, call.prompt)] > 1:
            row.missed["shared_ids"] += 1
        else:
            row.missed["unexplained"] += 1
    return row


@pytest.mark.slow  # every session's document, a whole-corpus sweep
def test_every_joined_body_is_the_right_one_and_every_miss_is_one_the_rule_states(
        corpus: Path, corpus_root: Path, oracle: Oracle, documents: dict[str, dict[str, Any]]) -> None:
    rows = [_compare(corpus, corpus_root, oracle, s, documents[s]) for s in sorted(oracle.requests)
            if (corpus_root / s / "provider_body").is_dir()]
    print(f"\n{'session':10} {'calls':>5} {'resp landed':>11} {'resp joined':>11} {'req joined':>10}  missed")
    for row in rows:
        print(f"{row.session[:8]:10} {row.calls:5} {row.responses_landed:11} {row.responses_joined:11} "
              f"{row.requests_joined:10}  {dict(row.missed) or ''}")
    missed = sum((r.missed for r in rows), Counter())
    print("total", sum(r.calls for r in rows), sum(r.responses_joined for r in rows),
          sum(r.requests_joined for r in rows), dict(missed))
    assert missed["unexplained"] == 0
    assert sum(r.responses_joined for r in rows) == sum(r.responses_landed for r in rows) > 0
    assert sum(r.requests_joined for r in rows) > 0
    # Sessions whose transcripts record prompts and whose first call has one candidate join fully.
    assert [r.session for r in rows if r.calls and r.requests_joined == r.calls]


def _sessions(root: Path) -> list[str]:
    return [row["id"] for row in list_sessions(root)]


def test_every_ref_rebuilds_to_a_body_whose_role_and_ids_match_its_call(
        corpus: Path, corpus_root: Path, documents: dict[str, dict[str, Any]]) -> None:
    bodies = corpus / "provider-bodies"
    checked = Counter[str]()
    for session_id, doc in documents.items():
        session = Session(corpus_root, session_id)
        for call_id, call in calls_of(doc).items():
            roles = [b["role"] for b in call.get("provider_bodies", [])]
            assert roles in ([], ["response"], ["request"], ["request", "response"])
            for listed in call.get("provider_bodies", []):
                body = session.body(listed["ref"])
                entry = session.entry(listed["ref"])
                assert entry.manifest.role == listed["role"]
                assert body == (bodies / entry.manifest.src).read_bytes()
                value = json.loads(body)
                if listed["role"] == "response":
                    assert value["id"] == call_id
                else:
                    found = _PROMPT.search(value["system"][0]["text"])
                    assert found is not None and found.group(1) == entry.manifest.run
                checked[listed["role"]] += 1
    assert checked["request"] and checked["response"]


def test_every_document_of_the_corpus_has_the_shape_the_spec_gives(
        corpus_root: Path, shared: Path, documents: dict[str, dict[str, Any]]) -> None:
    """Claude Code and Kiro alike: every key of formats/asz-view.md, in its order, and every
    talk, run and step of the fold in a tree, with the session's landed files and rounds."""
    spec = shared / "spec" / "upstream" / "formats" / "asz-view.md"
    assert spec_top_keys(spec) == list(TOP)  # the transcription still reads the page
    checked = set()
    for session_id, doc in documents.items():
        assert shape_problems(doc) == [], session_id
        assert doc["summary"]["state"] == "verified" and doc["conversation"] == session_id
        fold = Chain(corpus_root, session_id).fold()
        in_trees = {n["id"] for n in walk(doc)}
        assert {id for id, n in fold.nodes.items()
                if n["kind"] not in ("session", "stream", "epoch", "segment")} <= in_trees, session_id
        assert {f["file"] for f in doc["files"] if f["format"] == "sd"} == {
            p.relative_to(corpus_root).as_posix() for _, p in landed_files(corpus_root / session_id)}
        checked.add(session_id)
    assert len(_kiro_sessions(corpus_root) & checked) == 4 and len(checked) > 60


def _kiro_sessions(root: Path) -> set[str]:
    out = set()
    for path in root.glob("*/streams/*/*.sd"):
        with open_file(path) as landed:
            if str(landed.header.get("adapter", "")).startswith("kiro"):
                out.add(path.relative_to(root).parts[0])
    return out


@pytest.mark.slow  # every session's document, a whole-corpus sweep
def test_hiding_the_system_prompt_lists_no_body_and_keeps_every_node(
        corpus_root: Path, documents: dict[str, dict[str, Any]]) -> None:
    listed = withheld = 0
    for session_id, shown in documents.items():
        hidden = Session(corpus_root, session_id, hide=["system_prompt"]).document()
        listed += sum(1 for n in walk(shown) if "provider_bodies" in n)
        assert not [n for n in walk(hidden) if "provider_bodies" in n]
        assert hidden["summary"]["captured_prompts"] == 0
        assert hidden["summary"]["withheld"]["provider_bodies"] == shown["summary"]["provider_bodies"]
        flagged = [n for n in walk(hidden) if "system_prompt" in n.get("flags", [])]
        assert all(n["state"] == "omitted" and "text" not in n for n in flagged)
        assert hidden["summary"]["withheld"]["system_prompt"] >= len({json.dumps(n["ref"]) for n in flagged})
        withheld += len(flagged)
        assert [n["id"] for n in walk(hidden)] == [n["id"] for n in walk(shown)]
        kept = [n for n in walk(hidden) if "tool_schemas" in n.get("flags", []) and
                "system_prompt" not in n["flags"]]
        assert all(n.get("state") != "omitted" for n in kept)  # only what is named is withheld
    # The Claude Code corpus holds no prompt snapshot, the one attachment upstream's rule flags
    # system_prompt, so only its bodies are withheld; one Kiro capture's injection carries the flag.
    assert listed > 0 and withheld == 1


def test_documents_name_only_root_relative_paths(corpus_root: Path, documents: dict[str, dict[str, Any]]) -> None:
    for session_id, doc in documents.items():
        assert all((corpus_root / f["file"]).is_file() for f in doc["files"])
        assert all(f["file"].startswith((f"{session_id}/", f"_conversations/{session_id}/")) for f in doc["files"])
        assert str(corpus_root) not in json.dumps(doc)


@pytest.mark.slow  # every session's document, twice, over a copy of the corpus root
def test_a_root_copied_elsewhere_gives_the_same_documents_and_the_view_writes_nothing(
        corpus_root: Path, tmp_path: Path) -> None:
    before = sorted((p.relative_to(corpus_root), p.stat().st_mtime_ns) for p in corpus_root.rglob("*"))
    copy = tmp_path / "elsewhere" / "root"
    shutil.copytree(corpus_root, copy)
    for session_id in _sessions(corpus_root):
        assert Session(copy, session_id).document() == Session(corpus_root, session_id).document()
    assert list_sessions(copy) == list_sessions(corpus_root)
    assert sorted((p.relative_to(corpus_root), p.stat().st_mtime_ns) for p in corpus_root.rglob("*")) == before


def test_a_child_stream_names_the_step_that_opened_it(documents: dict[str, dict[str, Any]]) -> None:
    """A subagent stream's parent is the stream of the tool call that started it, and that call is
    a step of the document with its result joined."""
    children = 0
    for doc in documents.values():
        steps = {n["id"]: n for n in walk(doc)}
        for stream in doc["streams"]:
            for origin in stream["opened_by"]:
                starter = steps[origin["step"]]
                assert starter["stream"] == origin["stream"] == stream["parent"]
                assert starter["kind"] in ("tool", "agent.call") and "result_state" in starter
                children += 1
    assert children > 0
