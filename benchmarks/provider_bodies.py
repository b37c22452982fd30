"""How small and how fast the claude-code-provider adapter lands a directory of bodies.

    python benchmarks/provider_bodies.py [BODIES_DIR] [--transcripts PROJECTS_DIR]
    python benchmarks/provider_bodies.py --corpus DIR     # a corpus benchmarks/corpus.py wrote

Defaults: ``provider-bodies`` and ``claude-code/projects`` of ``../shared/corpus`` (``$ASZ_SHARED``
moves it).
One pass of the adapter lands the bodies into a temporary root. What ``claude-code-local``
would land first (each session's index: the message ids its transcripts record, and the
directory slug) is written from the transcripts beforehand, so the benchmark needs only this
adapter. Then every landed body is rebuilt and compared with its file.

Printed: bodies landed, bytes Claude Code wrote (the whole directory), bytes landed
(``provider_body`` files), their ratio, what the landed bytes are (pieces another session also
landed, such as each session's tool definitions; pieces no other session holds; the manifests'
literal text; the rest of the manifests: references, copies, ids; the rest of the records and
files), bodies per second for the pass, rebuild time per body (reading each session in order;
and cold, a new reader per body), and beside them ``zstd -3`` of the same directory as one tar
stream: the size a plain archive would take.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, corpus, peak_rss_mb, table

sys.path.insert(0, str(REPO))  # the tests' helper that writes what claude-code-local would index
from asz_core.config import load_config
from asz_core.host import PluginHost
from asz_core.pipeline import run_pass
from asz_core.providerbody import LitSeg, ProviderBodies, manifest_of
from asz_core.sessiondata import open_file
from tests.provider_support import transcript_ids, write_index


def index_transcripts(projects: Path, root: Path) -> int:
    """Write each session's index as claude-code-local would after landing its transcripts."""
    sessions = transcript_ids(projects)
    for ids in sessions.values():
        write_index(root, ids)
    return len(sessions)


def landed_shares(root: Path) -> dict[str, int]:
    """Bytes of the landed ``provider_body`` files by what they are."""
    shares = dict.fromkeys(("repeated pieces", "own pieces", "manifest literals", "manifest rest", "rest"), 0)
    first_session: dict[str, str] = {}
    total = 0
    for path in sorted(root.glob("*/provider_body/*.sd")):
        session = path.parent.parent.name
        total += path.stat().st_size
        with open_file(path) as landed:
            for record in landed:
                manifest = record.parts[-1].data or b""
                literals = sum(len(s.text.encode("utf-8", "surrogatepass"))
                               for s in manifest_of(record).segments if isinstance(s, LitSeg))
                shares["manifest literals"] += literals
                shares["manifest rest"] += len(manifest) - literals
                for part in record.parts[:-1]:
                    data = bytes(part.data or b"")
                    digest = hashlib.sha256(data).hexdigest()
                    repeated = first_session.setdefault(digest, session) != session
                    shares["repeated pieces" if repeated else "own pieces"] += len(data)
    shares["rest"] = total - sum(shares.values())
    return shares


