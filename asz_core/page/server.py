"""``asz-pipeline serve``: the page and its API over HTTP, from the standard library.

1. It listens on loopback (``127.0.0.1:8787`` by default); any other address is refused unless
   the caller says so explicitly, since the page shows whole sessions to whoever reaches it.
2. A request whose ``Host`` is not the address it listens on is refused (403) while it listens on
   loopback, so a web page elsewhere cannot reach it through a name that resolves to 127.0.0.1.
3. Only GET and HEAD are answered. ``/`` and ``/c/{id}`` are the page (one HTML shell), a fixed
   list of packaged files is under ``/static/``, ``/api/`` is :mod:`asz_core.page.api`; anything
   else is 404. Nothing is read from the network and no path from a request reaches the file
   system except through the catalogue.
4. Every response carries a Content-Security-Policy that lets the page run only its own script and
   style, fetch only from its own address, and be framed by nobody; and ``nosniff``, no referrer,
   no caching.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Final
from urllib.parse import unquote, urlsplit

from asz_core.glossary import Glossary
from asz_core.page.api import Response, handle
from asz_core.page.assets import ASSETS, static_file
from asz_core.page.catalogue import Catalogue
from asz_core.page.prices import PriceTable
from asz_core.page.watch import Watcher

__all__ = ["CSP", "DEFAULT_ADDR", "NotLoopback", "PageServer", "parse_addr"]

DEFAULT_ADDR: Final = "127.0.0.1:8787"
CSP: Final = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
              "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class NotLoopback(ValueError):
    """The address is not a loopback one and serving beyond this machine was not asked for."""


def parse_addr(addr: str, *, allow_remote: bool = False) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT``; a bare ``:PORT`` is loopback) as a host and a port."""
    host, sep, port_text = addr.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"{addr!r} is not HOST:PORT")
    host = host.strip("[]") or "127.0.0.1"
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            raise ValueError(f"{host!r} is not an IP address (or localhost)") from None
        if not loopback and not allow_remote:
            raise NotLoopback(f"{host} is not a loopback address: the page shows whole sessions to "
                              f"whoever reaches it; pass --allow-remote to serve beyond this machine")
    return host, int(port_text)


class _Handler(BaseHTTPRequestHandler):
    server: PageServer
    server_version = "asz-page"
    sys_version = ""

    def log_message(self, format: str, *args: object) -> None:
        if self.server.log:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _refuse(self) -> None:
        self._send(Response(405, b'{"error":"this page only reads","status":405}'), True)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    def _answer(self, *, send_body: bool) -> None:
        if not self.server.host_allowed(self.headers.get("Host", "")):
            self._send(Response(403, b'{"error":"unexpected Host","status":403}'), send_body)
            return
        parts = urlsplit(self.path)
        try:
            path = unquote(parts.path, errors="strict") if "%" in parts.path else parts.path
        except UnicodeDecodeError:
            self._send(Response(400, b'{"error":"the path is not UTF-8","status":400}'), send_body)
            return
        if path.startswith("/api/"):
            self._send(handle(self.server.catalogue, self.command, path, parts.query,
                              watcher=self.server.watcher, glossaries=self.server.glossaries,
                              prices=self.server.prices), send_body)
        elif path == "/" or (path.startswith("/c/") and path.count("/") == 2 and len(path) > 3):
            self._send(Response(200, static_file("page.html"), ASSETS["page.html"]), send_body)
        elif path.startswith("/static/") and path[len("/static/"):] in ASSETS:
            name = path[len("/static/"):]
            self._send(Response(200, static_file(name), ASSETS[name]), send_body)
        else:
            self._send(Response(404, b'{"error":"not found","status":404}'), send_body)

    def _send(self, response: Response, send_body: bool) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        try:
            self.end_headers()
            if send_body:
                self.wfile.write(response.body)
        except (BrokenPipeError, ConnectionResetError):
            # the reader left (a tab closed, a page navigated away) before the answer was sent
            self.close_connection = True


class PageServer(ThreadingHTTPServer):
    """The page over ``catalogue`` on ``(host, port)``; port 0 takes a free one. ``watcher`` is the
    passes ``serve --watch`` runs beside it, which ``/api/status`` reports; ``prices`` what
    ``/api/usage`` prices tokens at."""

    daemon_threads = True

    def __init__(self, catalogue: Catalogue, host: str, port: int, *, log: bool = False,
                 glossaries: Sequence[Glossary] = (), watcher: Watcher | None = None,
                 prices: PriceTable | None = None) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), _Handler)
        self.catalogue = catalogue
        self.glossaries = glossaries
        self.watcher = watcher
        self.prices = prices
        self.log = log
        self.loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def host_allowed(self, host_header: str) -> bool:
        if not self.loopback:
            return True
        host, port = str(self.server_address[0]), self.server_address[1]
        return host_header in {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"{host}:{port}"}
