"""One session of a storage root, for the view: its document, and its provider bodies on demand.

The document is the ``asz.view`` document of the session's conversation (Claude Code's and
Kiro's adapters make one conversation per session, of the same id), built from its rounds and its
landed files by :func:`~asz_core.view.conversation.build_view`. It names each joined body by
``{seq, row}`` and never carries it. :meth:`Session.body` rebuilds one when asked: it reads the
session's ``provider_body`` files up to the one named, in seq order, once, and keeps what they
hold, since a body can refer to pieces and bodies of earlier files; a later body needs only the
files not read yet (:class:`~asz_core.providerbody.ProviderBodies`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from asz_core.providerbody.errors import BodyNotFound
from asz_core.providerbody.reader import ProviderBodies
from asz_core.providerbody.store import BodyEntry
from asz_core.root.layout import RefusedId, check_id
from asz_core.sessiondata.address import Address
from asz_core.view.conversation import build_view
from asz_core.view.errors import BodyWithheld, NotABody, UnknownSession
from asz_core.view.hide import check_hide

__all__ = ["BodyRefLike", "Session"]

#: A body's place: ``{"seq": …, "row": …}`` as the document writes it, an ``Address``,
#: a ``(seq, row)`` pair, or the text ``SEQ:ROW``.
BodyRefLike = Mapping[str, Any] | Address | tuple[int, int] | str


def _seq_row(ref: BodyRefLike) -> tuple[int, int]:
    if isinstance(ref, str):
        try:
            address = Address.parse(ref)
        except ValueError as exc:
            raise NotABody(str(exc)) from None
        if address.block is not None:
            raise NotABody(f"{ref!r} names a part; a body is named by SEQ:ROW")
        return address.seq, address.row
    if isinstance(ref, Address):
        return ref.seq, ref.row
    if isinstance(ref, tuple):
        return int(ref[0]), int(ref[1])
    seq, row = ref.get("seq"), ref.get("row")
    if type(seq) is not int or type(row) is not int:
        raise NotABody(f"{dict(ref)!r} is not a {{seq, row}} reference")
    return seq, row


class Session:
    """A session of the root at ``root``. ``UnknownSession`` when there is none of that id.

    ``hide`` is ``view.hide``: the flags whose steps the document withholds. While it names any,
    no provider body is listed or handed out (a request carries the system prompt and the tool
    schemas whole).
    """

    def __init__(self, root: Path, session_id: str, *, hide: Iterable[str] = ()) -> None:
        try:
            check_id(session_id, "session id")
        except RefusedId:
            raise UnknownSession(f"{session_id!r} cannot name a session") from None
        if session_id.startswith(("_", ".")) or not (root / session_id).is_dir():
            raise UnknownSession(f"no session {session_id!r} in {root}; "
                                 f"`asz-pipeline view` lists the sessions there")
        self.root = root
        self.id = session_id
        self.dir = root / session_id
        self.hide = check_hide(hide)
        self._bodies: ProviderBodies | None = None

    def document(self) -> dict[str, Any]:
        """The ``asz.view`` document of the session's conversation (built afresh each time);
        :class:`~asz_core.view.errors.NoRounds` until a parse has written a round."""
        return build_view(self.root, self.id, hide=self.hide)

    @property
    def provider_bodies(self) -> ProviderBodies:
        """The session's bodies, read lazily and kept between calls."""
        if self._bodies is None:
            self._bodies = ProviderBodies(self.dir)
        return self._bodies

    def entry(self, ref: BodyRefLike) -> BodyEntry:
        """What the session holds about the body at ``ref``: its manifest and whether it rebuilds."""
        if self.hide:
            raise BodyWithheld(f"view.hide withholds {', '.join(self.hide)}, which provider bodies "
                               f"carry; no body is handed out while it is set")
        seq, row = _seq_row(ref)
        try:
            return self.provider_bodies.entry(seq, row)
        except BodyNotFound:
            raise NotABody(f"{seq}:{row} is not a provider body of session {self.id}; "
                           f"the document lists each call's bodies under provider_bodies") from None

    def body(self, ref: BodyRefLike) -> bytes:
        """The exact bytes of the body at ``ref``.

        Raises :class:`NotABody`, :class:`BodyWithheld`, and the
        :class:`~asz_core.providerbody.ProviderBodyError` kinds: ``BodyTooLarge`` when a piece
        of it was taken out (use :meth:`body_from`), ``BodyUnavailable`` when only a skeleton is
        kept, ``BodyDamaged`` when it does not rebuild.
        """
        self.entry(ref)
        seq, row = _seq_row(ref)
        return self.provider_bodies.body(seq, row)

    def body_from(self, ref: BodyRefLike, other_copy: bytes) -> bytes:
        """The body at ``ref`` with ``other_copy`` (such as the file the runtime wrote) standing
        in for whatever was taken out, each piece checked against its digest."""
        self.entry(ref)
        seq, row = _seq_row(ref)
        return self.provider_bodies.body_from(seq, row, other_copy)
