"""``push_follows_the_wire``: the root pushed to a loopback receiver, over gRPC, then over HTTP.

On a copy of the finished root, with the ordinary ``push`` command and the configuration the
build wrote plus an ``export.otlp`` block naming the receiver (one file per request):

1. The receiver refuses the first request: that push records nothing as sent.
2. The next push sends every landed file once, one per request, each record saying what the
   file is: its bytes as the body, its SHA-256, its lines, its path, kind, session, stream, the
   range of its records' times, and the runtime that produced it as the service (``Claude
   Code`` for a ``claude-code`` build, ``Mock Agent`` for an ``sd`` build's own files); every
   kind ``push.kinds`` names is among them. Then each round of the chain, after every landed
   file, in round order, as ``sf`` with what a list of conversations shows off its header.
3. A third push sends nothing.
4. Every body written back to its path gives the same files, and ``verify`` finds in them what
   it finds in the root, but for end gaps (a cursor stays in the root and never travels).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from asz_core.assembly.chain import Chain
from asz_core.scenario.properties import Property, register
from asz_core.scenario.workspace import Workspace, remove_tree
from asz_core.sessiondata.times import parse_instant
from asz_core.verify import verify_root

__all__: list[str] = []

#: the runtime a landed file's adapter names: an sd build's own files are the mock's, and the
#: change records and provider bodies it lands through the Claude Code adapters are Claude Code's
_RUNTIME = {"mock": "Mock Agent", "claude-code-local": "Claude Code", "changes": "Claude Code",
            "claude-code-changes": "Claude Code", "claude-code-provider": "Claude Code"}


def push_follows_the_wire(ws: Workspace) -> list[str]:
    problems: list[str] = []
    for protocol in ("grpc", "http"):
        copy = ws.copy(f"push-{protocol}")
        try:
            problems.extend(f"push_follows_the_wire ({protocol}): {p}" for p in _over(ws, copy, protocol))
        finally:
            remove_tree(copy)
    return problems


def _push(ws: Workspace, config: Path) -> tuple[int, str]:
    return ws.command("push", "--config", str(config), "--json")


def _over(ws: Workspace, copy: Path, protocol: str) -> list[str]:
    problems: list[str] = []
    landed = {f.relpath: f for f in ws.landed(copy)}
    with ws.receiver(protocol) as rx:
        rx.plan("fail")
        config = copy / "asz.yaml"
        with config.open("a", encoding="utf-8") as f:
            f.write(f"export:\n  otlp:\n    protocol: {protocol}\n    endpoint: {rx.endpoint}\n"
                    f"    batch_bytes: 1\n    timeout: 10s\n")
        _code, said = _push(ws, config)
        if rx.records:
            problems.append(f"the receiver refused the first request, and the push still took "
                            f"{len(rx.records)} record(s)")
        code, said = _push(ws, config)
        if code != 0:
            problems.append(f"the push after a refusal failed: {said.strip()}")
        taken = list(rx.records)
        if any(len(request) != 1 for request in rx.requests):
            problems.append("a request carried more or less than one file")
        before = len(rx.requests)
        _push(ws, config)
        if len(rx.requests) != before:
            problems.append(f"a third push sent {len(rx.requests) - before} request(s); it had nothing to send")
    chain = Chain(copy, ws.session)
    rounds = {rf.path.relative_to(copy).as_posix(): rf for rf in chain.files()}
    names = [str(r.attributes.get("asz.file")) for r in taken]
    problems.extend(_rounds_sent(ws, copy, taken, rounds, len(landed)))
    names = [n for n in names if n not in rounds]
    if sorted(names) != sorted(landed):
        missing = sorted(set(landed) - set(names))
        extra = sorted(n for n in set(names) if names.count(n) > 1 or n not in landed)
        problems.append(f"sent {len(names)} file(s) for {len(landed)} landed; missing {missing[:3]}, "
                        f"repeated or unknown {extra[:3]}")
    kinds = set()
    for record in taken:
        name = str(record.attributes.get("asz.file"))
        file = landed.get(name)
        if file is None:
            continue
        data = (copy / name).read_bytes()
        header = file.header
        kinds.add(header.get("kind"))
        adapter = str(header.get("adapter", "")).rpartition("/")[0]
        runtime = _RUNTIME.get(adapter, adapter)
        want = {"asz.file.digest": hashlib.sha256(data).hexdigest(), "asz.lines": data.count(b"\n"),
                "asz.file.kind": header.get("kind"), "asz.session": header.get("session"),
                "asz.seq": header.get("seq")}
        if header.get("stream"):
            want["asz.stream"] = header["stream"]
        times = [t for _line, r in file.records if (t := parse_instant(r.time)) is not None]
        if times:  # the range a receiver bounds a read on: the file's earliest and latest record
            want["asz.from_time"], want["asz.through_time"] = min(times), max(times)
        got = {k: record.attributes.get(k) for k in want}
        for key in ("asz.from_time", "asz.through_time"):
            if isinstance(got.get(key), str):
                got[key] = parse_instant(got[key])
        if record.body != data:
            problems.append(f"{name}: the body is not the file's bytes")
        if got != want:
            problems.append(f"{name}: attributes {json.dumps(got)}, expected {json.dumps(want)}")
        if record.resource.get("service.name") != runtime:
            problems.append(f"{name}: service.name is {record.resource.get('service.name')!r}, expected {runtime!r}")
    if rounds:
        kinds.add("round")
    for kind in ws.expect.push_kinds:
        if kind not in kinds:
            problems.append(f"push.kinds names {kind}, and no {kind} file was sent")
    problems.extend(_written_back(ws, copy, taken))
    return problems


def _rounds_sent(ws: Workspace, copy: Path, taken: list, rounds: dict, files: int) -> list[str]:  # type: ignore[type-arg]
    """Every round once, after every landed file, in round order, saying what it is."""
    problems = []
    sent = [(i, r) for i, r in enumerate(taken) if r.attributes.get("asz.file") in rounds]
    if sorted(str(r.attributes.get("asz.file")) for _, r in sent) != sorted(rounds):
        problems.append(f"sent {len(sent)} round(s) for {len(rounds)} in the chain")
    if any(i < files for i, _ in sent):
        problems.append("a round was sent before the landed files of its session")
    numbers = [r.attributes.get("asz.round") for _, r in sent]
    if numbers != sorted(numbers, key=lambda n: int(n) if isinstance(n, int) else 0):
        problems.append(f"rounds were sent out of order: {numbers}")
    for _, record in sent:
        name = str(record.attributes.get("asz.file"))
        data = (copy / name).read_bytes()
        header = json.loads(data.split(b"\n", 1)[0])
        want = {"asz.format": "sf", "asz.format.version": "sf/1", "asz.file.kind": "round",
                "asz.file.digest": hashlib.sha256(data).hexdigest(), "asz.lines": data.count(b"\n"),
                "asz.session": ws.session, "asz.conversation": header["conversation"],
                "asz.round": header["round"], "asz.conversation.talks": header["talks"],
                "asz.conversation.unresolved": header["unresolved"]}
        got = {k: record.attributes.get(k) for k in want}
        if record.body != data or got != want:
            problems.append(f"{name}: attributes {json.dumps(got)}, expected {json.dumps(want)}")
    return problems


def _written_back(ws: Workspace, copy: Path, taken: list) -> list[str]:  # type: ignore[type-arg]
    rebuilt = copy.parent / f"{copy.name}-rebuilt"
    if rebuilt.exists():
        remove_tree(rebuilt)
    try:
        for record in taken:
            target = rebuilt / str(record.attributes.get("asz.file"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(record.body)
        def kinds(root: Path) -> list[str]:
            return sorted(f"{p.kind} {p.path.replace(str(root), '')}" for r in verify_root(root, [ws.session])
                          for p in r.problems if p.kind != "end gap")
        if kinds(rebuilt) != kinds(copy):
            return [f"the files written back verify as {kinds(rebuilt)}, the root as {kinds(copy)}"]
        return []
    finally:
        if rebuilt.exists():
            remove_tree(rebuilt)


register(Property("push_follows_the_wire", push_follows_the_wire))
