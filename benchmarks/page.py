"""The page over a large root: how long the list takes to read, to serve, to draw and to search.

    python benchmarks/page.py ROOT                 # a root landed from corpus.py's output
    python benchmarks/page.py ROOT --words "git status"

Figures (each the median of ``--repeat`` runs, cold ones once, as a first visit is once):

* **cold list**: the catalogue reads every session of the root (what the first visitor waits
  for, in a process that has read nothing yet);
* **warm list**: the same after a landed file changed in one session (one session read again,
  every other one's files only listed and stat-ed);
* **/api/conversations**: the list over HTTP, JSON encoding included, and its size;
* **search**: ``/api/conversations?q=WORDS`` over HTTP;
* **first render**: headless Chromium from ``goto /`` until the page says the list is drawn, and
  from typing the words until the searched list is drawn (skipped without Chromium and
  Playwright);
* **one conversation** (``--conversation ID``, by default the one with the most model calls): its
  ``asz.view`` document built cold and kept, its additions, and Chromium from ``goto /c/ID``
  until the conversation is drawn.

Wall times are inflated by whatever else runs; the server-side steps also print their CPU time.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from asz_core.page.catalogue import Catalogue, Digest
from asz_core.page.server import PageServer


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _get(port: int, path: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("GET", path)
    body = conn.getresponse().read()
    conn.close()
    return body


def _cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU (user+sys of this process) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _chromium() -> tuple[str, Any] | str:
    """The system Chromium and playwright's ``sync_playwright``, or why they are not here."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return "no chromium on PATH"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "playwright is not installed"
    return chromium, sync_playwright


def _draw_conversation(url: str, conversation: str, repeat: int) -> float | str:
    found = _chromium()
    if isinstance(found, str):
        return found
    chromium, sync_playwright = found
    draws = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(repeat):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(f"{url}/c/{conversation}")
            page.wait_for_selector("body[data-ready=conversation]", timeout=600_000)
            draws.append(time.perf_counter() - start)
            page.close()
        browser.close()
    return statistics.median(draws)


def _browser(url: str, words: str, repeat: int) -> tuple[float, float] | str:
    found = _chromium()
    if isinstance(found, str):
        return found
    chromium, sync_playwright = found
    renders, searches = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(repeat):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(f"{url}/")
            page.wait_for_selector("body[data-ready=list]", timeout=600_000)
            renders.append(time.perf_counter() - start)
            start = time.perf_counter()
            page.fill("input[name=q]", words)
            page.wait_for_selector("body[data-ready=list]", timeout=600_000)
            searches.append(time.perf_counter() - start)
            page.close()
        browser.close()
    return statistics.median(renders), statistics.median(searches)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--words", default="git status")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--conversation", help="the conversation to draw (default: the one with the most model calls)")
    args = parser.parse_args(argv)
    catalogue = Catalogue(args.root)
    digests: list[Digest] = []
    cold, cold_cpu = _cpu(lambda: digests.extend(catalogue.digests()))
    records = sum(d.steps for d in digests)
    print(f"sessions {len(digests)}, records {records}")
    print(f"cold list             {cold:8.2f} s  (CPU {cold_cpu:.2f} s)")

    def warm() -> None:
        catalogue._listed_at = float("-inf")  # the one-second reuse off: list and stat every session
        catalogue._digests[digests[0].id].stamp = ()
        catalogue.digests()

    print(f"warm list             {_median(warm, args.repeat):8.3f} s  (one session read again)")
    server = PageServer(catalogue, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        size = len(_get(port, "/api/conversations"))
        served = _median(lambda: _get(port, "/api/conversations"), args.repeat)
        print(f"/api/conversations    {served:8.3f} s  ({size / 1e6:.1f} MB)")
        query = "+".join(args.words.split())
        hits = _get(port, f"/api/conversations?q={query}").count(b'"id":')
        searched = _median(lambda: _get(port, f"/api/conversations?q={query}"), args.repeat)
        print(f"search {args.words!r:<14} {searched:8.3f} s  ({hits} sessions)")
        drawn = _browser(server.url, args.words, args.repeat)
        if isinstance(drawn, str):
            print(f"first render          skipped: {drawn}")
        else:
            print(f"first render          {drawn[0]:8.3f} s  (goto / until the list is drawn)")
            print(f"search in the page    {drawn[1]:8.3f} s  (typing until the searched list is drawn)")
        conversation = args.conversation or max(digests, key=lambda d: (d.llm_calls, d.steps)).id
        steps = next(d.steps for d in digests if d.id == conversation)
        built, built_cpu = _cpu(lambda: Catalogue(args.root).document(conversation, ()))
        catalogue.document(conversation, ())  # kept from here on, until a file lands or a round is written
        kept = _median(lambda: catalogue.document(conversation, ()), args.repeat)
        extra, extra_cpu = _cpu(lambda: catalogue.additions(conversation, ()))
        size = len(_get(port, f"/api/c/{conversation}/view"))
        print(f"conversation {conversation} ({steps} records): asz.view {size / 1e6:.2f} MB")
        print(f"  document, cold      {built:8.3f} s  (CPU {built_cpu:.3f} s)")
        print(f"  document, kept      {kept:8.4f} s")
        print(f"  additions           {extra:8.3f} s  (CPU {extra_cpu:.3f} s)")
        draw = _draw_conversation(server.url, conversation, args.repeat)
        print(f"  drawn in Chromium   {draw:8.3f} s  (goto /c/ID until drawn)" if isinstance(draw, float)
              else f"  drawn in Chromium   skipped: {draw}")
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))
    sys.exit(main())
