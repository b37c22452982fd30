"""Printing for people: the pass line, sizes, and a progress display on a terminal."""

from __future__ import annotations

import time
from typing import TextIO

from asz_core.context import PassSummary

__all__ = ["ConsoleReporter", "human_bytes", "pass_fields", "pass_line", "plural", "print_warnings"]

#: warnings printed after a pass line without ``-v``
SHOWN_WARNINGS = 20


def print_warnings(warnings: list[str], err: TextIO, *, verbose: bool) -> None:
    """The warnings after a pass line: all of them with ``-v``, else the first few."""
    shown = warnings if verbose else warnings[:SHOWN_WARNINGS]
    for warning in shown:
        print(f"warning: {warning}", file=err)
    if len(warnings) > len(shown):
        print(f"warning: … and {len(warnings) - len(shown)} more (-v shows all)", file=err)


def plural(n: int, noun: str) -> str:
    """``1 session``, ``62 sessions``, ``2 bodies``."""
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else f"{n} {noun}s"


def human_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n}B"


def pass_fields(summary: PassSummary) -> str:
    """``sessions=44 sources=5867 landed=51 ...``: the pass line's counts."""
    return " ".join(f"{k}={human_bytes(v) if k == 'bytes' else v}" for k, v in summary.fields().items())


def pass_line(summary: PassSummary) -> str:
    """``[17:14:09] sessions=44 sources=5867 landed=51 ... (1.473s)``."""
    clock = time.strftime("%H:%M:%S", time.localtime(summary.started_ns / 1e9))
    dry = " dry-run" if summary.dry_run else ""
    return f"[{clock}] {pass_fields(summary)}{dry} ({summary.elapsed_s:.3f}s)"


class ConsoleReporter:
    """Warnings to stderr; on a terminal, a progress line for passes longer than a second."""

    def __init__(self, err: TextIO, *, verbose: bool = False) -> None:
        self.err = err
        self.verbose = verbose
        self.warnings: list[str] = []
        self._tty = err.isatty()
        self._started = time.monotonic()
        self._last = 0.0
        self._shown = False

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.verbose:
            self.clear()
            print(f"asz: {message}", file=self.err)

    def progress(self, adapter: str, done: int, total: int) -> None:
        if not self._tty:
            return
        now = time.monotonic()
        if now - self._started < 1.0 or (now - self._last < 0.2 and done != total):
            return
        self._last = now
        self._shown = True
        landed = f"{done}/{total}" if total else f"{done}"  # 0: the adapter yields its claims as it goes
        self.err.write(f"\r\x1b[K{adapter}: {landed} sessions")
        self.err.flush()

    def clear(self) -> None:
        if self._shown:
            self.err.write("\r\x1b[K")
            self.err.flush()
            self._shown = False
