"""Helpers the kiro adapter's tests share (imported by name; the fixtures are in conftest)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from asz_core.sessiondata import Record, open_file
from asz_core.testing import PassRunner

CLI_ID = "aaaaaaaa-1111-4524-95d0-000000000001"
BROKEN_ID = "eeeeeeee-3333-4524-95d0-000000000003"
IDE_ID = "sess_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
IDE_BUCKET = "9f3c1d0b7a4e2856"
DB_ID = "cccccccc-3333-4f7f-860e-000000000003"
DB_RELATIVE = "../.local/share/kiro-cli/data.sqlite3"
IDE_CHILD = "sess_11111111-2222-4333-8444-555555555555"


def add_ide_sub_agent(tree: Path, parent_dir: Path) -> Path:
    """An IDE sub-agent session of one line beside ``tree``'s, and the parent's
    ``sub_agent_start`` naming it; returns the sub-agent's directory."""
    child_dir = tree / ".kiro" / "sessions" / "0123456789abcdef" / IDE_CHILD
    child_dir.mkdir(parents=True)
    meta = json.loads((parent_dir / "session.json").read_text())
    meta.update(id=IDE_CHILD, title="Sub-agent: list files")
    (child_dir / "session.json").write_text(json.dumps(meta))
    (child_dir / "messages.jsonl").write_text(json.dumps(
        {"id": "c-1", "timestamp": "2026-09-03T12:01:20.000Z",
         "payload": {"type": "user", "content": "list the files"}}) + "\n")
    with (parent_dir / "messages.jsonl").open("a") as f:
        f.write(json.dumps({"id": "s-1", "timestamp": "2026-09-03T12:01:19.000Z",
                            "payload": {"type": "sub_agent_start", "subSessionId": IDE_CHILD}}) + "\n")
    return child_dir


def configure(runner: PassRunner, tree: Path, *, database: bool = True, **options: Any) -> None:
    """One ``kiro`` entry reading ``tree`` (a corpus-shaped tree), with the database unless
    ``database`` is false."""
    entry: dict[str, Any] = {"name": "kiro", "source_root": str(tree / ".kiro"), **options}
    if database:
        entry.setdefault("cli_database", DB_RELATIVE)
    runner.configure(adapters=[entry])


def landed(root: Path, session: str, stream: str = "main", kind: str = "transcript") -> list[Record]:
    """Every record of one stream and kind, in landing order."""
    prefix = "meta" if kind == "agent_meta" else kind
    records: list[Record] = []
    for path in sorted((root / session / "streams" / stream).glob(f"{prefix}-*.sd"),
                       key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        with open_file(path) as reader:
            records.extend(reader)
    return records


def headers(root: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(root.glob("*/streams/*/*.sd")):
        with open_file(path) as reader:
            yield reader.header


def complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def database_path(tree: Path) -> Path:
    return tree / ".local" / "share" / "kiro-cli" / "data.sqlite3"


def update_history(tree: Path, change: Callable[[list[Any]], None], conversation: str = DB_ID) -> None:
    """Rewrite a row's value as kiro-cli does: the whole document, with its history changed."""
    with closing(sqlite3.connect(database_path(tree))) as db, db:
        (value,) = db.execute("SELECT value FROM conversations_v2 WHERE conversation_id = ?",
                              (conversation,)).fetchone()
        document = json.loads(value)
        change(document["history"])
        db.execute("UPDATE conversations_v2 SET value = ?, updated_at = updated_at + 1000 "
                   "WHERE conversation_id = ?", (json.dumps(document), conversation))
