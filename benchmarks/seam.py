"""What a record costs at the seam between a dialect and the collector, on the real progress lines.

    python benchmarks/seam.py [--repeat N]

The shared transcripts' progress lines (the commonest: a plain line with nothing past its ids)
are parsed once; then each is made into its landed line two ways, in turn, round by round:

* **record()**: what ``claude-code/1`` makes of it, its landed mapping built by the typed
  constructors (:func:`~asz_core.sessiondata.record`, :func:`~asz_core.sessiondata.data_part`),
  its envelope set, :func:`~asz_core.sessiondata.encode_fields`;
* **dict literal**: the same typed check of the line and the same data slice, then the dict the
  line lands as, built directly in landed order by the dialect itself, one ``orjson.dumps``:
  what a dialect writing its mapping by hand would cost.

Both must give the same bytes for every line (checked first, so the second cannot drift from
the dialect unnoticed). Figures are CPU µs per line, the least of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpus, jsonl_files, table

from asz_adapters.claude_code_local.dialect import _READ_FURTHER, ClaudeCodeDialect
from asz_adapters.claude_code_local.flags import subtype_flags
from asz_adapters.claude_code_local.shape import RECORD
from asz_adapters.claude_code_local.source_facts import TRANSCRIPT, SourceFacts
from asz_core.collect.lines import LineReader, TooLong
from asz_core.collect.source import SourceLine, line_sha
from asz_core.sessiondata import FROM_AGENT, FROM_EXTERNAL, FROM_RUNTIME
from asz_core.sessiondata.writer import encode_fields

_FROM = {"assistant": FROM_AGENT, "user": FROM_EXTERNAL}
#: a parsed line and its ``sha``
_Line = tuple[SourceLine, str]


def _constructed(dialect: ClaudeCodeDialect, line: SourceLine, sha: str) -> bytes:
    record = dialect.convert(line)
    record["ord"], record["off"], record["sha"], record["bytes"] = line.ord, line.off, sha, len(line.raw)
    return encode_fields(record)


def _landed(line: SourceLine, sha: str) -> bytes:
    """The progress line's record as the dict it lands as (the dialect's ``_ids_only`` rules)."""
    value = line.value
    if not (type(value) is dict and RECORD.plain(value) and value.keys().isdisjoint(_READ_FURTHER)):
        raise ValueError(f"line {line.ord} is not a plain line with nothing past its ids")
    get = value.get
    kind = get("type")
    fields: dict[str, Any] = {"ord": line.ord, "off": line.off, "sha": sha, "bytes": len(line.raw)}
    for key, field in (("id", "uuid"), ("parent", "parentUuid"), ("run", "promptId"),
                       ("continues", "logicalParentUuid")):
        value = get(field)
        if value:
            fields[key] = value
    label = get("aiTitle") or get("description") or get("workflowName")
    if label:
        fields["label"] = label
    started_by = get("parentAgentId")
    if started_by:
        fields["started_by"] = started_by
    fields["from"] = _FROM.get(kind, FROM_RUNTIME)
    when = get("timestamp")
    if when:
        fields["time"] = when
    flags = subtype_flags(kind, get("subtype"))
    if flags:
        fields["flags"] = flags
    fields["parts"] = [{"k": "data", "data": line.data_at(), "state": "available", "bytes": len(line.raw)}]
    return orjson.dumps(fields, default=orjson.Fragment)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    lines: list[_Line] = []
    for path in jsonl_files(corpus() / "claude-code" / "projects"):
        with open(path, "rb") as f:
            for n, (raw, off) in enumerate(LineReader(f.fileno(), 0).lines(), start=1):
                if isinstance(raw, TooLong):
                    continue
                line = SourceLine(raw, n, off)
                if isinstance(line.value, dict) and line.value.get("type") == "progress":
                    lines.append((line, line_sha(raw)))
    dialect = ClaudeCodeDialect(SourceFacts(TRANSCRIPT, "s", "main"))  # filed under no run: no batch
    for line, sha in lines:
        if _constructed(dialect, line, sha) != _landed(line, sha):
            sys.exit(f"line {line.ord}: the landed mapping does not give the dialect's bytes")
    ways: dict[str, Callable[[SourceLine, str], bytes]] = {
        "record() and data_part(), encode_fields": lambda line, sha: _constructed(dialect, line, sha),
        "dict literal in the dialect, one orjson.dumps": _landed,
    }
    least = dict.fromkeys(ways, float("inf"))
    for _ in range(args.repeat):
        for name, way in ways.items():
            started = time.process_time()
            for line, sha in lines:
                way(line, sha)
            least[name] = min(least[name], (time.process_time() - started) / len(lines) * 1e6)
    print(f"{len(lines)} progress lines; CPU µs per line, the least of {args.repeat} rounds")
    print(table([(name, f"{us:.2f}") for name, us in least.items()], ("way", "µs per line")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
