"""Where the adapter looks: per OS, moved by KIRO_HOME and KIRO_CLI_DB_PATH, and never outside
``source_root`` when that is set unless an option says where."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from kiro_helpers import DB_ID, configure

from asz_adapters.kiro.paths import resolve_paths
from asz_core.cli.app import App
from asz_core.cli.main import main

HOME = Path("/home/u")


def test_defaults_per_os():
    linux = resolve_paths("", {}, env={}, platform="linux", user_home=HOME)
    assert linux.home == HOME / ".kiro" and linux.cli_sessions == HOME / ".kiro/sessions/cli"
    assert linux.databases == (HOME / ".local/share/kiro-cli/data.sqlite3",)
    assert linux.global_storage == (HOME / ".config/Kiro/User/globalStorage/kiro.kiroagent",
                                    HOME / ".kiro-server/data/User/globalStorage/kiro.kiroagent")
    xdg = resolve_paths("", {}, env={"XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"},
                        platform="linux", user_home=HOME)
    assert xdg.databases == (Path("/d/kiro-cli/data.sqlite3"),)
    assert xdg.global_storage[0] == Path("/c/Kiro/User/globalStorage/kiro.kiroagent")
    mac = resolve_paths("", {}, env={}, platform="darwin", user_home=HOME)
    assert mac.databases == (HOME / "Library/Application Support/kiro-cli/data.sqlite3",
                             HOME / ".local/share/kiro-cli/data.sqlite3")
    windows = resolve_paths("", {}, env={"LOCALAPPDATA": "/L", "APPDATA": "/R"}, platform="win32",
                            user_home=HOME)
    assert windows.home == HOME / ".kiro"
    assert windows.databases == (Path("/L/Kiro-Cli/data.sqlite3"),)
    assert windows.global_storage == (Path("/R/Kiro/User/globalStorage/kiro.kiroagent"),)


def test_environment_overrides():
    paths = resolve_paths("", {}, env={"KIRO_HOME": "/k", "KIRO_CLI_DB_PATH": "/db.sqlite3"},
                          platform="linux", user_home=HOME)
    assert (paths.home, paths.databases) == (Path("/k"), (Path("/db.sqlite3"),))


def test_source_root_keeps_everything_beneath_it_unless_an_option_says_otherwise():
    env = {"KIRO_HOME": "/k", "KIRO_CLI_DB_PATH": "/db.sqlite3"}
    paths = resolve_paths("/src/.kiro", {}, env=env, platform="linux", user_home=HOME)
    assert (paths.home, paths.databases, paths.global_storage) == (Path("/src/.kiro"), (), ())
    paths = resolve_paths("/src/.kiro", {"cli_database": "../db/data.sqlite3",
                                         "ide_global_storage": "/g"}, env=env, user_home=HOME)
    assert paths.databases == (Path("/src/db/data.sqlite3"),)
    assert paths.global_storage == (Path("/g"),)


def test_a_pass_with_source_root_does_not_read_the_home_database(asz_pass, kiro_corpus, tmp_path,
                                                                  monkeypatch):
    """A database at the default place and at $KIRO_CLI_DB_PATH is not read once source_root is set."""
    home = tmp_path / "home"
    default_db = home / ".local" / "share" / "kiro-cli" / "data.sqlite3"
    default_db.parent.mkdir(parents=True)
    shutil.copy(kiro_corpus / ".local/share/kiro-cli/data.sqlite3", default_db)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KIRO_CLI_DB_PATH", str(default_db))
    configure(asz_pass, kiro_corpus, database=False)
    asz_pass.run()
    assert not (asz_pass.root / DB_ID).exists()


def test_the_home_and_database_defaults_are_used_when_source_root_is_empty(asz_pass, kiro_corpus,
                                                                           tmp_path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(kiro_corpus / ".kiro", home / ".kiro")
    shutil.copytree(kiro_corpus / ".local", home / ".local")
    monkeypatch.setenv("HOME", str(home))
    asz_pass.configure(adapters=[{"name": "kiro", "source_root": ""}])
    summary = asz_pass.run()
    assert summary.totals.records == 77
    assert (asz_pass.root / DB_ID).is_dir()


def test_older_ide_stores_are_counted_not_read(asz_pass, kiro_corpus, tmp_path):
    agent = tmp_path / "kiro.kiroagent"
    (agent / "workspace-sessions" / "L2hvbWUvZGV2").mkdir(parents=True)
    (agent / "workspace-sessions" / "L2hvbWUvZGV2" / "sessions.json").write_text("[]")
    (agent / "workspace-sessions" / "L2hvbWUvZGV2" / "abc.json").write_text("{}")
    hashed = agent / ("0" * 32)
    (hashed / "414d1636299d2b9e4ce7e17fb11f63e9").mkdir(parents=True)
    (hashed / "old.chat").write_text("{}")
    (hashed / "414d1636299d2b9e4ce7e17fb11f63e9" / ("1" * 32)).write_text("{}")
    configure(asz_pass, kiro_corpus, ide_global_storage=str(agent))
    out = io.StringIO()
    assert main(["sources", "--json", "--config", str(asz_pass.config_path)], app=App(out=out)) == 0
    (report,) = json.loads(out.getvalue())["adapters"]
    not_read = {u["generation"]: u["sources"] for u in report["units"]
                if u["kind"] == "not read by this version"}
    assert not_read == {"kiro-ide<1.0 workspace-sessions": 2, "kiro-ide<1.0 .chat files": 1,
                        "kiro-ide<1.0 execution files": 1}
    summary = asz_pass.run()
    assert (summary.totals.records, summary.totals.sessions, summary.totals.found) == (77, 4, 8)


def test_ide_sub_executions_are_counted_not_read(asz_pass, kiro_copy):
    from kiro_helpers import IDE_BUCKET, IDE_ID

    subs = kiro_copy / ".kiro" / "sessions" / IDE_BUCKET / IDE_ID / "sub-executions"
    subs.mkdir()
    (subs / "x.jsonl").write_text('{"a":1}\n')
    configure(asz_pass, kiro_copy)
    out = io.StringIO()
    assert main(["sources", "--json", "--config", str(asz_pass.config_path)], app=App(out=out)) == 0
    (report,) = json.loads(out.getvalue())["adapters"]
    assert report["found"]["not read by this version"] == 1
    assert asz_pass.run().totals.records == 77
