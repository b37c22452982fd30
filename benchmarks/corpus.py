"""A deterministic generator of large corpora shaped like the real one (``../shared/corpus``).

    python benchmarks/corpus.py generate OUT --size 100            # 100 MB of transcripts
    python benchmarks/corpus.py generate OUT --preset many-small   # 2,000 small sessions
    python benchmarks/corpus.py grow OUT --percent 1               # append 1 % to some sessions

Every line written is a real line of the shared corpus, with its identifiers replaced: each
UUID, ``msg_``/``req_``/``toolu_`` id and agent id is swapped for one of the same length and
alphabet, derived from the seed, the session and the repetition, so shapes, sizes and escapes
are the real ones while no two generated sessions (or two repetitions within one) share an id;
and every RFC 3339 time in a session's lines is moved by one offset, so the sessions spread over
half a year as a person's do (a time keeps its spelling and fraction digits).
A generated session is a real session (its main transcript and subagents) repeated until it
reaches a size drawn from a log-normal distribution around the mean the options ask for; its
project directory is one of the corpus's, with a number added so sessions spread over several.

Written into ``OUT``, laid out as the runtimes lay them out:

* ``.claude/projects/<project>/<session>.jsonl`` and ``<session>/subagents/agent-<id>.jsonl``;
* ``provider-bodies/``: the request and response bodies those transcripts' calls would send,
  made by ``../shared/tools/synth-provider-bodies`` from the generated transcripts of the newest
  sessions, as many as ``--bodies MB`` holds (each request repeats the whole conversation so far,
  so every session's bodies would be many times the transcripts);
* ``.kiro/sessions/cli/<uuid>.jsonl`` + ``.json`` and ``.kiro/sessions/<bucket>/sess_<uuid>/``
  (``messages.jsonl`` + ``session.json``), from the corpus's Kiro sessions, repeated likewise;
* ``corpus.json``: what was made (sessions, files, bytes, lines, the largest line).

Presets: ``10mb``, ``100mb``, ``1gb`` (transcripts of that size), ``big-line`` (10 MB and one
50 MB tool result line), ``many-small`` (2,000 sessions of the corpus's smallest shapes),
``huge-transcript`` (one session whose main transcript is 200 MB). The same options and seed
write the same bytes.

``grow`` appends whole lines (continuing each chosen session from its own real session, with
fresh ids) to 5 % of the sessions until ``--percent`` of the transcript bytes is added; it
records what it appended in ``corpus.json`` under ``grown`` so a benchmark can read just that.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.machinery
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED
from _common import corpus as shared_corpus

MB = 1_000_000
SYNTH = SHARED / "tools" / "synth-provider-bodies"
PRESETS: dict[str, dict[str, object]] = {
    "10mb": {"size": 10},
    "100mb": {"size": 100},
    "1gb": {"size": 1000, "bodies": 100},
    "big-line": {"size": 10, "big_line": 50},
    "many-small": {"sessions": 2000, "small": True},
    "huge-transcript": {"sessions": 1, "size": 200, "huge": True, "bodies": 0},
}
#: mean size of a generated session when only ``--size`` is given: the corpus's own mean
MEAN_SESSION = 300_000
SMALL_SESSION = 64_000
SPREAD_DAYS = 180

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_API_ID = re.compile(rb"\b(?:msg|req|toolu|srvtoolu)_[0-9A-Za-z]{20,}")
_TIME = re.compile(rb'"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})((?:\.\d{1,9})?Z)"')
_HEX = b"0123456789abcdef"
_B62 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# ---- the real sessions the generated ones are made from ----------------------------------


@dataclass
class Template:
    """One real session: its main transcript's lines and its subagents' files."""

    session: str
    project: str
    main: list[bytes]
    agents: dict[str, list[bytes]]

    @property
    def size(self) -> int:
        return sum(map(len, self.main)) + sum(sum(map(len, a)) for a in self.agents.values())


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines(keepends=True) if line.endswith(b"\n")]


def load_templates(projects: Path) -> list[Template]:
    templates = []
    for main in sorted(projects.glob("*/*.jsonl")):
        agents = {p.name[len("agent-"):-len(".jsonl")]: _lines(p)
                  for p in sorted((main.parent / main.stem / "subagents").glob("agent-*.jsonl"))}
        templates.append(Template(main.stem, main.parent.name, _lines(main), agents))
    return templates


class IdMap:
    """Replaces every id in a line with one of the same shape, fixed by ``salt``."""

    def __init__(self, salt: str, fixed: dict[bytes, bytes], shift: int = 0) -> None:
        self.shift = datetime.timedelta(seconds=shift)  #: added to every RFC 3339 time in a line
        self.salt = salt.encode()
        self.fixed = dict(fixed)
        self.memo = dict(fixed)

    def _stream(self, token: bytes, n: int) -> bytes:
        out = b""
        counter = 0
        while len(out) < n:
            out += hashlib.blake2b(self.salt + b"|" + token + b"|%d" % counter, digest_size=64).digest()
            counter += 1
        return out[:n]

    def _new(self, token: bytes, alphabet: bytes, keep: int = 0) -> bytes:
        new = self.memo.get(token)
        if new is None:
            stream = self._stream(token, len(token))
            new = token[:keep] + bytes(
                c if c == 0x2D or i < keep else alphabet[stream[i] % len(alphabet)]
                for i, c in enumerate(token) if i >= keep)
            self.memo[token] = new
        return new

    def uuid(self, match: re.Match[bytes]) -> bytes:
        token = match.group()
        new = self._new(token, _HEX)
        return new[:14] + token[14:15] + new[15:19] + token[19:20] + new[20:]  # version, variant kept

    def api(self, match: re.Match[bytes]) -> bytes:
        token = match.group()
        return self._new(token, _B62, keep=token.index(b"_") + 1)

    def agent(self, agent: str) -> str:
        token = agent.encode()
        keep = len("acompact-") if agent.startswith("acompact-") else (1 if len(agent) == 17 else 0)
        return self._new(token, _HEX, keep=keep).decode()

    def time(self, match: re.Match[bytes]) -> bytes:
        moved = datetime.datetime.fromisoformat(match.group(1).decode()) + self.shift
        return b'"' + moved.strftime("%Y-%m-%dT%H:%M:%S").encode() + match.group(2) + b'"'

    def line(self, line: bytes, agents: dict[bytes, bytes]) -> bytes:
        line = _API_ID.sub(self.api, _UUID.sub(self.uuid, line))
        if self.shift:
            line = _TIME.sub(self.time, line)
        for old, new in agents.items():
            if old in line:
                line = line.replace(old, new)
        return line


def _uuid_from(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# ---- writing -----------------------------------------------------------------------------


@dataclass
class Spec:
    """What to generate; see ``--help``."""

    size: float = 10.0           #: MB of Claude Code transcripts
    sessions: int = 0            #: 0: size / MEAN_SESSION
    seed: int = 0
    bodies: float = -1           #: MB of provider bodies; -1: min(size, 60); 0: none
    kiro: float = 0.02           #: share of the size written as Kiro sessions
    big_line: float = 0          #: MB of one tool result line, in a session of its own
    small: bool = False          #: only the corpus's small sessions, each once
    huge: bool = False           #: one session, its main transcript alone reaching ``size``


@dataclass
class Made:
    """What ``corpus.json`` records."""

    spec: dict[str, object]
    sessions: list[dict[str, object]] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    lines: int = 0
    largest_line: int = 0
    transcript_bytes: int = 0
    body_files: int = 0
    body_bytes: int = 0
    body_note: str = ""
    kiro_files: int = 0
    kiro_bytes: int = 0
    grown: list[dict[str, object]] = field(default_factory=list)

    def count(self, line: bytes) -> None:
        self.lines += 1
        self.largest_line = max(self.largest_line, len(line))


class _Writer:
    """One output file, counting what it writes."""

    def __init__(self, path: Path, made: Made, append: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.start = path.stat().st_size if append and path.exists() else 0
        self.f = open(path, "ab" if append else "wb")  # noqa: SIM115 - closed by close()
        self.path, self.made, self.written = path, made, 0
        if not append:
            made.files += 1

    def write(self, line: bytes) -> None:
        self.f.write(line)
        self.written += len(line)
        self.made.count(line)

    def close(self) -> int:
        self.f.close()
        self.made.bytes += self.written
        return self.written


def _session_lines(template: Template, session: str, salt: str, shift: int = 0,
                   agent_ids: dict[str, str] | None = None) -> tuple[IdMap, dict[str, str], Iterator[bytes]]:
    ids = IdMap(salt, {template.session.encode(): session.encode()}, shift)
    agents = agent_ids if agent_ids is not None else {a: ids.agent(a) for a in template.agents}
    swap = {a.encode(): b.encode() for a, b in agents.items()}
    return ids, agents, (ids.line(line, swap) for line in template.main)


def _write_session(root: Path, made: Made, template: Template, project: str, session: str,
                   target: int, seed: int, shift: int, big_line: bytes | None = None) -> int:
    """Write one session of about ``target`` bytes; returns what it wrote."""
    main = _Writer(root / project / f"{session}.jsonl", made)
    total, rep = 0, 0
    while True:
        ids, agents, lines = _session_lines(template, session, f"{seed}:{session}:{rep}", shift)
        for n, line in enumerate(lines):
            if big_line is not None and rep == 0 and n == len(template.main) // 2:
                main.write(big_line)
                total += len(big_line)
            main.write(line)
            total += len(line)
            if total >= target and n >= 10:
                break  # a session cut short, as one still being written is
        for agent, lines_of in template.agents.items():
            out = _Writer(root / project / session / "subagents" / f"agent-{agents[agent]}.jsonl", made)
            swap = {a.encode(): b.encode() for a, b in agents.items()}
            for line in lines_of:
                out.write(ids.line(line, swap))
            total += out.close()
        rep += 1
        if total >= target:
            break
    main.close()
    return total


def _big_line(templates: list[Template], megabytes: float, rng: random.Random) -> bytes:
    """A real tool result line, ``megabytes`` long, its content the corpus's tool output text.

    The text is kept to ASCII, as a large log or file mostly is: one character above U+FFFF in
    a 50 MB string makes Python hold it at 4 bytes a character (200 MB), which no parser of the
    line avoids, so the line would measure that instead of the collector.
    """
    results = [line for t in templates for line in t.main
               if b'"tool_result"' in line and b'"toolUseResult"' in line and 2000 < len(line) < 20000]
    shape = json.loads(rng.choice(results))
    outputs = [b.get("content") for t in templates for line in t.main if b'"tool_result"' in line
               for b in json.loads(line).get("message", {}).get("content", []) if isinstance(b, dict)]
    pool = "".join(c for c in "\n".join(o for o in outputs if isinstance(o, str)) if c.isascii())
    block = next(b for b in shape["message"]["content"] if b.get("type") == "tool_result")
    shape["uuid"] = _uuid_from(rng)
    want = int(megabytes * MB) - 1  # the newline
    size = want
    for _ in range(4):  # escapes make the line longer than its text: shrink the text to fit
        block["content"] = (pool * (size // len(pool) + 1))[:size]
        line = json.dumps(shape, ensure_ascii=False, separators=(",", ":")).encode()
        if len(line) <= want:
            break
        size -= len(line) - want
    return line + b"\n"


def _repeat(w: _Writer, lines: list[bytes], ids: IdMap, target: int) -> int:
    """Write ``lines`` again and again (fresh ids each time) until ``target`` bytes; at least once."""
    rep = 0
    while rep == 0 or w.written < target:
        again = IdMap(f"{ids.salt.decode()}:{rep}", ids.memo if rep == 0 else dict(ids.fixed))
        for line in lines:
            w.write(again.line(line, {}))
        rep += 1
    return w.close()


def _write_kiro(out: Path, made: Made, kiro_root: Path, budget: int, rng: random.Random) -> None:
    """Kiro CLI and IDE sessions in turn, each about 200 KB, from the corpus's Kiro sessions."""
    sessions = kiro_root / ".kiro" / "sessions"
    cli_id = "aaaaaaaa-1111-4524-95d0-000000000001"
    cli_lines = _lines(sessions / "cli" / f"{cli_id}.jsonl")
    cli_meta = (sessions / "cli" / f"{cli_id}.json").read_bytes()
    ide = next(sessions.glob("*/sess_*"))
    ide_lines, ide_meta = _lines(ide / "messages.jsonl"), (ide / "session.json").read_bytes()
    count = max(2, budget // 200_000)
    before = made.bytes
    for n in range(count):
        if n % 2 == 0:
            sid = _uuid_from(rng)
            ids = IdMap(f"kiro:{n}", {cli_id.encode(): sid.encode()})
            base = out / ".kiro" / "sessions" / "cli"
            _repeat(_Writer(base / f"{sid}.jsonl", made), cli_lines, ids, budget // count)
            _repeat(_Writer(base / f"{sid}.json", made), [cli_meta], ids, 0)
        else:
            sid = "sess_" + _uuid_from(rng)
            ids = IdMap(f"kiro:{n}", {ide.name.encode(): sid.encode()})
            base = out / ".kiro" / "sessions" / f"{rng.getrandbits(64):016x}" / sid
            _repeat(_Writer(base / "messages.jsonl", made), ide_lines, ids, budget // count)
            _repeat(_Writer(base / "session.json", made), [ide_meta], ids, 0)
    made.kiro_files = 2 * count
    made.kiro_bytes = made.bytes - before


#: A session whose bodies alone would take more than this share of the budget is left out of
#: the capture: ``synth-provider-bodies``' own limit for the one large session it keeps.
LARGEST_SHARE = 0.7


def _synth_module() -> Any:
    """``synth-provider-bodies`` loaded as a module, for its estimate of a session's bytes."""
    loader = importlib.machinery.SourceFileLoader("synth_provider_bodies", str(SYNTH))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def _captured_sessions(out: Path, made: Made, budget: int) -> tuple[list[dict[str, object]], int]:
    """The sessions a capture of about ``budget`` bytes holds: the newest ones, as a capture
    switched on at some date holds every session since, and ``(chosen, estimated bytes)``.

    Not ``synth-provider-bodies --max-bytes``: it keeps the smallest sessions first, which suits
    the shared corpus (56 of its 62 sessions fit, so what it keeps is what a person's capture
    holds) but not a generated corpus whose sessions would write 25 times the budget: there it
    kept the smallest fifth (on ``100mb`` their median 0.28 MB of bodies against 1.5 MB for all
    sessions), where each session's fixed cost (its first request's tool definitions and system
    prompt land whole) weighs far more than on any real capture. Sessions are spread over half
    a year independently of their size, so the newest are a fair sample of them.
    """
    synth = _synth_module()
    data = synth.load_data()
    projects = out / ".claude" / "projects"
    chosen: list[dict[str, object]] = []
    used = 0
    for entry in sorted(made.sessions, key=lambda e: (-int(str(e["shift"])), str(e["id"]))):
        main = projects / str(entry["project"]) / f"{entry['id']}.jsonl"
        size = int(synth.Session(str(main.parent), str(main), data, 0).estimate())
        if size > LARGEST_SHARE * budget:
            continue  # too large for this capture, as the shared corpus's largest sessions were
        if used + size > budget:
            break
        chosen.append(entry)
        used += size
    return chosen, used


def _bodies(out: Path, made: Made, spec: Spec) -> None:
    budget = spec.bodies if spec.bodies >= 0 else min(spec.size, 60.0)
    if budget <= 0:
        made.body_note = "no provider bodies asked for (--bodies 0)"
        return
    if not SYNTH.is_file():
        made.body_note = f"no provider bodies: {SYNTH} is not there"
        return
    target = out / "provider-bodies"
    chosen, _ = _captured_sessions(out, made, int(budget * MB))
    with tempfile.TemporaryDirectory(prefix="asz-corpus-") as tmp:
        # the chosen sessions alone, linked into a projects tree of their own
        tree = Path(tmp) / "projects"
        for entry in chosen:
            project = out / ".claude" / "projects" / str(entry["project"])
            (tree / project.name).mkdir(parents=True, exist_ok=True)
            for name in (f"{entry['id']}.jsonl", str(entry["id"])):
                if (project / name).exists():
                    (tree / project.name / name).symlink_to(project / name)
        done = subprocess.run([sys.executable, str(SYNTH), str(tree), str(target), "--seed", str(spec.seed)],
                              capture_output=True, text=True)
    if done.returncode != 0:
        made.body_note = f"synth-provider-bodies failed: {done.stderr.strip()[-500:]}"
        return
    files = [p for p in target.iterdir() if p.is_file()]
    made.body_files = len(files)
    sizes = [p.stat().st_size for p in files]
    made.body_bytes = sum(sizes)
    made.largest_line = max([made.largest_line, *sizes])
    made.body_note = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""


def generate(out: Path, spec: Spec, corpus: Path | None = None) -> Made:
    """Write a corpus into ``out`` (which must not exist yet) and return what was made."""
    corpus = corpus or shared_corpus()
    out.mkdir(parents=True)
    rng = random.Random(spec.seed)
    templates = load_templates(corpus / "claude-code" / "projects")
    if spec.small:
        templates = [t for t in templates if t.size <= SMALL_SESSION]
    made = Made(spec=asdict(spec))
    projects = out / ".claude" / "projects"
    want = int(spec.size * MB) if not spec.small else 0
    count = spec.sessions or max(8, round(want / MEAN_SESSION))
    big = _big_line(templates, spec.big_line, rng) if spec.big_line else None
    # log-normal sizes around the mean, so a few sessions are many times the mean, as in life
    weights = [rng.lognormvariate(0, 1) for _ in range(count)]
    scale = want / sum(weights) if want else 0
    smallest = min(templates, key=lambda t: t.size)
    for n in range(count):
        target = int(weights[n] * scale)
        if spec.huge:
            template = max(templates, key=lambda t: sum(map(len, t.main)))
        elif spec.small:
            template = rng.choice(templates)
        else:
            template = rng.choice([t for t in templates if t.size <= target] or [smallest])
        if spec.small:
            target = template.size
        session = _uuid_from(rng)
        project = f"{template.project}-{n % max(1, count // 40)}" if count > 40 else template.project
        line = big if n == 0 else None
        # spread over half a year, as a person's sessions are (the provider adapter's claim
        # windows and every time a record carries see realistic gaps)
        shift = rng.randrange(SPREAD_DAYS * 86400)
        wrote = _write_session(projects, made, template, project, session, target, spec.seed, shift, line)
        made.sessions.append({"id": session, "project": project, "template": template.session,
                              "bytes": wrote, "shift": shift})
    made.transcript_bytes = made.bytes
    if spec.kiro > 0:
        _write_kiro(out, made, corpus / "kiro", int(max(made.transcript_bytes * spec.kiro, 30_000)), rng)
    _bodies(out, made, spec)
    (out / "corpus.json").write_text(json.dumps(asdict(made), indent=1), "utf-8")
    return made


def load_made(out: Path) -> Made:
    data = json.loads((out / "corpus.json").read_text("utf-8"))
    return Made(**data)


def grow(out: Path, percent: float, seed: int = 0, corpus: Path | None = None) -> list[dict[str, object]]:
    """Append ``percent`` of the transcript bytes to 5 % of the sessions (at least one), as
    whole lines continuing each session's own real session; returns ``[{path, start, bytes}]``."""
    corpus = corpus or shared_corpus()
    made = load_made(out)
    templates = {t.session: t for t in load_templates(corpus / "claude-code" / "projects")}
    rng = random.Random(f"grow:{seed}:{len(made.grown)}")
    chosen = rng.sample(made.sessions, max(1, len(made.sessions) // 20))
    quota = int(made.transcript_bytes * percent / 100 / len(chosen)) + 1
    appended: list[dict[str, object]] = []
    for entry in chosen:
        template = templates[str(entry["template"])]
        session = str(entry["id"])
        path = out / ".claude" / "projects" / str(entry["project"]) / f"{session}.jsonl"
        w = _Writer(path, made, append=True)
        rep = 0
        while w.written < quota:
            _, _, lines = _session_lines(template, session, f"grow:{seed}:{len(made.grown)}:{session}:{rep}",
                                         int(str(entry.get("shift", 0))))
            for line in lines:
                w.write(line)
                if w.written >= quota:
                    break
            rep += 1
        w.close()
        appended.append({"path": str(path.relative_to(out)), "start": w.start, "bytes": w.written})
    made.grown.append({"percent": percent, "files": appended})
    made.transcript_bytes += sum(int(str(a["bytes"])) for a in appended)
    (out / "corpus.json").write_text(json.dumps(asdict(made), indent=1), "utf-8")
    return appended


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write a corpus into OUT (which must not exist)")
    g.add_argument("out", type=Path)
    g.add_argument("--preset", choices=sorted(PRESETS))
    g.add_argument("--size", type=float, help="MB of Claude Code transcripts (default 10)")
    g.add_argument("--sessions", type=int, help="number of sessions (default: size / 300 KB)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--bodies", type=float, help="MB of provider bodies (default min(size, 60); 0: none)")
    g.add_argument("--kiro", type=float, help="share of the size written as Kiro sessions (default 0.02)")
    g.add_argument("--big-line", type=float, help="MB of one tool result line")
    w = sub.add_parser("grow", help="append whole lines to some sessions of OUT")
    w.add_argument("out", type=Path)
    w.add_argument("--percent", type=float, default=1.0)
    w.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "grow":
        appended = grow(args.out, args.percent, args.seed)
        print(f"appended {sum(int(str(a['bytes'])) for a in appended):,} bytes to {len(appended)} transcripts")
        return 0
    options: dict[str, object] = dict(PRESETS[args.preset]) if args.preset else {}
    for key in ("size", "sessions", "bodies", "kiro", "big_line"):
        value = getattr(args, key)
        if value is not None:
            options[key] = value
    spec = Spec(seed=args.seed, **options)  # type: ignore[arg-type]
    if args.out.exists():
        parser.error(f"{args.out} exists; name a new directory")
    made = generate(args.out, spec)
    print(f"{args.out}: {len(made.sessions)} Claude Code sessions, {made.transcript_bytes / MB:.1f} MB "
          f"of transcripts in {made.lines:,} lines (largest {made.largest_line / MB:.2f} MB); "
          f"{made.kiro_files} Kiro files ({made.kiro_bytes / MB:.1f} MB); {made.body_files} provider "
          f"bodies ({made.body_bytes / MB:.1f} MB){'; ' + made.body_note if made.body_note else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
