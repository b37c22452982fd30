"""``asz_core.testing``'s in-process sdcheck: its nesting check answers as the tool's own does."""

from __future__ import annotations

import functools
import types
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from asz_core.testing import _bracket_count_first, _sdcheck_main
from tests.helpers import examples


def _tool(shared: Path) -> types.ModuleType:
    """The tool as the tests load it (its ``main``'s module), and its own nesting check apart."""
    main = _sdcheck_main(str(shared / "tools" / "sdcheck"))
    module = types.ModuleType("sdcheck_globals")
    module.__dict__.update(main.__globals__)
    return module


@functools.cache
def _own_check(shared: Path) -> types.FunctionType:
    """The tool's ``_depth_ok`` as its source defines it, unwrapped."""
    tool = str(shared / "tools" / "sdcheck")
    module = types.ModuleType("sdcheck_unwrapped")
    exec(compile(Path(tool).read_bytes(), tool, "exec"), module.__dict__)
    check: types.FunctionType = module._depth_ok
    return check


# brackets and quotes are what the walk reads; a backslash changes what a quote means
_nesting_bytes = st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"a", b","]), max_size=600)


@settings(max_examples=examples(250))
@given(pieces=_nesting_bytes, deep=st.integers(0, 300), quoted=st.booleans())
def test_the_bracket_count_first_answers_every_line_as_the_tools_own_check(
        shared: Path, pieces: list[bytes], deep: int, quoted: bool) -> None:
    own = _own_check(shared)
    limit = _tool(shared).MAX_DEPTH
    nested = b"[" * deep + b"".join(pieces) + b"]" * deep
    raw = b'{"s":"' + nested + b'"}' if quoted else nested
    assert _bracket_count_first(own, limit)(raw) == own(raw)


def test_the_loaded_tool_refuses_a_line_one_deeper_than_its_limit_and_not_one_quoted(shared: Path) -> None:
    tool = _tool(shared)
    limit = tool.MAX_DEPTH
    assert tool._depth_ok(b"[" * limit + b"]" * limit)
    assert not tool._depth_ok(b"[" * (limit + 1) + b"]" * (limit + 1))
    assert tool._depth_ok(b'["' + b"[" * (limit + 1) + b'"]')
    # an escaped backslash does not escape the quote after it: the brackets are outside the string
    assert not tool._depth_ok(b'["\\\\"' + b"[" * (limit + 1) + b"]" * (limit + 2))
