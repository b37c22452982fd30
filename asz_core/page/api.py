"""The page's JSON API, as a pure function of a GET request to a status and a body.

Upstream's paths and shapes, so a client written for upstream's API reads this one:

=====================================  ==========================================================
``/api/status``                        the mode, the root, the last and next refresh, the last pass
``/api/conversations``                 one row per conversation, newest first (``?q=`` keeps the
                                       rows whose text holds every word: this page's addition)
``/api/c/{id}/view``                   upstream's ``asz.view`` document, less what is withheld
``/api/c/{id}/record/{seq}/{row}``     one landed record, its content withheld when it carries a
                                       withheld flag
``/api/c/{id}/files?session=&seq=``    provider-body files whole, base64, at most 32
``/api/glossary``                      the vocabulary the root's files were read in
=====================================  ==========================================================

and this page's own: ``/api/c/{id}/body/{seq}/{row}`` (one provider body rebuilt, the exact
request or response of a call), ``/api/c/{id}/additions`` (what the page shows that upstream's
document does not carry: the prompts no node shows, each call's model) and ``/api/usage?by=``
(the figures ``asz-pipeline usage`` prints).

The rules, in the order they are applied:

1. Only GET (and HEAD) is answered; there is no endpoint that writes.
2. A query that does not parse is 400. So is a key whose letters alone spell ``hide`` other than
   ``hide`` itself (``Hide``, ``hide[]``): either would otherwise read as no ``hide`` at all.
3. ``hide`` (comma-separated, or given more than once) adds to the instance's ``view.hide`` and
   never takes away; a name that cannot be withheld is 400.
4. A path or id that names nothing is 404, before anything is read.
5. While anything is withheld no provider body leaves the server: 403.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl

from asz_core.glossary import Glossary
from asz_core.page.catalogue import Catalogue
from asz_core.page.errors import BadRequest, NotFound, PageError
from asz_core.page.prices import PriceTable
from asz_core.page.watch import Watcher

__all__ = ["JSON", "Response", "handle"]

JSON: Final = "application/json; charset=utf-8"
_SEGMENT: Final = r"([^/]+)"
_NUMBER: Final = r"([0-9]{1,9})"
_ROUTES: Final = [
    (re.compile(r"/api/status"), "status"),
    (re.compile(r"/api/conversations"), "conversations"),
    (re.compile(r"/api/glossary"), "glossary"),
    (re.compile(r"/api/usage"), "usage"),
    (re.compile(rf"/api/c/{_SEGMENT}/view"), "view"),
    (re.compile(rf"/api/c/{_SEGMENT}/record/{_NUMBER}/{_NUMBER}"), "record"),
    (re.compile(rf"/api/c/{_SEGMENT}/body/{_NUMBER}/{_NUMBER}"), "body"),
    (re.compile(rf"/api/c/{_SEGMENT}/files"), "files"),
    (re.compile(rf"/api/c/{_SEGMENT}/additions"), "additions"),
]
_BY: Final = ("day", "month", "session", "model", "project")

#: What Session Data defines itself, one line each, for the record the page shows.
_FIELDS: Final = {
    "ord": "the record's position in its source, from 1",
    "off": "the byte offset of the record's source line",
    "sha": "the first 12 hex digits of the SHA-256 of the source line",
    "bytes": "the size of the source line, or of a part's original content",
    "from": "who produced the record: agent, external or runtime",
    "time": "when the record says it happened (RFC 3339)",
    "flags": "named facts about the record (finished, system_prompt, tool_schemas, ...)",
    "usage": "the token counts the provider reported: in, out, cache_read, cache_write",
    "parts": "the record's content, in order: text, reasoning, call, result, media, data, unknown",
    "state": "whether a part's content is available, or why not",
    "dropped": "what the adapter left out of the record, with its size and why",
}


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = JSON


def _json(value: Any, status: int = 200) -> Response:
    data = json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return Response(status, data)


def _error(exc: PageError) -> Response:
    return _json({"error": str(exc), "status": exc.status}, exc.status)


def _query(raw: str) -> dict[str, list[str]]:
    """Rule 2 and the parse: each key with its values, in order."""
    if not raw:
        return {}
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=True, errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the query does not parse") from None
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        if key != "hide" and re.sub(r"[^a-z]", "", key.lower()) == "hide":
            raise BadRequest(f"{key!r} is not how this API is told what to withhold: use hide=NAME,NAME")
        out.setdefault(key, []).append(value)
    return out


def _asked_hide(query: dict[str, list[str]]) -> list[str]:
    return [name.strip() for value in query.get("hide", []) for name in value.split(",")]


def _one(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    if not values:
        return None
    if len(values) > 1:
        raise BadRequest(f"{key} given {len(values)} times")
    return values[0]


def handle(catalogue: Catalogue, method: str, path: str, raw_query: str, *, watcher: Watcher | None = None,
           glossaries: Sequence[Glossary] = (), prices: PriceTable | None = None) -> Response:
    """The answer to ``method path?raw_query`` (``path`` already percent-decoded); ``watcher`` runs
    the passes under ``serve --watch``; ``glossaries`` are the installed adapters'
    (:func:`asz_core.glossary.gather`); ``prices`` what ``/api/usage`` prices tokens at (the
    packaged table unless given)."""
    if method not in ("GET", "HEAD"):
        return _json({"error": f"{method} is not served: this page only reads", "status": 405}, 405)
    try:
        query = _query(raw_query)
        for pattern, name in _ROUTES:
            match = pattern.fullmatch(path)
            if match is not None:
                return _route(catalogue, name, match.groups(), query, watcher, glossaries, prices)
        raise NotFound(f"no API at {path}")
    except PageError as exc:
        return _error(exc)


def _route(catalogue: Catalogue, name: str, groups: tuple[str, ...], query: dict[str, list[str]],
           watcher: Watcher | None, glossaries: Sequence[Glossary], prices: PriceTable | None) -> Response:
    if name == "status":
        return _json(_status(catalogue, watcher))
    if name == "conversations":
        words = _one(query, "q")
        rows = catalogue.conversations()
        if words:
            keep = set(catalogue.search(words))
            rows = [r for r in rows if r["id"] in keep]
        return _json(rows)
    if name == "glossary":
        return _json(_glossary(catalogue, _one(query, "dialect"), glossaries))
    if name == "usage":
        from asz_core.page.usage import usage_report

        by = _one(query, "by") or "day"
        if by not in _BY:
            raise BadRequest(f"by must be one of {', '.join(_BY)}")
        calls = [c for d in catalogue.digests() for c in d.calls]
        return _json(usage_report(calls, by, prices or PriceTable.packaged()))
    conversation = groups[0]
    hide = catalogue.withheld(_asked_hide(query))
    if name == "view":
        return _json(catalogue.document(conversation, hide))
    if name == "additions":
        return _json(catalogue.additions(conversation, hide))
    if name == "record":
        return _json(catalogue.record(conversation, int(groups[1]), int(groups[2]), hide))
    if name == "body":
        return Response(200, catalogue.body(conversation, int(groups[1]), int(groups[2]), hide),
                        "application/octet-stream")
    session = _one(query, "session")
    if session is None:
        raise BadRequest("files needs session=ID")
    seqs: list[int] = []
    for value in query.get("seq", []):
        for item in value.split(","):
            if not re.fullmatch(r"[0-9]{1,9}", item):
                raise BadRequest(f"seq {item!r} is not a sequence number")
            seqs.append(int(item))
    return _json(catalogue.files(conversation, session, seqs, hide))


def _status(catalogue: Catalogue, watcher: Watcher | None) -> dict[str, Any]:
    """Upstream's keys (``mode``, ``source``, ``last_refresh``, ``next_refresh``, the count), then
    this page's. ``mode`` is upstream's name for what the process does: ``view`` only reads,
    ``server`` also collects. ``last_refresh`` is when the last pass ended under ``--watch``, and
    otherwise when a file last landed in the root (``last_landed``), which the page polls to redraw."""
    digests = catalogue.digests()
    newest = max((d.last_ns or 0 for d in digests), default=0)
    landed = catalogue.last_landed_ms()
    out: dict[str, Any] = {"mode": "view" if watcher is None else "server", "source": str(catalogue.root),
                           "last_refresh": landed, "next_refresh": None, "conversations": len(digests),
                           "last_activity": newest // 1_000_000 or None, "last_landed": landed,
                           "withheld": list(catalogue.hide)}
    if watcher is not None:
        out.update(watcher.status())
    return out


def _glossary(catalogue: Catalogue, dialect: str | None, glossaries: Sequence[Glossary]) -> dict[str, Any]:
    seen: dict[str, None] = {}
    for digest in sorted(catalogue.digests(), key=lambda d: (d.first_ns is None, d.first_ns or 0)):
        if digest.dialect:
            seen.setdefault(digest.dialect, None)
    names = list(seen)
    if dialect is not None and dialect not in seen:
        raise NotFound(f"no landed file of this root is read in dialect {dialect!r}")
    chosen = dialect if dialect is not None else (names[0] if names else "")
    declared = next((g for g in glossaries if g.dialect == chosen), None)
    terms = {} if declared is None else {
        t.model: {"native": t.native, "where": t.where, "note": t.note} for t in declared.terms}
    return {"dialect": chosen, "dialects": [n for n in names if n != chosen], "terms": terms, "fields": _FIELDS}
