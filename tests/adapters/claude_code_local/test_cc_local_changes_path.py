"""The path a ``changes/1`` record names: relative to the line's ``cwd`` when it lies under it.

Most edits name a file under the working directory, written cleanly, and take the short way
(the text after ``cwd/``); every other pair is worked out as Go's ``filepath.Rel`` would. Both
ways must give the same path for any pair of texts.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from asz_adapters.claude_code_local.changes import _relative, go_rel
from tests.helpers import examples

names = st.sampled_from(["a", "b", "src", ".", "..", "", ".git", "a.b", "..x", "é"])
paths = st.builds(lambda rooted, parts, slash: ("/" if rooted else "") + "/".join(parts) + ("/" if slash else ""),
                  st.booleans(), st.lists(names, max_size=6), st.booleans())


def _the_long_way(path: str, cwd: str) -> str:
    if not cwd:
        return path
    rel = go_rel(cwd, path)
    return rel if rel is not None and not rel.startswith("..") else path


@settings(max_examples=examples(400), deadline=None)
@given(paths, paths)
def test_a_path_is_named_as_go_names_it_relative_to_the_working_directory(path: str, cwd: str) -> None:
    assert _relative(path, cwd) == _the_long_way(path, cwd)


@settings(max_examples=examples(200), deadline=None)
@given(paths, st.lists(names, min_size=1, max_size=4))
def test_a_file_under_the_working_directory_is_named_as_go_names_it(cwd: str, below: list[str]) -> None:
    path = cwd.rstrip("/") + "/" + "/".join(below)
    assert _relative(path, cwd) == _the_long_way(path, cwd)


def test_a_clean_file_under_the_working_directory_is_the_text_after_it() -> None:
    assert _relative("/Users/me/project/src/app.py", "/Users/me/project") == "src/app.py"
    assert _relative("/Users/me/project", "/Users/me/project") == "."
    assert _relative("/Users/me/other/x.py", "/Users/me/project") == "/Users/me/other/x.py"
    assert _relative("/Users/me/project/./src//app.py", "/Users/me/project/") == "src/app.py"
