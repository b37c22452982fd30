"""The page in a real headless Chromium (the OS package), driven through Playwright: the list, a
search by a word of a prompt, a conversation with child agents and provider bodies, the withheld
system prompt, a deep link, a transcript that tries to run a script, and an export opened with no
network. Screenshots go to each test's temporary directory (and to ``$ASZ_PAGE_SHOTS`` when set:
that is how ``docs/page-*.png`` are made).

Skipped, with the reason, when Chromium or Playwright is not installed. In the slow lane only: a
browser costs seconds of CPU to start and drive, while the same pages' data, withholding and
escaping are checked without one in the default lane (``test_page_api``, ``test_page_export``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asz_core.page.catalogue import Catalogue
from asz_core.page.export import to_html
from asz_core.page.server import PageServer
from tests.core.page.conftest import serve
from tests.core.page.page_helpers import PROMPT_WORD, hostile_session

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
if CHROMIUM is None:
    # .ci/run installs chromium and sets ASZ_REQUIRE_BROWSER, so there a missing browser fails
    if os.environ.get("ASZ_REQUIRE_BROWSER"):
        pytest.fail("ASZ_REQUIRE_BROWSER is set but no chromium is on PATH", pytrace=False)
    pytest.skip("no chromium on PATH (Debian: apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

pytestmark = pytest.mark.slow

SUBAGENTS = "8a525d27-37a4-4a12-8523-a3ea345290cf"
PROMPT = "Test Foreground Subagent Detection"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that records every console error and every page error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.errors = []
    opened.on("pageerror", lambda exc: opened.errors.append(str(exc)))
    opened.on("console", lambda msg: opened.errors.append(msg.text) if msg.type == "error" else None)
    try:
        yield opened
    finally:
        context.close()


def shot(page: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    docs = os.environ.get("ASZ_PAGE_SHOTS")
    if docs:
        shutil.copy(path, Path(docs) / f"page-{name}.png")
    return path


def ready(page: Any, what: str) -> None:
    page.wait_for_selector(f"body[data-ready={what}]", timeout=60_000)


@pytest.mark.corpus
def test_the_list_finds_a_session_by_a_word_of_its_prompt_and_opens_it(
        page: Any, page_server: PageServer, tmp_path: Path) -> None:
    page.goto(f"{page_server.url}/")
    ready(page, "list")
    everything = page.locator("#conversations tbody tr").count()
    assert everything > 60
    assert page.locator("#conversations tbody tr", has_text="kiro").count() >= 1
    page.click("#usage summary")  # the figures `asz-pipeline usage --by model` prints
    page.wait_for_selector("#usage table")
    assert "total" in page.inner_text("#usage table")
    shot(page, tmp_path, "list")
    page.fill("input[name=q]", "Foreground Subagent")
    ready(page, "list")  # the page says "searching" as the words change, "list" once drawn
    rows = page.locator("#conversations tbody tr")
    assert 1 <= rows.count() < everything and page.locator(f"tr[data-id='{SUBAGENTS}']").count() == 1
    assert "q=Foreground" in page.url  # the address carries the search
    page.click(f"tr[data-id='{SUBAGENTS}'] a")
    ready(page, "conversation")
    assert PROMPT in page.inner_text("main")
    tool = page.locator(".tool", has=page.locator("summary", has_text="result")).first
    assert tool.count() == 1
    child_reply = page.locator(".child .step.reply").first
    assert child_reply.inner_text().strip()
    shot(page, tmp_path, "conversation")
    assert page.errors == []


@pytest.mark.corpus
def test_a_calls_exact_request_is_shown_when_asked(page: Any, page_server: PageServer, tmp_path: Path) -> None:
    page.goto(f"{page_server.url}/c/{SUBAGENTS}")
    ready(page, "conversation")
    assert page.locator("button.body").count() == 0  # withheld unless this reader asks
    page.click("a.show-context >> nth=0")
    ready(page, "conversation")
    assert "show=context" in page.url
    page.click("button.body.request >> nth=0")
    body = page.wait_for_selector("pre.provider-body")
    assert '"messages"' in body.inner_text()
    shot(page, tmp_path, "request")
    assert page.errors == []


@pytest.mark.corpus
def test_the_system_prompt_is_withheld_until_asked_and_for_good_when_the_instance_says(
        page: Any, page_server: PageServer, page_root: Path, flagged: str, tmp_path: Path) -> None:
    page.goto(f"{page_server.url}/c/{flagged}")
    ready(page, "conversation")
    withheld = page.locator(".step.withheld", has_text="system_prompt")
    assert withheld.count() >= 1
    assert page.locator(".step.context").count() == 0
    shot(page, tmp_path, "withheld")
    withheld.first.locator("a.show-context").click()
    ready(page, "conversation")
    assert page.locator(".step.context", has_text="system_prompt").count() >= 1
    assert page.locator(".step.target").count() == 1  # the link kept the reader's place
    for server in serve(Catalogue(page_root, ["system_prompt"])):
        page.goto(f"{server.url}/c/{flagged}?show=context")
        ready(page, "conversation")
        assert page.locator(".step.withheld", has_text="system_prompt").count() >= 1
        assert page.locator(".step.context", has_text="system_prompt").count() == 0
        assert "every reader" in page.inner_text("main")
    assert page.errors == []


@pytest.mark.corpus
def test_a_deep_link_lands_on_the_same_step_inside_a_child_agent(
        page: Any, page_server: PageServer, tmp_path: Path) -> None:
    page.goto(f"{page_server.url}/c/{SUBAGENTS}")
    ready(page, "conversation")
    anchor = page.locator(".child .step.reply").nth(2).get_attribute("id")
    page.goto(f"{page_server.url}/c/{SUBAGENTS}#{anchor}")
    ready(page, "conversation")
    target = page.locator(f"#{anchor}")
    assert "target" in (target.get_attribute("class") or "")
    box = target.bounding_box()  # in the viewport, not somewhere below it
    assert target.is_visible() and box is not None and 0 <= box["y"] < 900
    page.click(f"#{anchor} button.evidence")
    evidence = page.wait_for_selector(f"#{anchor} .panel pre")
    assert '"ord"' in evidence.inner_text()
    shot(page, tmp_path, "deep-link")
    assert page.errors == []


def test_no_script_from_a_transcript_runs_on_the_page_or_in_an_export(page: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    session = hostile_session(root)
    catalogue = Catalogue(root)
    for server in serve(catalogue):
        page.goto(f"{server.url}/")
        ready(page, "list")
        page.goto(f"{server.url}/c/{session}?show=context")
        ready(page, "conversation")
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        assert page.title() != "pwned"
        assert page.locator("main img, main script").count() == 0
        assert "<script>" in page.inner_text("main")  # shown as text
        assert PROMPT_WORD in page.inner_text("main")
    export = tmp_path / "export.html"
    export.write_text(to_html(catalogue.document(session, ())), encoding="utf-8")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.context.set_offline(True)
    page.goto(export.as_uri())
    assert page.title() != "pwned" and PROMPT_WORD in page.inner_text("main")
    assert requests == [export.as_uri()]  # the file asked the network for nothing
    shot(page, tmp_path, "export")
