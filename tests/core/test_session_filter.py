"""The session filter's answer for every slug at once agrees with its answer for each."""

from __future__ import annotations

import pytest

from asz_core.filters import SessionFilter

SLUGS = ["-home-marco-projects-spotter", "-private-tmp-x", "-Users-ingo-projects-irrlicht"]


@pytest.mark.parametrize(("include", "exclude", "every"), [
    ((), (), True),
    (("/home/marco/**",), (), False),
    ((), ("-private-tmp*",), False),
    (("*",), ("/nowhere",), False),
])
def test_a_filter_admits_every_slug_only_when_no_entry_is_set(include: tuple[str, ...], exclude: tuple[str, ...],
                                                              every: bool) -> None:
    session_filter = SessionFilter.of(include, exclude)
    assert session_filter.admits_every_slug is every
    if every:
        assert all(session_filter.admits_slug(slug) for slug in SLUGS)


def test_a_filter_with_entries_still_judges_each_slug() -> None:
    session_filter = SessionFilter.of(("/home/marco/**",), ("-private-tmp*",))
    assert [session_filter.admits_slug(slug) for slug in SLUGS] == [True, False, False]
