"""``benchmarks/pass.py --table --readme``: the README's generated part rewritten in place, the
hand-written text around it untouched, and nothing written from a run that was not quiet."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.benchmarks.test_pass_table import bench, quiet, readme_block, table_report
from tests.helpers import REPO

block = readme_block
CALM = quiet.Settling((quiet.Reading(21.0, 0.4, 1.2),), 0.0, ())
WAITED = quiet.Settling((quiet.Reading(480.0, 2.0, 0.0), quiet.Reading(35.0, 1.0, 0.0)), 3.0, (),
                        during=quiet.Reading(0.0, 6.0, 48.0))
LOUD = quiet.Settling((quiet.Reading(30.0, 41.0, 0.0),) * 31, 90.0, ("I/O",))


def _made(*settlings: object, floor_cpu: float = 0.22) -> object:
    made = table_report.TableReport(workers=(2, 3), repeat=3, started=datetime(2026, 12, 2, 4, 10, tzinfo=UTC))
    made.rows.append(("shared transcripts", "62", "16.7", f"{floor_cpu:.2f} / 0.24", "0.60 / 0.67", "34.8 %",
                      "0.74 / 0.52", "41.9 %", "111", "0.05 (0.02 a file)", "≥ 25 % / ≥ 40 %"))
    made.rounds.append("shared transcripts 37.1, 32.3, 34.8 % in one process and 24.7, 41.9, 45.6 % with workers")
    made.after.append("The no-op's first run took 15.3 s of CPU, 9.0 s of wall.")
    made.settlings.extend(settlings)
    return made


def _quiet(tmp_path: Path) -> object:
    return quiet.Quiet(tmp_path, quiet.Levels(), most_wait=90.0)


def _outside(text: str) -> tuple[str, str]:
    """What lies before the begin marker's line ends and from the end marker's line on."""
    head, _, rest = text.partition(block.BEGIN)
    _, _, tail = rest.partition(block.END)
    line_end = rest.index("\n")
    return head + block.BEGIN + rest[:line_end + 1], rest[rest.rindex("\n", 0, rest.index(block.END)) + 1:] + tail


def test_the_rewrite_keeps_everything_outside_the_markers_byte_for_byte_and_is_idempotent(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes((REPO / "README.md").read_bytes())
    readme.chmod(0o640)
    before = readme.read_bytes().decode("utf-8")
    new = _made(CALM, WAITED).readme(_quiet(tmp_path), "python benchmarks/pass.py --table", datetime.now(UTC))
    assert block.rewrite(readme, new)
    after = readme.read_bytes().decode("utf-8")
    assert _outside(after) == _outside(before) and after != before
    assert "| shared transcripts | 62 | 16.7 | 0.22 / 0.24 |" in after
    assert readme.stat().st_mode & 0o777 == 0o640 and not list(tmp_path.glob(".README.md*"))
    assert not block.rewrite(readme, new) and readme.read_bytes().decode("utf-8") == after  # idempotent
    other = _made(CALM, floor_cpu=0.31).readme(_quiet(tmp_path), "python benchmarks/pass.py --table",
                                               datetime.now(UTC))
    assert block.rewrite(readme, other)
    again = readme.read_bytes().decode("utf-8")
    assert _outside(again) == _outside(before) and "0.31 / 0.24" in again and "0.22 / 0.24" not in again


def test_the_generated_part_says_when_where_how_quiet_and_each_rounds_ratio(tmp_path: Path) -> None:
    text = _made(CALM, WAITED).readme(_quiet(tmp_path), "python benchmarks/pass.py --table --repeat 3",
                                      datetime(2026, 12, 2, 4, 31, tzinfo=UTC))
    assert text.startswith("Regenerated on 2026-12-02 from 04:10 to 04:31 UTC on a ")
    assert "-CPU machine (Linux " in text and "`python benchmarks/pass.py --table --repeat 3`." in text
    assert "I/O pressure 0\N{EN DASH}1 %" in text
    assert "1 of 2 runs waited for it, 3 s in all; every run started quiet (2 in all)." in text
    assert "(their own workers and fsyncs included): I/O pressure 6 %, CPU pressure 48 %." in " ".join(text.split())
    assert "| corpus | sessions | MB | floor CPU / wall (s) |" in text and "| default workers CPU / wall (s) |" in text
    assert "Each round's ratio, in order: shared transcripts 37.1, 32.3, 34.8 % in one process" in " ".join(
        text.split())
    assert all(len(line) <= 100 for line in text.splitlines() if not line.startswith(("|", "`")))


def test_the_generated_part_says_how_full_the_file_system_was_as_the_run_began(tmp_path: Path) -> None:
    made = _made(CALM)
    made.inodes = (3_308_144, 16_777_216)
    text = " ".join(made.readme(_quiet(tmp_path), "python benchmarks/pass.py --table",
                                datetime(2026, 12, 2, 4, 31, tzinfo=UTC)).split())
    assert ", its file system holding 3.3 M inodes (20 %) as it began, by one run of" in text
    used, total = table_report.inodes_in_use(tmp_path)
    assert 0 < used <= total  # this very directory's file system, read the same way


def test_a_readme_without_its_markers_is_refused_before_anything_is_measured(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# asz\n\n## Performance\n\nhand-written\n", "utf-8")
    assert bench.main(["--table", "--readme", str(readme)]) == 2
    assert "add them to its Performance section" in capsys.readouterr().err
    readme.write_text(f"{block.END}\n{block.BEGIN}\n", "utf-8")
    assert bench.main(["--table", "--readme", str(readme)]) == 2
    assert "put the begin marker first" in capsys.readouterr().err
    readme.write_text(f"{block.BEGIN}\n{block.END}\n{block.END}\n", "utf-8")
    assert bench.main(["--table", "--readme", str(readme)]) == 2
    assert "exactly once each" in capsys.readouterr().err
    assert readme.read_text("utf-8") == f"{block.BEGIN}\n{block.END}\n{block.END}\n"


def test_part_of_the_table_is_not_written_over_the_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"{block.BEGIN}\nold\n{block.END}\n", "utf-8")
    assert bench.main(["--table", "--only", "shared", "--readme", str(readme)]) == 2
    assert "without --only" in capsys.readouterr().err
    assert bench.main(["--readme", str(readme)]) == 2
    assert readme.read_text("utf-8") == f"{block.BEGIN}\nold\n{block.END}\n"


def test_a_run_that_was_not_quiet_leaves_the_readme_as_it_was(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{block.BEGIN}\nthe last quiet table\n{block.END}\noutro\n", "utf-8")
    assert bench.into_readme(_made(CALM, LOUD), _quiet(tmp_path), readme, ["--table", "--readme", "README.md"]) == 2
    err = capsys.readouterr().err
    assert "1 of 2 runs started with the machine not quiet (I/O above its level" in err and "--quiet-wait" in err
    assert readme.read_text("utf-8") == f"intro\n{block.BEGIN}\nthe last quiet table\n{block.END}\noutro\n"
    assert bench.into_readme(_made(CALM), _quiet(tmp_path), readme, ["--table", "--readme", str(readme)]) == 0
    written = readme.read_text("utf-8")
    assert written.startswith(f"intro\n{block.BEGIN}\nRegenerated on ") and written.endswith(f"\n{block.END}\noutro\n")
    assert f"--readme {readme}" in written  # outside the repository, a path is shown as given


def test_the_command_quoted_names_no_path_of_this_machine(tmp_path: Path) -> None:
    shown = block.command(["benchmarks/pass.py", "--table", "--work", str(tmp_path / "corpora"), "--readme",
                           str(REPO / "README.md"), "--repeat", "3"], REPO, str(REPO.parent / "shared"))
    assert shown.endswith("benchmarks/pass.py --table --readme README.md --repeat 3")
    assert shown.startswith("ASZ_SHARED=../shared ") and str(tmp_path) not in shown and str(REPO) not in shown
