"""``asz-pipeline view [SESSION] [--body SEQ:ROW]``: what a session did, from the root alone.

With no session, one line per session of the root (id, label, first and last time, streams,
calls, provider bodies). With a session, its ``asz.view`` document (``--json``), or a summary of
its streams and calls for a person. With ``--body SEQ:ROW``, the exact bytes of one provider
body, rebuilt from the root. ``view.hide`` in ``asz.yaml`` withholds steps by flag; ``--hide``
overrides it for one command (``--hide none`` withholds nothing).
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
    p = sub.add_parser("view", help="show a session's streams and calls",
                       description="With no SESSION, list the root's sessions. With SESSION, show its "
                                   "asz.view document: streams, calls, each call's provider bodies "
                                   "joined. With --body SEQ:ROW, print one provider body's exact bytes.")
    p.add_argument("session", nargs="?", metavar="SESSION", help="the session to show")
    p.add_argument("--body", metavar="SEQ:ROW", type=_body_ref, help="print the provider body landed at SEQ:ROW")
    p.add_argument("--hide", metavar="FLAGS", action="append",
                   help=f"withhold steps with these flags ({_HIDEABLE_HELP}; comma-separated, "
                        f"or none); overrides view.hide")
    p.add_argument("--json", action="store_true", help="print JSON")
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
    from asz_core.providerbody.errors import BodyTooLarge, ProviderBodyError
    from asz_core.sessiondata.errors import SessionDataError
    from asz_core.view import Session, ViewError

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
    except BodyTooLarge as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_FAILED
    except (ViewError, ProviderBodyError, SessionDataError) as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_FAILED
    if args.json:
        _write(app, _dumps(doc) + b"\n")
    else:
        _print_document(doc, app)
    problems = doc["summary"]["problems"]
    if problems:
        print(f"asz: {problems} landed file(s) of session {args.session} do not read to a good closing "
              f"line; `asz-pipeline verify {args.session}` says which", file=app.err)
        return EXIT_FAILED
    return EXIT_OK


def _list(args: argparse.Namespace, app: App) -> int:
    from asz_core.view import list_sessions

    root = app.config.root
    rows = list_sessions(root)
    if args.json:
        _write(app, _dumps({"root": str(root), "sessions": rows}) + b"\n")
        return EXIT_OK
    for row in rows:
        span = f"{row.get('first_time', '-')} {row.get('last_time', '-')}"
        label = row.get("label", "")
        print(f"{row['id']}  {span}  streams={row['streams']} calls={row['calls']} "
              f"bodies={row['provider_bodies']}  {label}".rstrip(), file=app.out)
    print(f"view: root={root} sessions={len(rows)}", file=app.out)
    if not rows:
        print(f"note: no session has landed in {root} yet; `asz-pipeline run` lands them", file=app.err)
    return EXIT_OK


def _ref(body: dict[str, Any]) -> str:
    return f"{body['role']}={body['ref']['seq']}:{body['ref']['row']}"


def _print_document(doc: dict[str, Any], app: App) -> None:
    session, summary = doc["session"], doc["summary"]
    out = app.out
    print(f"session {session['id']}  {session.get('label', '')}".rstrip(), file=out)
    if "first_time" in session:
        print(f"  {session['first_time']} .. {session['last_time']}", file=out)
    if "hide" in session:
        print(f"  withheld: {', '.join(session['hide'])} (no provider bodies listed)", file=out)
    print("  " + " ".join(f"{k}={v}" for k, v in summary.items()), file=out)
    removed = [f for f in doc.get("files", []) if f.get("skeleton")]
    if removed:  # retention: the structure stays, the content of these files is gone
        print(f"  removed: the content of {len(removed)} of {len(doc['files'])} file(s) "
              f"(seq {', '.join(str(f['seq']) for f in removed)}); only their skeletons remain", file=out)
    for stream in doc["streams"]:
        parent = f" parent={stream['parent']}" if "parent" in stream else ""
        gap = " gap (no bodies joined)" if stream.get("gap") else ""
        print(f"stream {stream['id']} ({stream['role']}, {stream['records']} records){parent}{gap}  "
              f"{stream.get('label', '')}".rstrip(), file=out)
        for call in stream["calls"]:
            usage = " ".join(f"{k}={v}" for k, v in call.get("usage", {}).items())
            bodies = " ".join(_ref(b) for b in call.get("provider_bodies", []))
            words = [call["id"], call.get("model", "-"), call.get("time", "-"),
                     "finished" if call["finished"] else "unfinished", usage,
                     f"tools={len(call['tool_calls'])}", bodies]
            print("  " + "  ".join(w for w in words if w), file=out)
