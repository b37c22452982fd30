"""The order in which a pass sends its claims to the workers (largest first within each block of
a few groups' worth, every claim once, with the index that merges it back in claim order), and
in which it ends them (all asked, then each waited for)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from asz_core import workers
from asz_core.plugin import SessionClaim, SettledBy


def _claim(tmp_path: Path, session: str, *sizes: int) -> SessionClaim:
    settled = []
    for n, size in enumerate(sizes):
        source = tmp_path / f"{session}-{n}.jsonl"
        source.write_bytes(b"x" * size)
        settled.append(SettledBy(str(source), "streams/main", "transcript"))
    return SessionClaim(session, settled_by=settled)


def test_a_block_is_sent_largest_first_by_the_bytes_of_all_its_sources(tmp_path: Path) -> None:
    claims = [_claim(tmp_path, "a", 10), _claim(tmp_path, "b", 30), _claim(tmp_path, "c", 15, 20)]
    ordered = list(workers._largest_first(enumerate(claims)))
    assert [(index, claim.session) for index, claim in ordered] == [(2, "c"), (1, "b"), (0, "a")]


def test_claims_of_equal_or_unknown_size_keep_their_order(tmp_path: Path) -> None:
    gone = _claim(tmp_path, "gone", 50)
    assert gone.settled_by is not None
    Path(gone.settled_by[0].source).unlink()
    claims = [SessionClaim("unlisted"), _claim(tmp_path, "x", 5), gone, _claim(tmp_path, "y", 5),
              SessionClaim("later")]
    ordered = [claim.session for _, claim in workers._largest_first(enumerate(claims))]
    assert ordered == ["x", "y", "unlisted", "gone", "later"]


def test_a_later_block_is_not_taken_before_the_first_is_sent(tmp_path: Path) -> None:
    taken: list[int] = []

    def claims() -> Iterator[tuple[int, SessionClaim]]:
        for index in range(3 * workers._ORDERED_AHEAD):
            taken.append(index)
            yield index, _claim(tmp_path, f"s{index}", index % 7)

    ordered = workers._largest_first(claims())
    first = next(ordered)
    assert len(taken) == workers._ORDERED_AHEAD
    assert first[0] < workers._ORDERED_AHEAD
    rest = [first, *ordered]
    assert sorted(index for index, _ in rest) == list(range(3 * workers._ORDERED_AHEAD))
    # each block holds its own claims, none of the next
    for block in range(3):
        part = rest[block * workers._ORDERED_AHEAD:(block + 1) * workers._ORDERED_AHEAD]
        assert {index // workers._ORDERED_AHEAD for index, _ in part} == {block}


def test_every_worker_is_asked_to_end_before_the_pass_waits_for_any() -> None:
    calls: list[str] = []

    class Worker:
        def __init__(self, name: str) -> None:
            self.name = name

        def ask_to_end(self) -> None:
            calls.append(f"ask {self.name}")

        def stop(self) -> None:
            calls.append(f"wait {self.name}")

    workers._end_all([Worker("a"), Worker("b"), Worker("c")])  # type: ignore[list-item]
    assert calls == ["ask a", "ask b", "ask c", "wait a", "wait b", "wait c"]
