"""``scenario build``: a scenario turned into the input a real session leaves, and a configuration.

The steps, in order:

1. ``DIR/asz.yaml`` is checked first: a build writes it, and refuses one it did not write (its
   first line says who wrote it), so a directory holds one configuration. What a person put
   below the build's block (an ``export`` section) is kept across builds.
2. The scenario is planned against ``--at`` (``now`` by default, cut to the millisecond).
3. ``claude-code``: ``DIR/_scenario/``, the sign that a pipeline over this root removes what
   the build marked; then, for each session, its old marker goes (a build refuses a session
   whose marker says a pipeline is removing it), the runtime's files are written under
   ``DIR/_source``, and the session's marker, ``DIR/_source/.asz-scenario/<session>.json``,
   last (:mod:`asz_core.removal.marker`: the ``--remove`` policy and every file the build wrote
   for the session, with its size and SHA-256; not the noise beside it, which no session owns).
   ``sd``: Session Data landed into ``DIR`` directly; never marked.
4. ``--repeat N`` builds N sessions end to end on the clock, the first with the scenario's id and
   the rest counted up from it; ``--every D`` keeps building one a period, each stamped so its
   last record falls at the moment it was written, with an id taken from that moment.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from asz_core.removal.marker import (
    MARKER_DIR,
    REMOVING,
    Marker,
    MarkerFile,
    marker_path,
    parse_policy,
)
from asz_core.removal.scenario_root import SCENARIO_DIR
from asz_core.root.durable import OWNER_FILE, make_dirs
from asz_core.scenario.changes import PLUGIN_DATA
from asz_core.scenario.model import Scenario, ScenarioError, parse_duration
from asz_core.scenario.plan import Plan, derived_session, plan
from asz_core.scenario.write_claude_code import BODIES_DIR, NOISE, write_claude_code
from asz_core.scenario.write_sd import write_sd

__all__ = ["FORMATS", "MARKER_DIR", "SOURCE_DIR", "BuildOptions", "Built", "build", "check_options",
           "describe_policy", "parse_at", "write_config"]

FORMATS = ("claude-code", "sd")
SOURCE_DIR = "_source"
_WRITTEN_BY = "# written by asz-pipeline scenario build: a build rewrites everything above the line below"
_YOURS = "# ---- what follows is yours: builds keep it ----"


@dataclass
class BuildOptions:
    format: str = "claude-code"
    at_ms: int = 0
    scale: float = 1.0
    interval_ms: float = 0.0
    through: str = ""
    repeat: int = 1
    remove: str = "immediately"
    max_delta_bytes: int = 0
    watch: bool = False


@dataclass
class Built:
    plans: list[Plan] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    @property
    def sessions(self) -> list[str]:
        return [p.session for p in self.plans]


def parse_at(text: str | None) -> int:
    """``--at``: RFC 3339, or ``now``; epoch milliseconds."""
    if not text or text == "now":
        return time.time_ns() // 1_000_000
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ScenarioError(f"--at {text!r} is not an RFC 3339 time such as 2026-06-01T09:00:00Z, nor now") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def counted_session(first: str, n: int) -> str:
    """The ``n``-th session after ``first``: its last twelve hex digits counted up, case kept."""
    head, tail = first[:-12], first[-12:]
    try:
        number = int(tail, 16) + n
    except ValueError:
        return f"{first}-{n}"
    text = f"{number % (1 << 48):012x}"
    return head + (text.upper() if tail.isupper() else text)


def feed_session(moment_ms: int) -> str:
    """A session id no earlier feed session has: drawn from the moment it was written."""
    h = hashlib.sha256(f"feed:{moment_ms}".encode()).hexdigest()
    return f"{moment_ms:012x}"[-8:] + f"-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def build(scenario: Scenario, out: Path, opts: BuildOptions) -> Built:
    """Steps 1 to 4 for a one-shot or ``--repeat`` build."""
    check_options(opts)
    write_config(out, scenario, opts)
    built = Built()
    first = scenario.session or derived_session(scenario)
    at = opts.at_ms
    for n in range(max(1, opts.repeat)):
        session = counted_session(first, n) if n else first
        p = plan(scenario, at_ms=at, scale=opts.scale, interval_ms=opts.interval_ms, through=opts.through,
                 session=session)
        built.plans.append(p)
        built.files.extend(_write(p, out, opts))
        at += p.span_ms() + int((opts.interval_ms or scenario.interval_ms or 1000.0) * (opts.scale or 1.0))
    return built


def build_one_feed_session(scenario: Scenario, out: Path, opts: BuildOptions) -> Plan:
    """One session of ``--every``: its last record lands now, under an id taken from now."""
    now = time.time_ns() // 1_000_000
    probe = plan(scenario, at_ms=now, scale=opts.scale, interval_ms=opts.interval_ms, session="probe")
    p = plan(scenario, at_ms=now - probe.span_ms(), scale=opts.scale, interval_ms=opts.interval_ms,
             session=feed_session(now))
    _write(p, out, opts)
    return p


def check_options(opts: BuildOptions) -> None:
    """What is refused before anything is written: an unknown format, ``--remove`` with ``sd``
    (an sd build writes no source and is never removed), and a policy that is not one."""
    if opts.format not in FORMATS:
        raise ScenarioError(f"--format {opts.format!r}: the formats are {', '.join(FORMATS)}")
    if opts.format == "sd" and opts.remove != "immediately":
        raise ScenarioError("--remove applies to claude-code builds only: an sd build writes no source to remove")
    _policy(opts.remove)


def describe_policy(text: str) -> str:
    """The policy as the build prints it after ``config``."""
    _kind, retain = _policy(text)
    return "immediately, once sent" if not retain else f"{retain} after its last record, once sent"


def _policy(text: str) -> tuple[str, str]:
    try:
        return parse_policy(text)
    except ValueError as exc:
        raise ScenarioError(f"--remove: {exc}; give immediately or a duration such as 30m, 24h or 7d") from None


def _write(p: Plan, out: Path, opts: BuildOptions) -> list[Path]:
    if opts.format == "sd":
        return write_sd(p, out)
    policy, retain = _policy(opts.remove)
    make_dirs(out / SCENARIO_DIR)
    source = out / SOURCE_DIR
    marker = marker_path(source, p.session)
    _clear_marker(marker, out, p.session)
    files = write_claude_code(p, source)
    noise = {source / p.project / rel for rel, _content in NOISE}
    listed = [MarkerFile(f.relative_to(source).as_posix(), f.stat().st_size, hashlib.sha256(f.read_bytes()).hexdigest())
              for f in files if f not in noise]
    make_dirs(marker.parent)
    Marker(p.session, policy, retain, files=listed).save(marker)
    return [*files, marker]


def _clear_marker(marker: Path, out: Path, session: str) -> None:
    """A marker saying ``removing`` means a pipeline is deleting the session's files: the build
    stops rather than write under it. Any other goes first, so no marker vouches for files this
    build is about to rewrite."""
    try:
        data = marker.read_bytes()
    except FileNotFoundError:
        return
    try:
        state = json.loads(data).get("state")
    except (ValueError, AttributeError):
        raise ScenarioError(f"{marker} is not a marker this build can read; delete it once no pipeline over "
                            f"{out} is removing session {session}, or build into another --out") from None
    if state == REMOVING:
        raise ScenarioError(f"session {session} is being removed by a pipeline over {out}; build it again once "
                            f"that has finished, or build into another --out")
    marker.unlink()


def _write_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, OWNER_FILE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_config(out: Path, scenario: Scenario, opts: BuildOptions) -> Path:
    """Step 1: ``DIR/asz.yaml``, storage root ``DIR``, the adapters at ``DIR/_source``."""
    path = out / "asz.yaml"
    kept = ""
    if path.exists():
        text = path.read_text("utf-8")
        if not text.startswith(_WRITTEN_BY):
            raise ScenarioError(f"{path} was not written by a scenario build; build into another directory")
        _, _, kept = text.partition(_YOURS + "\n")
    make_dirs(out)
    cc = opts.format == "claude-code"
    interval = "5s" if opts.watch else "10m"
    budget = opts.max_delta_bytes or 2097152
    # absolute: a relative path resolves against the working directory (as upstream's does), and
    # the file is read with --config from anywhere
    where = out.resolve()

    def adapter(name: str, enabled: bool, source: str) -> str:
        return (f"  - name: {name}\n    enabled: {'true' if enabled else 'false'}\n    source_root: {where / source}\n"
                f"    exclude: []\n    collector: {{interval: {interval}, max_delta_bytes: {budget}}}\n")

    text = (f"{_WRITTEN_BY}\n# scenario: {scenario.path.name}, format {opts.format}\n"
            f"storage:\n  root: {where}\nadapters:\n"
            + adapter("claude-code-local", cc, SOURCE_DIR)
            + adapter("changes", cc, f"{SOURCE_DIR}/{PLUGIN_DATA}")  # idle while no tool changes a file
            + adapter("claude-code-provider", cc, f"{SOURCE_DIR}/{BODIES_DIR}")  # idle while no body is written
            + adapter("kiro", False, "_source/kiro")
            + f"{_YOURS}\n")
    if not kept:
        kept = ("# To push, name the receiver:\n# export:\n#   otlp:\n#     protocol: grpc\n"
                "#     endpoint: 127.0.0.1:11800\n")
    _write_file(path, (text + kept).encode("utf-8"))
    return path


def every_ms(text: str) -> float:
    period = parse_duration(text, "--every")
    if period < 1:
        raise ScenarioError("--every: the period is at least 1ms, so every session gets an id of its own")
    return period
