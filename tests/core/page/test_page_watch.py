"""``serve --watch``: passes land data while the page serves, the list shows it, a failing pass is
shown and logged and the next one runs, and Ctrl-C stops the process cleanly."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asz_core.assembly.chain import Chain
from asz_core.root.storage import StorageRoot
from asz_core.testing import PassRunner
from tests.core.page.page_helpers import FIRST, LATER, copy_transcript

pytestmark = pytest.mark.corpus

def get(port: int, path: str) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        conn.close()


def until(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:g}s: {what}")


def test_serve_watch_lands_new_data_shows_a_failed_pass_and_stops_on_ctrl_c(
        corpus: Path, watched: tuple[PassRunner, Path]) -> None:
    runner, source = watched
    process = subprocess.Popen(
        [sys.executable, "-m", "asz_core.cli.main", "serve", "127.0.0.1:0", "--watch", "--interval", "1s",
         "--config", str(runner.config_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "ASZ_ROOT": ""})
    try:
        assert process.stdout is not None
        serving = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", serving)
        assert match, serving
        port = int(match.group(1))
        # the page is up before the first pass: an empty root is served, not refused
        assert get(port, "/api/status")["mode"] == "server"

        first = until("the first pass", lambda: get(port, "/api/status")["last_pass"])
        assert first["ok"], first
        assert [r["id"] for r in get(port, "/api/conversations")] == [FIRST[1]]
        status = get(port, "/api/status")
        assert status["last_collected"] >= first["ended"] >= first["started"]
        assert status["next_refresh"] is None or status["next_refresh"] > first["ended"]

        copy_transcript(corpus, source, LATER)
        rows = until("the later session in the list",
                     lambda: (r if len(r := get(port, "/api/conversations")) == 2 else None))
        assert {r["id"] for r in rows} == {FIRST[1], LATER[1]}
        # each pass is parsed too: the later conversation's document is drawn from its rounds. The
        # wait is for a round published, as the page lists them: ``rounds/`` is made before the
        # first round is installed into it, and until then the page rightly has no document
        until("the later session's first round", Chain(runner.root, LATER[1]).files)
        assert get(port, f"/api/c/{LATER[1]}/view")["format"] == "asz.view"

        # another process holds the root: the pass is refused, shown, and the page keeps answering
        lock = StorageRoot(runner.root).lock(wait=True)  # a pass may hold it this instant
        lock.acquire()
        try:
            refused = until("a refused pass",
                            lambda: (p := get(port, "/api/status")["last_pass"]) and not p["ok"] and p)
            assert "another process holds the storage root" in refused["problems"][0]
            assert len(get(port, "/api/conversations")) == 2
        finally:
            lock.release()
        until("a pass that went well again", lambda: get(port, "/api/status")["last_pass"]["ok"])

        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert out.strip().endswith("stopped")
    assert "another process holds the storage root" in err  # the failed pass is logged
    assert "Traceback" not in err
