"""The console script keeps the code ``dataclasses`` compiles for each class, and the classes made
from kept code are the classes compiled anew."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
from pathlib import Path

from asz_core.cli import generated_code, main

#: dataclasses of every kind asz writes, and what each one's generated methods do
_CLASSES = """
import dataclasses, sys
from dataclasses import dataclass, field

@dataclass
class Plain:
    a: int
    b: list[str] = field(default_factory=list)

@dataclass(frozen=True)
class Frozen:
    a: int
    b: str = "x"

@dataclass(frozen=True, slots=True)
class Slotted:
    a: int

@dataclass(slots=True)
class Open:
    a: int

@dataclass(eq=False)
class Unequal:
    a: int

def what() -> list[str]:
    out = [repr(Plain(1)), str(Plain(1) == Plain(1, [])), str(Plain(1) == Plain(2)),
           repr(Frozen(2)), str(hash(Frozen(2)) == hash((2, "x"))), repr(Slotted(3)), repr(Open(4)),
           str(Unequal(5) == Unequal(5)), repr(Plain.__init__.__annotations__)]
    try:
        Frozen(1).a = 2
    except dataclasses.FrozenInstanceError as exc:
        out.append(f"frozen: {exc}")
    try:
        Plain()
    except TypeError as exc:
        out.append(f"missing: {exc}")
    return out
"""


def _run(cache: Path, code: str) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return done.stdout.splitlines()


def _kept_file(cache: Path) -> Path:
    return cache / "asz" / "code" / f"dataclasses-{sys.implementation.cache_tag}.marshal"


def _with_install(body: str) -> str:
    return ("from asz_core.cli import generated_code\n"
            "generated_code.install()\n" + body)


def test_classes_made_from_kept_code_behave_as_classes_compiled_anew(tmp_path: Path) -> None:
    show = _CLASSES + "print('\\n'.join(what()))\n"
    anew = _run(tmp_path / "none", show)
    first = _run(tmp_path, _with_install(show + "generated_code.save()\n"))
    again = _run(tmp_path, _with_install(show + "print(generated_code._compiled)\n"))
    assert first == anew
    assert again == [*anew, "False"]  # nothing compiled the second time
    assert "Plain(a=1, b=[])" in anew and "frozen: cannot assign to field 'a'" in anew


def test_the_console_script_keeps_the_code_owner_only_and_the_next_run_compiles_none(tmp_path: Path) -> None:
    run = "import sys\nsys.argv = ['asz-pipeline', '--version']\nfrom asz_core.cli import main\nmain()\n"
    assert _run(tmp_path, run)[0].startswith("asz ")
    kept = _kept_file(tmp_path)
    assert kept.stat().st_mode & 0o777 == 0o600
    check = _with_install("import asz_core.cli.app, asz_core.context, asz_core.pipeline\n"
                          "print(generated_code._compiled, len(generated_code._used) > 0)\n")
    assert _run(tmp_path, check) == ["False True"]


def _write(path: Path, value: object, mode: int = 0o600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(marshal.dumps(value))
    path.chmod(mode)


def test_a_kept_file_another_could_write_or_not_this_interpreters_is_read_as_empty(tmp_path: Path) -> None:
    code = compile("x = 1", "<string>", "exec")
    path = tmp_path / "kept.marshal"
    _write(path, (sys.version, {"x = 1": code}))
    assert generated_code._read(str(path)) == {"x = 1": code}
    path.chmod(0o620)
    assert generated_code._read(str(path)) == {}
    _write(path, ("3.0.0 (another interpreter)", {"x = 1": code}))
    assert generated_code._read(str(path)) == {}
    _write(path, (sys.version, {"x = 1": "not code"}))
    assert generated_code._read(str(path)) == {}
    path.write_bytes(b"\x00 not marshal")
    assert generated_code._read(str(path)) == {}
    assert generated_code._read(str(tmp_path / "absent")) == {}


def test_a_caller_passing_its_command_line_keeps_dataclasses_as_they_are() -> None:
    assert main(["--version"]) == 0
    assert "exec" not in vars(dataclasses)
