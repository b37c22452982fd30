"""Shared fixtures: where the shared corpus is, and whether it is required.

Tests that read ``../shared/corpus`` take the ``corpus`` fixture. On a user's clone the corpus is
absent and they skip with the reason; ``.ci/run`` sets ``ASZ_REQUIRE_CORPUS=1`` where it is
present, so there they fail instead of skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ASZ_SHARED", REPO.parent / "shared"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="run the long versions (200 fault seeds, ...)")


def pytest_configure(config: pytest.Config) -> None:
    # asz's caches (entry points, validated configurations, quiet passes) of this test run's
    # own: a run never repeats a pass a previous test run recorded, and the tests' temporary
    # paths do not end up in the user's cache
    if "ASZ_TEST_CACHE" not in os.environ:
        import tempfile

        os.environ["ASZ_TEST_CACHE"] = os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="asz-test-cache-")


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "corpus").is_dir():
        if os.environ.get("ASZ_REQUIRE_CORPUS"):
            pytest.fail(f"ASZ_REQUIRE_CORPUS is set but {SHARED / 'corpus'} is missing")
        pytest.skip(f"the shared corpus is not here ({SHARED / 'corpus'}); set ASZ_SHARED to its parent")
    return SHARED


@pytest.fixture(scope="session")
def corpus(shared: Path) -> Path:
    return shared / "corpus"


@pytest.fixture
def slow(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--slow"))
