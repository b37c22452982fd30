"""The view: a conversation as upstream's ``asz.view`` 1.0 document, and its provider bodies on demand.

* :func:`build_view` — the document of one conversation, built from its round chain and its
  landed files, withholding what ``hide`` names (:mod:`asz_core.view.conversation`);
* :class:`Session` — a session of a root: its document, and :meth:`Session.body` to rebuild one
  provider body on demand;
* :func:`list_sessions` — every session of a root, one line each from its head round.

Nothing here knows a runtime: it reads the fold (Session Flow) and Session Data fields (flags,
part kinds, ``changes/1`` and ``execution/1`` records) and ``provider_body/1`` manifests only.
"""

from __future__ import annotations

from asz_core.view.conversation import FORMAT, VERSION, build_view
from asz_core.view.errors import BodyWithheld, NoRounds, NotABody, UnknownSession, ViewError
from asz_core.view.hide import HIDEABLE, check_hide
from asz_core.view.listing import list_sessions
from asz_core.view.session import Session

__all__ = [
    "FORMAT",
    "HIDEABLE",
    "VERSION",
    "BodyWithheld",
    "NoRounds",
    "NotABody",
    "Session",
    "UnknownSession",
    "ViewError",
    "build_view",
    "check_hide",
    "list_sessions",
]
