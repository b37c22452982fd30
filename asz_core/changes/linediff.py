"""The line diff a ``changes/1`` record carries when no patch was reported with the change.

It must give the hunks upstream's differ gives, line for line, so it follows the same method:

1. each side is split at ``\\n``; a final empty piece (the text ended with a newline) is not a
   line, and an empty text has no lines. A ``\\r`` stays on its line;
2. either side longer than 200,000 lines: no diff (``too_large``);
3. the edit script is Myers' shortest one, found in linear space: the common first and last
   lines of a range are equal runs, and the rest is split at the middle of its shortest path,
   searched from both ends at once (the forward search checks for overlap when the two sides
   differ in length by an odd number, the backward one when even), each half then done the same
   way; a range with no middle found is all removed, then all added;
4. adjacent runs of one kind are joined; every changed line is shown with up to 3 unchanged lines
   either side, and shown lines that touch form one hunk, in which removed lines come before the
   added ones of the same block;
5. a hunk starts at its first line on each side (counting from 1), or at the line before it when
   that side has no lines in the hunk (``-0,0`` for a created file).
"""

from __future__ import annotations

from itertools import repeat
from typing import Final

__all__ = ["CONTEXT", "MAX_LINES", "Hunk", "diff_lines", "split_lines"]

CONTEXT: Final = 3
MAX_LINES: Final = 200_000

_EQUAL: Final = 0
_DELETE: Final = 1
_INSERT: Final = 2


class Hunk:
    """One hunk of a line diff: where it starts and how many lines it spans on each side, and
    its lines. A plain class (docs/architecture.md, "Classes a pass imports")."""

    __slots__ = ("lines", "new_lines", "new_start", "old_lines", "old_start")

    def __init__(self, old_start: int, old_lines: int, new_start: int, new_lines: int, lines: list[str]) -> None:
        self.old_start = old_start
        self.old_lines = old_lines
        self.new_start = new_start
        self.new_lines = new_lines
        self.lines = lines


def split_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def diff_lines(before: list[str], after: list[str]) -> tuple[list[Hunk], int, int] | None:
    """``(hunks, additions, deletions)``; ``None`` when a side is too long to compare."""
    if len(before) > MAX_LINES or len(after) > MAX_LINES:
        return None
    return _hunks(before, after, _runs(before, after))


# A run is (kind, index in before, index in after, length).
_Run = tuple[int, int, int, int]


def _runs(a: list[str], b: list[str]) -> list[_Run]:
    """The edit script as runs, adjacent runs of one kind joined."""
    out: list[_Run] = []
    # A stack of work, last first: a range to compare ``(a_lo, a_hi, b_lo, b_hi)``, or a run
    # to emit. A range emits its common prefix at once, then its middle (the halves, left
    # first), then its common suffix, so runs come out in order without recursion.
    stack: list[tuple[bool, tuple[int, int, int, int]]] = [(False, (0, len(a), 0, len(b)))]
    while stack:
        is_run, item = stack.pop()
        if is_run:
            out.append(item)
            continue
        a_lo, a_hi, b_lo, b_hi = item
        prefix = 0
        while a_lo + prefix < a_hi and b_lo + prefix < b_hi and a[a_lo + prefix] == b[b_lo + prefix]:
            prefix += 1
        if prefix:
            out.append((_EQUAL, a_lo, b_lo, prefix))
        a_lo, b_lo = a_lo + prefix, b_lo + prefix
        suffix = 0
        while a_lo < a_hi - suffix and b_lo < b_hi - suffix and a[a_hi - 1 - suffix] == b[b_hi - 1 - suffix]:
            suffix += 1
        later: list[tuple[bool, tuple[int, int, int, int]]] = []
        if suffix:
            later.append((True, (_EQUAL, a_hi - suffix, b_hi - suffix, suffix)))
        mid_a, mid_b = a_hi - suffix, b_hi - suffix
        if a_lo == mid_a and b_lo == mid_b:
            pass  # nothing between the common lines
        elif a_lo == mid_a:
            out.append((_INSERT, a_lo, b_lo, mid_b - b_lo))
        elif b_lo == mid_b:
            out.append((_DELETE, a_lo, b_lo, mid_a - a_lo))
        else:
            middle = _middle(a, b, a_lo, mid_a, b_lo, mid_b)
            if middle is None:
                out.append((_DELETE, a_lo, b_lo, mid_a - a_lo))
                out.append((_INSERT, a_lo, b_lo, mid_b - b_lo))
            else:
                x, y = middle
                later.append((False, (a_lo + x, mid_a, b_lo + y, mid_b)))
                later.append((False, (a_lo, a_lo + x, b_lo, b_lo + y)))
        stack.extend(later)
    return _joined(out)


