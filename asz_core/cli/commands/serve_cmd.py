"""``asz-pipeline serve [ADDR]``: the page over the root, read-only, on loopback by default.

The list of conversations at ``/``, one conversation at ``/c/{id}``, upstream's JSON API under
``/api/``. ``view.hide`` is withheld from every reader. An address that is not loopback is
refused unless ``--allow-remote`` says so: the page shows whole sessions to whoever reaches it.
"""

from __future__ import annotations

import argparse
import threading

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="serve the root as a local web page (read-only)",
                       description="Serve the root's conversations as a page: the list at /, one "
                                   "conversation at /c/ID, upstream's JSON API under /api/. Reads "
                                   "only; withholds what view.hide names from every reader.")
    p.add_argument("addr", nargs="?", default="127.0.0.1:8787", metavar="ADDR",
                   help="HOST:PORT to listen on (default 127.0.0.1:8787)")
    p.add_argument("--allow-remote", action="store_true",
                   help="listen on an address that is not loopback (anyone who reaches it reads every session)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.glossary import gather
    from asz_core.page.catalogue import Catalogue
    from asz_core.page.server import PageServer, parse_addr

    try:
        host, port = parse_addr(args.addr, allow_remote=args.allow_remote)
        hide = app.config.section("view").get("hide", [])
        catalogue = Catalogue(app.config.root, hide)
    except ValueError as exc:
        print(f"asz: {exc}", file=app.err)
        return EXIT_CONFIG
    if not catalogue.session_ids():
        # As upstream: an empty page would look like a broken one.
        print(f"asz: no sessions in {app.config.root}: run `asz-pipeline run` first", file=app.err)
        return EXIT_FAILED
    try:
        server = PageServer(catalogue, host, port, log=True, glossaries=gather(app.host))
    except OSError as exc:
        print(f"asz: cannot listen on {args.addr}: {exc}", file=app.err)
        return EXIT_FAILED
    print(f"serving {app.config.root} on {server.url}/ (read-only; Ctrl-C stops)", file=app.out, flush=True)
    # The list is read while the first visitor's browser starts, not after it asks.
    threading.Thread(target=catalogue.digests, name="asz-page-list", daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return EXIT_OK
