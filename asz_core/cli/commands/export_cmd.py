"""``asz-pipeline export SESSION --format html|md [-o FILE]``: one conversation as one file.

What ``view.hide`` names is withheld (``--hide`` adds names); the HTML needs no network and runs
no script (:mod:`asz_core.page.export`). With no ``-o``, the file goes to standard output.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export",
                       help="write one conversation as a self-contained HTML or Markdown file",
                       description="Write SESSION's conversation as one file to share: prompts, replies, "
                                   "tool calls and results, child agents; what view.hide names withheld.")
    p.add_argument("session", metavar="SESSION")
    p.add_argument("--format", choices=("html", "md"), default="html")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="write here (owner-only) instead of standard output")
    p.add_argument("--hide", metavar="FLAGS", action="append",
                   help="also withhold these flags (system_prompt, tool_schemas; comma-separated)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.page.catalogue import Catalogue
    from asz_core.page.errors import BadRequest, PageError
    from asz_core.page.export import to_html, to_markdown

    asked = [w.strip() for item in args.hide or [] for w in item.split(",") if w.strip()]
    try:
        catalogue = Catalogue(app.config.root, app.config.section("view").get("hide", []))
        hide = catalogue.withheld(asked)
        doc, additions = catalogue.document(args.session, hide), catalogue.additions(args.session, hide)
    except (ValueError, BadRequest) as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_CONFIG
    except PageError as exc:
        print(f"asz: {exc}; `asz-pipeline view` lists the sessions", file=app.err)
        return EXIT_FAILED
    text = to_html(doc, additions) if args.format == "html" else to_markdown(doc, additions)
    if args.output is None:
        app.out.write(text)
        return EXIT_OK
    # Sessions are private: the file is created owner-only, and never replaces another.
    try:
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"asz: {args.output} exists; choose another name or remove it", file=app.err)
        return EXIT_FAILED
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {args.output}", file=app.err)
    return EXIT_OK
