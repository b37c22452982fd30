"""The view: a session's streams and calls, each call with its provider bodies joined.

* :func:`build_document` — the ``asz.view`` JSON document of a session, from its landed files
  only (:mod:`asz_core.view.document`);
* :class:`Session` — a session of a root: its document, and :meth:`Session.body` to rebuild one
  provider body on demand;
* :func:`list_sessions` — every session of a root, with its counts;
* :func:`join_bodies` — the join rules, on their own (:mod:`asz_core.view.joins`).

Nothing here knows a runtime: it reads Session Data fields (``call``, ``run``, ``child``,
flags, part kinds) and ``provider_body/1`` manifests only.
"""

from __future__ import annotations

from asz_core.view.conversation import FORMAT, VERSION, build_view
from asz_core.view.document import build_document
from asz_core.view.errors import BodyWithheld, NoRounds, NotABody, UnknownSession, ViewError
from asz_core.view.hide import HIDEABLE, check_hide
from asz_core.view.joins import BodyRef, CallSlot, join_bodies
from asz_core.view.listing import list_sessions
from asz_core.view.session import Session

__all__ = [
    "FORMAT",
    "HIDEABLE",
    "VERSION",
    "BodyRef",
    "BodyWithheld",
    "CallSlot",
    "NoRounds",
    "NotABody",
    "Session",
    "UnknownSession",
    "ViewError",
    "build_document",
    "build_view",
    "check_hide",
    "join_bodies",
    "list_sessions",
]