def zstd_size(directory: Path) -> str:
    """``zstd -3`` of the directory as one tar stream, or why it cannot be measured here."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(directory.iterdir()):
            tar.add(path, arcname=path.name)
    data = buffer.getvalue()
    if shutil.which("zstd"):
        done = subprocess.run(["zstd", "-3", "-c", "-q"], input=data, capture_output=True, check=True)
        return str(len(done.stdout))
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return "absent (neither the zstd command nor the zstandard module is installed)"
    return str(len(zstandard.ZstdCompressor(level=3).compress(data)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bodies", nargs="?", type=Path, help="a directory of body files")
    parser.add_argument("--transcripts", type=Path, help="a ~/.claude/projects tree of their transcripts")
    parser.add_argument("--cold", type=int, default=50, help="bodies rebuilt cold (a new reader each)")
    parser.add_argument("--corpus", type=Path, help="a corpus written by corpus.py: its provider-bodies/ "
                                                    "and .claude/projects/")
    args = parser.parse_args(argv)
    if args.corpus is not None:
        args.bodies = args.corpus / "provider-bodies"
        args.transcripts = args.corpus / ".claude" / "projects"
    if args.bodies is None:
        args.bodies = corpus() / "provider-bodies"
        args.transcripts = args.transcripts or corpus() / "claude-code" / "projects"
    if args.transcripts is None:
        args.transcripts = Path("/nonexistent")
    if not args.bodies.is_dir():
        print(f"no bodies at {args.bodies}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="asz-bench-") as tmp:
        root = Path(tmp) / "root"
        sessions = index_transcripts(args.transcripts, root) if args.transcripts.is_dir() else 0
        config = Path(tmp) / "asz.yaml"
        config.write_text(json.dumps({"storage": {"root": str(root)}, "adapters": [
            {"name": "claude-code-provider", "source_root": str(args.bodies), "exclude": []},
            {"name": "claude-code-local", "enabled": False}, {"name": "kiro", "enabled": False}]}))
        host = PluginHost().load_entry_points()
        started = time.perf_counter()
        summary = run_pass(host, load_config(host, str(config)))
        pass_s = time.perf_counter() - started
        if summary.errors:
            print("\n".join(str(e) for e in summary.errors), file=sys.stderr)
            return 1
        written = sum(p.stat().st_size for p in args.bodies.glob("*.json"))
        landed = sum(p.stat().st_size for p in root.glob("*/provider_body/*.sd"))
        addresses, exact, in_order = [], 0, 0.0
        for session in sorted(p for p in root.iterdir() if (p / "provider_body").is_dir()):
            reader = ProviderBodies(session)
            entries = list(reader.entries())
            t = time.perf_counter()
            bodies = [reader.body(e.seq, e.row) for e in entries]
            in_order += time.perf_counter() - t
            exact += sum(b == (args.bodies / e.manifest.src).read_bytes() for b, e in zip(bodies, entries, strict=True))
            addresses += [(session, e.seq, e.row) for e in entries]
        sample = random.Random(0).sample(addresses, min(args.cold, len(addresses)))
        t, cpu = time.perf_counter(), time.process_time()
        for session, seq, row in sample:
            ProviderBodies(session).body(seq, row)
        cold = (time.perf_counter() - t) / max(len(sample), 1)
        cold_cpu = (time.process_time() - cpu) / max(len(sample), 1)  # wall time lies on a shared machine
        n = summary.totals.records
        rows = [
            ("sessions indexed from transcripts", str(sessions)),
            ("body files", str(len(list(args.bodies.glob("*.json"))))),
            ("bodies landed", str(n)),
            ("bodies waiting / unreadable", f"{summary.fields().get('bodies_waiting', 0)} / "
                                            f"{summary.fields().get('bodies_unreadable', 0)}"),
            ("bytes written (directory)", str(written)),
            ("bytes landed (provider_body files)", str(landed)),
            ("landed / written", f"{landed / written:.2%}"),
            *((f"  of which {what}", f"{n / landed:.1%}") for what, n in landed_shares(root).items()),
            ("bodies rebuilt exactly", f"{exact} of {len(addresses)}"),
            ("pass time", f"{pass_s:.2f} s"),
            ("bodies per second", f"{n / pass_s:.0f}"),
            ("rebuild per body, in order", f"{1000 * in_order / max(len(addresses), 1):.2f} ms"),
            (f"rebuild per body, cold ({len(sample)} sampled), wall / CPU",
             f"{1000 * cold:.2f} / {1000 * cold_cpu:.2f} ms"),
            ("zstd -3 of the directory (tar)", zstd_size(args.bodies)),
        ]
        z = rows[-1][1]
        if z.isdigit():
            rows.append(("zstd -3 / written", f"{int(z) / written:.2%}"))
        rows.append(("peak memory (RSS)", f"{peak_rss_mb():.0f} MB"))
        print(table(rows, ("measure", "value")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
