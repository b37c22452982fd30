"""``asz-pipeline conflicts [--accept SOURCE…]``: every source collection has stopped on, and the
way out.

A source whose landed bytes changed (cut short, or rewritten before its cursor) is a conflict: its
cursor says so, nothing more lands from it, and every pass counts it and exits 1 (upstream keeps
it so too: a conflict stays until a person looks at it). A pass names the file only when it first
meets it; this lists them all, from the cursors alone, reading no source and changing nothing.

There are two ways out, and both are a person's act; neither changes a landed byte:

* put the source's bytes back, and the next pass goes on where it stopped;
* ``--accept SOURCE``: take the rewritten source as a new version. The stopped cursor says
  ``accepted`` (one durable write under the root's and the session's locks), and the next pass
  lands the whole source again, from its first byte, in a stream of its own (``main.v2``), which
  assembly reads as the same stream (:mod:`asz_core.collect.versions` says why it is a place of
  its own). ``SOURCE`` is a cursor as listed (``<session>/streams/main/transcript.cursor``) or a
  source as listed; one that is not in conflict is refused (exit 2), and then none is accepted.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.console import plural
from asz_core.cli.rootcheck import require_root
from asz_core.collect.accept import Accepted, NotAcceptable, accept, check_acceptable, is_stuck
from asz_core.errors import UsageError
from asz_core.pipeline import hold_root
from asz_core.root import confined
from asz_core.root.cursors import parse_pairs, read_small
from asz_core.root.storage import StorageRoot, place_dirs
from asz_core.sessiondata.times import format_instant

__all__ = ["add", "find_conflicts"]

WHAT_TO_DO = ("put the source's bytes back (a backup, or the copy the tool keeps) and the next pass "
              "goes on where it stopped, or take the rewritten source as a new version with "
              "`asz-pipeline conflicts --accept SOURCE`; either way nothing landed from it is lost")


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("conflicts", help="list the sources collection stopped on; accept a rewritten one",
                       description="List every source whose landed bytes changed (cut short or "
                                   "rewritten), from the root's cursors; exit 1 when there is one. "
                                   "--accept SOURCE takes a rewritten source as a new version: the "
                                   "next pass lands it whole in a stream of its own, and what landed "
                                   "before stays as it is.")
    p.add_argument("--accept", nargs="+", metavar="SOURCE", default=[],
                   help="a cursor (<session>/streams/<stream>/<kind>.cursor) or a source, as listed "
                        "(a source that starts with -, as a Claude Code project does: --accept=SOURCE)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _cursors(session: Path) -> list[Path]:
    """The cursors of a session's streams and runs, in path order; nothing is listed through a
    link (a link is not a session's place, and verify says so)."""
    out: list[Path] = []
    for directory in place_dirs(session):
        try:
            names = confined.listdir(directory)
        except OSError:  # LinkRefused is one
            continue
        out += (directory / n for n in names if n.endswith(".cursor") and not n.startswith("."))
    return sorted(out)


def find_conflicts(root: Path) -> list[dict[str, object]]:
    """Each cursor of the root that stops its source: its session, cursor, source and how far
    it had landed."""
    found: list[dict[str, object]] = []
    for name in StorageRoot(root).sessions():
        session = root / name
        for path in _cursors(session):
            try:
                raw = read_small(path)
            except OSError:
                continue  # a link or a directory: not a cursor, and verify says so
            if raw is None:
                continue
            pairs = dict(parse_pairs(raw.decode("utf-8", "replace")))
            if not is_stuck(pairs, f"{path.parent.parent.name}/{path.parent.name}"):
                continue
            try:
                landed = int(pairs.get("offset", "0"))
            except ValueError:
                landed = 0
            found.append({"session": session.name, "cursor": path.relative_to(root).as_posix(),
                          "source": pairs.get("source", ""), "landed_bytes": landed})
    return found


def _resolve(given: str, found: list[dict[str, object]]) -> str:
    """The cursor ``given`` names: itself, or the one conflict whose source it is."""
    if given.endswith(".cursor"):
        return given
    matches = [str(item["cursor"]) for item in found if item["source"] == given]
    if len(matches) > 1:
        raise UsageError(f"{given}: the source of {len(matches)} conflicts ({', '.join(matches)}); "
                         f"name the cursor to accept")
    if not matches:
        raise UsageError(f"{given}: no source in conflict is named so; `asz-pipeline conflicts` lists "
                         f"them (a cursor, <session>/streams/<stream>/<kind>.cursor, is accepted too)")
    return matches[0]


def _accept(root: Path, given: list[str]) -> list[Accepted]:
    """Accept every conflict ``given`` names, or none (each is checked first: rule 1 of
    :mod:`asz_core.collect.accept`)."""
    with hold_root(StorageRoot(root), wait=True, doing="conflicts --accept"):
        found = find_conflicts(root)
        cursors = list(dict.fromkeys(_resolve(g, found) for g in given))
        for cursor in cursors:
            try:
                check_acceptable(root, cursor)
            except NotAcceptable as exc:
                raise UsageError(str(exc)) from None
        now = format_instant(time.time_ns())
        done = []
        for cursor in cursors:
            try:
                done.append(accept(root, cursor, now))
            except NotAcceptable as exc:  # changed meanwhile (a hand edit): said, the rest stand
                raise UsageError(str(exc)) from None
    return done


def run(args: argparse.Namespace, app: App) -> int:
    root = app.config.root
    require_root(root, "conflicts")
    accepted = _accept(root, args.accept) if args.accept else []
    found = find_conflicts(root)
    if args.json:
        print(json.dumps({"root": str(root), "conflicts": found, "what_to_do": WHAT_TO_DO,
                          "accepted": [{"cursor": a.cursor, "session": a.session, "version": a.version,
                                        "lands_in": f"{a.session}/{a.place}"} for a in accepted]}),
              file=app.out)
    else:
        for a in accepted:
            print(f"accepted {a.cursor}: the next pass lands the rewritten source whole, as version "
                  f"{a.version}, in {a.session}/{a.place}; what landed before stays as it is", file=app.out)
        for item in found:
            print(f"{item['session']}: {item['source']} (landed up to byte {item['landed_bytes']}; "
                  f"{item['cursor']})", file=app.out)
        print(f"conflicts: root={root} {plural(len(found), 'source')}", file=app.out)
        if found:
            print(f"asz: {WHAT_TO_DO}", file=app.err)
    return EXIT_FAILED if found else EXIT_OK
