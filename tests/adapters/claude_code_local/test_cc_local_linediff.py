"""The line diff behind a ``changes/1`` record with no patch of its own: shortest, and it rebuilds.

Its exact hunks for hand-worked cases are golden rows (``test_cc_local_golden.py``); here any two
texts are compared, and the hunks must turn the first into the second with the fewest lines
removed and added.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.changes.linediff import CONTEXT, MAX_LINES, Hunk, diff_lines, split_lines
from tests.helpers import examples

lines = st.lists(st.sampled_from(["a", "b", "c", "", "a\r"]), max_size=14)


def _apply(before: list[str], hunks: list[Hunk]) -> list[str]:
    out: list[str] = []
    at = 0  # lines of before used so far
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        out.extend(before[at:start])
        at = start
        for text in hunk.lines:
            if text.startswith((" ", "-")):
                assert before[at] == text[1:]
                at += 1
            if text.startswith((" ", "+")):
                out.append(text[1:])
    return out + before[at:]


def _common(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence."""
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b, start=1):
            previous, row[j] = row[j], previous + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


@settings(max_examples=examples(300))
@given(lines, lines)
def test_the_hunks_rebuild_the_after_side_with_the_fewest_changed_lines(before: list[str], after: list[str]) -> None:
    found = diff_lines(before, after)
    assert found is not None
    hunks, additions, deletions = found
    assert _apply(before, hunks) == after
    assert additions + deletions == len(before) + len(after) - 2 * _common(before, after)
    assert additions == sum(t.startswith("+") for h in hunks for t in h.lines)
    assert deletions == sum(t.startswith("-") for h in hunks for t in h.lines)
    for hunk in hunks:  # no hunk holds more unchanged lines in a row than context allows
        run = 0
        for text in hunk.lines:
            run = run + 1 if text.startswith(" ") else 0
            assert run <= 2 * CONTEXT


def test_a_text_ending_in_a_newline_has_no_empty_last_line() -> None:
    assert split_lines("") == [] and split_lines("a\n") == ["a"] and split_lines("a") == ["a"]
    assert split_lines("a\r\n\n") == ["a\r", ""]


def test_a_side_past_the_line_limit_is_not_compared() -> None:
    assert diff_lines(["x"] * (MAX_LINES + 1), []) is None
    assert diff_lines(["x"] * MAX_LINES, ["x"] * MAX_LINES) == ([], 0, 0)
