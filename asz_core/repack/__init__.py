"""``repack``: copy a root, or one session, into a new root cut to another file size.

Every record keeps its bytes and its order; only the files around them change. See
:mod:`asz_core.repack.cut` for the rules.
"""

from __future__ import annotations

from asz_core.repack.cut import RepackRefused, SessionRepack, repack_root

__all__ = ["RepackRefused", "SessionRepack", "repack_root"]
