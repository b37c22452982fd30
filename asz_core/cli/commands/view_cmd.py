"""``asz-pipeline view [SESSION] [--body SEQ:ROW]``: what a conversation did, from the root alone.

With no session, one line per session of the root, from its head round (title, range, rounds,
talks, steps). With a session, its ``asz.view`` document, upstream's 1.0 document built from the
rounds and the landed files (``--json``, ``--yaml``), or a summary of its talks for a person.
With ``--body SEQ:ROW``, the exact bytes of one provider body, rebuilt from the root.
``view.hide`` in ``asz.yaml`` withholds records by flag; ``--hide`` overrides it for one command
(``--hide none`` withholds nothing). A document that does not verify is still printed, and the
exit status is 1.
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any, cast

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App
from asz_core.cli.rootcheck import require_root

__all__ = ["add"]

#: ``asz_core.view.HIDEABLE`` as the help text lists it (a test keeps the two equal): the view,
#: the provider-body and Session Data readers load when this command runs, not on every start-up
_HIDEABLE_HELP = "system_prompt, tool_schemas"


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("view", help="show a conversation: its talks, streams and rounds",
                       description="With no SESSION, list the root's sessions. With SESSION, show its "
                                   "asz.view document, built from its rounds and landed files: talks as "
                                   "trees of runs and steps, streams, relations, each call's provider "
                                   "bodies. With --body SEQ:ROW, print one provider body's exact bytes.")
    p.add_argument("session", nargs="?", metavar="SESSION", help="the session to show")
    p.add_argument("--body", metavar="SEQ:ROW", type=_body_ref, help="print the provider body landed at SEQ:ROW")
    p.add_argument("--hide", metavar="FLAGS", action="append",
                   help=f"withhold steps with these flags ({_HIDEABLE_HELP}; comma-separated, "
                        f"or none); overrides view.hide")
    shape = p.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the document as JSON")
    shape.add_argument("--yaml", action="store_true", help="print the document as YAML")
    p.set_defaults(func=run)


def _body_ref(text: str) -> str:
    """``--body 3:1``: checked as the command line is read, so a malformed one is exit 2."""
    from asz_core.sessiondata.address import Address

    try:
        address = Address.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}; a body is named SEQ:ROW, such as 3:1") from None
    if address.block is not None:
        raise argparse.ArgumentTypeError(f"{text!r} names a part; a body is named SEQ:ROW, such as 3:1")
    return text


def _hide(args: argparse.Namespace, app: App) -> tuple[str, ...]:
    from asz_core.view import check_hide

    if args.hide is None:
        return check_hide(app.config.section("view").get("hide", []))
    wanted = [w.strip() for item in args.hide for w in item.split(",")]
    return check_hide(w for w in wanted if w and w != "none")


def _dumps(value: Any) -> bytes:
    # A lone surrogate in an id comes out as its JSON escape (\udcxx), so the output stays JSON.
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "backslashreplace")


def _write(app: App, data: bytes) -> None:
    out = cast(IO[bytes] | None, getattr(app.out, "buffer", None))
    if out is None:
        app.out.write(data.decode("utf-8", "surrogateescape"))
    else:
        app.out.flush()
        out.write(data)
        out.flush()


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.providerbody.errors import ProviderBodyError
    from asz_core.root.confined import LinkRefused
    from asz_core.sessiondata.errors import SessionDataError
    from asz_core.view import NoRounds, Session, ViewError

    try:
        hide = _hide(args, app)
    except ValueError as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_CONFIG
    root = app.config.root
    if args.session is None and args.body is not None:
        print("asz: --body needs a SESSION", file=app.err)
        return EXIT_CONFIG
    require_root(root, "view")
    if args.session is None:
        return _list(args, app)
    try:
        session = Session(root, args.session, hide=hide)
        if args.body is not None:
            _write(app, session.body(args.body))
            return EXIT_OK
        doc = session.document()
    except NoRounds as exc:
        print(f"asz: {exc} (`asz-pipeline parse {args.session}`)", file=app.err)
        return EXIT_FAILED
    except (ViewError, ProviderBodyError, SessionDataError, LinkRefused) as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_FAILED
    if args.json:
        _write(app, _dumps(doc) + b"\n")
    elif args.yaml:
        from asz_core.view.yamlform import render_yaml

        _write(app, render_yaml(doc).encode("utf-8", "backslashreplace"))
    else:
        _print_document(doc, app)
    summary = doc["summary"]
    if summary["state"] != "verified":
        print(f"asz: session {args.session} is {summary['state']}: {'; '.join(summary['problems'])} "
              f"(`asz-pipeline verify {args.session}` says more)", file=app.err)
        return EXIT_FAILED
    return EXIT_OK


def _list(args: argparse.Namespace, app: App) -> int:
    from asz_core.view import list_sessions

    root = app.config.root
    rows = list_sessions(root)
    if args.json:
        _write(app, _dumps({"root": str(root), "sessions": rows}) + b"\n")
        return EXIT_OK
    unparsed = 0
    for row in rows:
        if not row["rounds"]:
            unparsed += 1
            print(f"{row['id']}  not parsed", file=app.out)
            continue
        span = f"{_when(row['from'])} {_when(row['to'])}"
        print(f"{row['id']}  {span}  rounds={row['rounds']} talks={row['talks']} steps={row['steps']} "
              f"streams={row['streams']}  {row['title']}".rstrip(), file=app.out)
    print(f"view: root={root} sessions={len(rows)}", file=app.out)
    if not rows:
        print(f"note: no session has landed in {root} yet; `asz-pipeline run` lands them", file=app.err)
    elif unparsed:
        print(f"note: {unparsed} session(s) have no round yet; `asz-pipeline parse` writes them", file=app.err)
    return EXIT_OK


def _when(ms: int) -> str:
    """Unix milliseconds as an RFC 3339 time, ``-`` for none."""
    if not ms:
        return "-"
    from asz_core.sessiondata.times import format_instant

    return format_instant(ms * 1_000_000)


def _print_document(doc: dict[str, Any], app: App) -> None:
    summary, out = doc["summary"], app.out
    print(f"conversation {doc['conversation']}  {summary['title']}".rstrip(), file=out)
    print(f"  {_when(summary['from'])} .. {_when(summary['to'])}  round {doc['head']['round']} "
          f"({doc['head']['digest'][:12]})  {summary['state']}", file=out)
    for problem in summary["problems"]:
        print(f"  problem: {problem}", file=out)
    counts = ("talks", "steps", "streams", "segments", "rounds", "unresolved", "changes", "provider_bodies",
              "captured_prompts")
    print("  " + " ".join(f"{k}={summary[k]}" for k in counts), file=out)
    if summary["withheld"]:
        print("  withheld: " + " ".join(f"{k}={v}" for k, v in summary["withheld"].items()), file=out)
    skeletons = [f for f in doc["files"] if f["file"].endswith(".sk")]
    if skeletons:  # retention: the structure stays, the content of these files is gone
        print(f"  removed: the content of {len(skeletons)} of {len(doc['files'])} file(s) "
              f"(seq {', '.join(str(f['seq']) for f in skeletons)}); only their skeletons remain", file=out)
    for stream in doc["streams"]:
        parent = f" parent={stream['parent']}" if stream["parent"] else ""
        print(f"stream {stream['name']} ({stream['role']}, {stream['records']} records, {stream['steps']} steps)"
              f"{parent}  {stream['label']}".rstrip(), file=out)
    for talk in [*doc["talks"], *doc["loose"]]:
        words = [talk["id"], _when(talk.get("from", talk["at"])), f"runs={talk.get('runs', 0)}",
                 f"steps={talk.get('steps', 0)}", f"tools={talk.get('tools', 0)}",
                 _line(talk.get("label", talk.get("text", "")))]
        print("  ".join(w for w in words if w), file=out)


def _line(text: str) -> str:
    """A text on one line, short enough to scan."""
    flat = " ".join(text.split())
    return flat if len(flat) <= 100 else flat[:99] + "…"
