"""libc's calls that Python's ``os`` lacks and a root's operations use (``renameat2``,
``syscall`` for ``openat2``, ``syncfs``, ``sync_file_range``), each looked up once by the module
that calls it (which keeps it in a global of its own, loaded on first use).

They are taken from the process's own symbols, libc's among them: ``ctypes.util.find_library("c")``
would run ``ldconfig`` in a subprocess, in every worker process too, to name the same library.
"""

from __future__ import annotations

from typing import Any

__all__ = ["function"]


def function(name: str, argtypes: list[Any], restype: Any = None) -> Any:
    """libc's ``name``, taking ``argtypes`` and returning ``restype`` (``ctypes.c_int`` unless
    given), its ``errno`` kept for ``ctypes.get_errno``; ``None`` when there is none."""
    import ctypes

    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = argtypes
    fn.restype = ctypes.c_int if restype is None else restype
    return fn
