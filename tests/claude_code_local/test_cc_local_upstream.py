"""Landed records against upstream's writer, checked independently: the bytes of every record line.

Each record ``claude-code-local`` lands is set beside the line upstream's writer would land for the
same source bytes, as :mod:`tests.claude_code_upstream` restates upstream's rules (sharing no code
with the adapter or the writer). Three kinds of sessions: the shared corpus; sessions built from
upstream's scenarios and this project's own, which the dialect was never written against; and
lines generated from real line shapes with fields changed, removed, mistyped and filled with odd
text. At least 99 % must be byte-identical on each, and every record that differs must fall in a
difference ``README.md`` lists, so a new one fails here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest
from cc_helpers import ADAPTER

from asz_core.cli.main import main
from asz_core.testing import PassRunner
from tests import claude_code_upstream as upstream

pytestmark = pytest.mark.corpus

README = Path(__file__).resolve().parents[2] / "asz_adapters" / "claude_code_local" / "README.md"


# ---- the differences README.md lists, each recognised by its source line ---------------------------


def _not_utf8(payload: bytes) -> bool:
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _depth(node: upstream.Node) -> int:
    inner = [v for _, v in node.pairs] + node.items
    return (1 + max((_depth(v) for v in inner), default=0)) if node.kind in ("object", "array") else 0


def _too_deep(payload: bytes) -> bool:
    try:
        return _depth(upstream.parse(payload)) > 256
    except (upstream.NotJSON, RecursionError):
        return False


def _spaced(payload: bytes) -> bool:
    """White space between tokens somewhere inside the line (a kept piece's size then differs)."""
    try:
        upstream.parse(payload)
    except upstream.NotJSON:
        return False
    return upstream.compact(payload.strip(b" \t\r\n")) != payload.strip(b" \t\r\n")


#: README difference (its words' start) → how a source line shows it
KNOWN = {
    "A line holding bytes that are not UTF-8": lambda payload, kind: _not_utf8(payload),
    "A line nesting more than 256": lambda payload, kind: _too_deep(payload),
    "The size of a piece of source JSON kept as data": lambda payload, kind: _spaced(payload),
    "A workflow manifest that is not JSON": lambda payload, kind: kind == "workflow_manifest",
}


def test_every_known_difference_is_listed_in_the_readme() -> None:
    text = README.read_text()
    for start in KNOWN:
        assert start in text, start


# ---- landed against upstream ---------------------------------------------------------------------


@dataclass
class Tally:
    records: int = 0
    same: int = 0
    by_known: Counter[str] = field(default_factory=Counter)
    unexplained: list[tuple[str, int, bytes, bytes]] = field(default_factory=list)
    diffs_checked: int = 0

    @property
    def share(self) -> float:
        return self.same / self.records if self.records else 0.0

    def add(self, other: Tally) -> None:
        self.records += other.records
        self.same += other.same
        self.by_known.update(other.by_known)
        self.unexplained += other.unexplained
        self.diffs_checked += other.diffs_checked


def _apply(before: str, hunks: list[dict[str, object]]) -> str:
    """``before`` with unified hunks applied (lines without their newline), or AssertionError."""
    old = before.split("\n")
    out: list[str] = []
    at = 0
    for hunk in hunks:
        start = max(int(str(hunk["old_start"])) - 1, 0)
        assert start >= at
        out += old[at:start]
        at = start
        for line in hunk["lines"]:  # type: ignore[attr-defined]
            sign, text = line[:1], line[1:]
            if sign in (" ", "-"):
                assert old[at] == text
                at += 1
            if sign in (" ", "+"):
                out.append(text)
    return "\n".join(out + old[at:])


def _landed_diff(line: bytes, needs: upstream.NeedsDiffer) -> upstream.FileDiff:
    """The landed line's computed diff, once its hunks are checked to turn before into after."""
    change = orjson.loads(line)["parts"][-1]["data"]["changes"][0]
    hunks = change.get("hunks", [])
    if change["diff"] == "available":
        assert _apply(needs.before.decode(), hunks) == needs.after.decode()
        assert change["additions"] == sum(x.startswith("+") for h in hunks for x in h["lines"])
        assert change["deletions"] == sum(x.startswith("-") for h in hunks for x in h["lines"])
    encoded = [upstream.obj([(k, json.dumps(h[k]).encode()) for k in ("old_start", "old_lines", "new_start",
                                                                     "new_lines")] +
                            [("lines", b"[" + b",".join(upstream.go_string(x, True) for x in h["lines"]) + b"]")])
               for h in hunks]
    return upstream.FileDiff(change["diff"], change["additions"], change["deletions"], encoded)


def compare_root(root: Path, projects: Path) -> Tally:
    """Every record line landed under ``root`` against upstream's for the same source bytes."""
    tally = Tally()
    for path in sorted(root.rglob("*.sd")):
        lines = path.read_bytes().split(b"\n")
        header = orjson.loads(lines[0])
        assert lines[-1] == b"" and lines[-2].startswith(b'{"t":"end"')
        source = upstream.Source(header["kind"], header["session"], header.get("stream", "main"),
                                 header.get("batch", ""))
        data = (projects / header["src"]).read_bytes()
        one_document = header["kind"] in ("agent_meta", "workflow_manifest", "workflow_script")
        source_lines = data.split(b"\n")
        starts = [0]
        for piece in source_lines:
            starts.append(starts[-1] + len(piece) + 1)
        for line in lines[1:-2]:
            head = orjson.loads(line[:line.index(b',"sha"')] + b"}")
            ord_, off = head["ord"], head["off"]
            if one_document:
                payload = data.rstrip(b"\r\n")
            else:
                payload = source_lines[ord_ - 1]
                assert off == starts[ord_ - 1]
            try:
                expected = upstream.convert(payload, ord_, off, source)
            except upstream.NeedsDiffer as needs:
                expected = upstream.convert(payload, ord_, off, source, _landed_diff(line, needs))
                tally.diffs_checked += 1
            tally.records += 1
            if expected == line:
                tally.same += 1
                continue
            known = [name for name, shows in KNOWN.items() if shows(payload, header["kind"])]
            if known:
                tally.by_known[known[0]] += 1
            else:
                tally.unexplained.append((header["src"], ord_, line, expected))
    return tally


def _land(projects: Path, work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    runner = PassRunner(work, work / "root")
    runner.configure(adapters=[{"name": ADAPTER, "source_root": str(projects), "exclude": []}])
    summary = runner.run()
    assert not summary.failed, summary.as_dict()
    return runner.root


def _explain(tally: Tally) -> str:
    lines = [f"{tally.same}/{tally.records} identical; known {dict(tally.by_known)}"]
    for src, ord_, landed, expected in tally.unexplained[:5]:
        at = next((i for i, (a, b) in enumerate(zip(landed, expected, strict=False)) if a != b),
                  min(len(landed), len(expected)))
        lines.append(f"{src}:{ord_}\n  landed:   {landed[max(0, at - 120):at + 120]!r}\n"
                     f"  upstream: {expected[max(0, at - 120):at + 120]!r}")
    return "\n".join(lines)


def test_the_corpus_lands_what_upstream_lands(cc_projects: Path, tmp_path: Path) -> None:
    tally = compare_root(_land(cc_projects, tmp_path), cc_projects)
    assert tally.records == 10_131
    assert not tally.unexplained, _explain(tally)
    assert tally.share >= 0.99, _explain(tally)
    print(f"corpus: {_explain(tally)}")


# ---- sessions never seen: upstream's scenarios and this project's own --------------------------------


def _scenarios(shared: Path) -> list[Path]:
    theirs = sorted(p for p in (shared / "corpus" / "upstream" / "tests" / "scenarios").glob("*.yaml")
                    if not p.name.endswith(".expect.yaml"))
    ours = sorted(p for p in (Path(__file__).resolve().parents[1] / "scenarios").glob("*.yaml")
                  if not p.name.endswith(".expect.yaml"))
    return theirs + ours


def test_sessions_built_from_scenarios_land_what_upstream_lands(shared: Path, tmp_path: Path) -> None:
    total = Tally()
    built = 0
    for scenario in _scenarios(shared):
        out = tmp_path / scenario.stem
        code = main(["scenario", "build", str(scenario), "--format", "claude-code", "--out", str(out),
                     "--at", "2026-01-01T00:00:00Z"])
        assert code == 0, scenario
        projects = out / "_source"
        total.add(compare_root(_land(projects, tmp_path / f"{scenario.stem}-pass"), projects))
        built += 1
    assert built >= 10
    assert not total.unexplained, _explain(total)
    assert total.share >= 0.99, _explain(total)
    print(f"scenarios: {_explain(total)}")
