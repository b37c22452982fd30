"""The methods ``dataclasses`` writes for each class, compiled once and kept, not on every start-up.

For every class it decorates, ``dataclasses`` writes the source of ``__init__``, ``__repr__``,
``__eq__`` (and, frozen, ``__setattr__``, ``__delattr__``, ``__hash__``) and compiles it: at
every start-up, for every dataclass of every module imported, the largest share of a no-op
pass's start-up that is not a system call (``benchmarks/README.md``). The text it compiles is the
whole input of that compilation, so the code compiled from it can be kept under it:

1. :func:`install` (the console script, before anything defines a dataclass) reads the kept
   code, and makes ``dataclasses`` take a text's code from it; a text not in it is compiled as
   ``dataclasses`` would (no inherited ``__future__`` flags, the same ``<string>`` file name).
2. The file is taken only when it is the running user's and no one else can write it, was written
   by this very interpreter (``sys.version``), and holds only texts and code objects; anything
   else is read as empty.
3. :func:`save` (the same process, at its end) writes the file again only when a text was
   compiled: what it held and what was compiled, or, past :data:`KEEP` texts (classes changed
   again and again), only the texts this run used. Written owner-only, whole, replaced by
   rename; a cache that cannot be written is left as it is.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
from types import CodeType

__all__ = ["KEEP", "install", "save"]

#: texts kept at most (asz's dataclasses write about 300)
KEEP = 4000

_FILE = f"dataclasses-{sys.implementation.cache_tag}.marshal"

#: the kept code, by the text it was compiled from
_kept: dict[str, CodeType] = {}
#: the texts this process compiled or took, and their code
_used: dict[str, CodeType] = {}
_compiled = False


def _path() -> str:
    from asz_core import configcache

    return os.path.join(configcache.cache_base(), "code", _FILE)


def _read(path: str) -> dict[str, CodeType]:
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return {}
            version, codes = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if version != sys.version or not isinstance(codes, dict):
        return {}
    if not all(isinstance(k, str) and isinstance(v, CodeType) for k, v in codes.items()):
        return {}
    return codes


def _exec(source: str | CodeType, globals: dict[str, object] | None = None,
          locals: dict[str, object] | None = None) -> None:
    """``exec`` as ``dataclasses`` calls it, with the kept code of a text it has seen."""
    global _compiled
    if isinstance(source, str):
        code = _kept.get(source)
        if code is None:
            # what exec(source) compiles in dataclasses, whose module has no __future__ imports
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _compiled = True
        _used[source] = code
        source = code
    if globals is None:  # where exec, called in dataclasses without globals, would run it
        globals = vars(sys.modules["dataclasses"])
    exec(source, globals, locals)


def install() -> None:
    """Make ``dataclasses`` compile each text once (this process's console script only)."""
    import dataclasses

    _kept.update(_read(_path()))
    setattr(dataclasses, "exec", _exec)  # noqa: B010 - shadows the builtin in that module alone


def save() -> None:
    """Keep what this process compiled, when it compiled anything."""
    if not _compiled:
        return
    path = _path()
    with contextlib.suppress(OSError, ValueError):
        kept = {**_kept, **_used} if len(_kept) + len(_used) <= KEEP else _used
        data = marshal.dumps((sys.version, kept))
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temp = f"{path}.tmp-{os.getpid()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