def _middle(a: list[str], b: list[str], a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> tuple[int, int] | None:
    """Where the range's shortest edit path crosses its middle, relative to the range's start;
    ``None`` when the search ends without meeting."""
    n, m = a_hi - a_lo, b_hi - b_lo
    max_d = (n + m + 1) // 2
    offset = max_d
    size = 2 * max_d + 2
    forward = [-1] * size
    backward = [-1] * size
    forward[offset + 1] = backward[offset + 1] = 0
    delta = n - m
    odd = delta % 2 != 0
    f_start = f_end = b_start = b_end = 0
    for d in range(max_d):
        for k in range(-d + f_start, d - f_end + 1, 2):
            at = offset + k
            down = k == -d or (k != d and forward[at - 1] < forward[at + 1])
            x = forward[at + 1] if down else forward[at - 1] + 1
            y = x - k
            while x < n and y < m and a[a_lo + x] == b[b_lo + y]:
                x += 1
                y += 1
            forward[at] = x
            if x > n:
                f_end += 2
            elif y > m:
                f_start += 2
            elif odd:
                other = offset + delta - k
                if 0 <= other < size and backward[other] != -1 and x >= n - backward[other]:
                    return x, y
        for k in range(-d + b_start, d - b_end + 1, 2):
            at = offset + k
            down = k == -d or (k != d and backward[at - 1] < backward[at + 1])
            x = backward[at + 1] if down else backward[at - 1] + 1
            y = x - k
            while x < n and y < m and a[a_lo + n - x - 1] == b[b_lo + m - y - 1]:
                x += 1
                y += 1
            backward[at] = x
            if x > n:
                b_end += 2
            elif y > m:
                b_start += 2
            elif not odd:
                other = offset + delta - k
                if 0 <= other < size and forward[other] != -1:
                    fx = forward[other]
                    if fx >= n - x:
                        return fx, offset + fx - other
    return None


def _joined(runs: list[_Run]) -> list[_Run]:
    out: list[_Run] = []
    for run in runs:
        if run[3] == 0:
            continue
        if out and out[-1][0] == run[0]:
            last = out[-1]
            out[-1] = (last[0], last[1], last[2], last[3] + run[3])
        else:
            out.append(run)
    return out


def _hunks(a: list[str], b: list[str], runs: list[_Run]) -> tuple[list[Hunk], int, int]:
    lines: list[tuple[int, int, int]] = []  # (kind, index in a, index in b), one per line
    additions = deletions = 0
    # each run's lines, and which lines are shown (a changed run and its context), are laid
    # out a run at a time: a created or rewritten file is all one run
    windows: list[tuple[int, int]] = []
    for kind, ai, bi, count in runs:
        if kind == _EQUAL:
            lines.extend(zip(repeat(_EQUAL, count), range(ai, ai + count), range(bi, bi + count), strict=True))
            continue
        windows.append((len(lines), len(lines) + count))
        if kind == _DELETE:
            lines.extend(zip(repeat(_DELETE, count), range(ai, ai + count), repeat(bi, count), strict=True))
            deletions += count
        else:
            lines.extend(zip(repeat(_INSERT, count), repeat(ai, count), range(bi, bi + count), strict=True))
            additions += count
    shown = [False] * len(lines)
    for first, end in windows:
        low, high = max(0, first - CONTEXT), min(len(lines), end + CONTEXT)
        shown[low:high] = [True] * (high - low)
    hunks: list[Hunk] = []
    i = 0
    while i < len(lines):
        if not shown[i]:
            i += 1
            continue
        j = i
        while j < len(lines) and shown[j]:
            j += 1
        _, first_a, first_b = lines[i]
        hunk = Hunk(first_a + 1, 0, first_b + 1, 0, [])
        added: list[str] = []
        for kind, ai, bi in lines[i:j]:
            if kind == _EQUAL:
                hunk.lines.extend(added)
                added = []
                hunk.lines.append(" " + a[ai])
                hunk.old_lines += 1
                hunk.new_lines += 1
            elif kind == _DELETE:
                hunk.lines.append("-" + a[ai])
                hunk.old_lines += 1
            else:
                added.append("+" + b[bi])
                hunk.new_lines += 1
        hunk.lines.extend(added)
        if hunk.old_lines == 0:
            hunk.old_start -= 1
        if hunk.new_lines == 0:
            hunk.new_start -= 1
        hunks.append(hunk)
        i = j
    return hunks, additions, deletions
