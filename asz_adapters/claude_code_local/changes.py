"""The ``changes/1`` part: what an editing tool's result says it did to a file, in the model's shape.

Claude Code writes, on the result of its own editing tools (Edit, Write, NotebookEdit), the file
it changed, its content before, often its content after, and a patch. Upstream copies that into a
``changes/1`` record, carried as one more ``data`` part after the record's others, so a view joins
it to the call by the tool-use id the result answers. It is decided by shape alone, never by tool
name or stream:

1. the ``toolUseResult`` object read whole, and the record has a result part naming its call
   (the first such part gives the tool-use id);
2. the file is ``filePath`` (its before and after: ``originalFile``, ``content``), else
   ``notebook_path`` (``original_file``, ``updated_file``); none: no part;
3. the file was created when its before is absent or ``null``; the after is the after field when
   present, else, for a file that existed with a non-empty ``oldString``, the before with
   ``oldString`` replaced by ``newString`` once (everywhere when ``replaceAll``);
4. no ``structuredPatch`` (or an empty one) and no known after: no part;
5. ``path`` is made relative to the line's ``cwd`` when it lies under it (forward slashes; a
   relative path starting with ``..`` is not used), else kept as written;
6. each side: absent → ``present`` false, ``bytes`` null; else its size, SHA-256 and, when it is
   not empty and does not end in a newline, ``no_newline_at_end``; an after that is not known →
   ``present`` true, ``bytes`` null;
7. hunks: the runtime's patch with its keys renamed, else a line diff of the two sides
   (:func:`asz_core.changes.files.line_diff`): ``too_large`` when a side is too long, ``binary``
   when a side holds a NUL; ``additions``/``deletions`` count the ``+``/``-`` lines, and are
   null unless the diff is ``available``;
8. the record names the session and stream the line lands in, the tool-use id (as ``id`` and
   ``tool``), the line's ``timestamp`` and ``cwd``; one without a time, a session or a stream is
   not a record, and no part is made.

The record is encoded as upstream encodes it (:func:`~asz_core.sessiondata.raw_json_marshal`), in its
key order.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Final

from asz_adapters.claude_code_local.marshal import go_string
from asz_adapters.claude_code_local.shape import Fields
from asz_adapters.claude_code_local.source_facts import SourceFacts
from asz_core.changes.files import endpoint, line_diff
from asz_core.sessiondata import data_part, raw_json_marshal
from asz_core.sessiondata.fields import PartFields

__all__ = ["LastAfter", "changes_part", "go_rel"]

SCHEMA: Final = "changes/1"


def changes_part(line: Fields, result: Fields, parts: list[PartFields], source: SourceFacts,
                 last: LastAfter) -> PartFields | None:
    """The ``changes/1`` part for a line whose ``toolUseResult`` read whole, if it says one;
    ``last`` is the source's :class:`LastAfter`."""
    # the result read whole: each string field holds a str or None (rule 2 before rule 1, since
    # most results name no file)
    values = result.values  # values.get, a call in C when compiled (a bound get is a generic call)
    path, before, after = values.get("filePath"), values.get("originalFile"), values.get("content")
    if not path and values.get("notebook_path"):
        path, before, after = values.get("notebook_path"), values.get("original_file"), values.get("updated_file")
    if not path:
        return None
    tool = next((part["of"] for part in parts if part["k"] == "result" and "of" in part), None)
    if tool is None:
        return None
    created = before is None
    before_side = None if before is None else last.side_of(before)
    after_side: _Side | None = None
    if after is not None:
        after_side = _side(after)
    elif before_side is not None and result.text("oldString"):
        count = -1 if result.flag("replaceAll") else 1
        after_side = _side(before_side[0].replace(go_string(result.text("oldString")),
                                                  go_string(result.text("newString")), count))
    last.side = after_side if after_side is not None and len(after_side[0]) <= _REMEMBERED_UP_TO else None
    patch = result.subs("structuredPatch")
    if not patch and after_side is None:
        return None
    timestamp, cwd = line.text("timestamp"), line.text("cwd")
    if not (timestamp and source.session and source.stream):
        return None
    change = _file_change(_relative(go_string(path), go_string(cwd)), created, before_side, after_side, patch)
    record: dict[str, Any] = {"schema": SCHEMA, "id": tool, "captured_by": "claude-code",
                              "session": source.session, "stream": source.stream, "tool": tool,
                              "time": timestamp, "basis": "runtime_reported"}
    if cwd:
        record["root"] = {"path": cwd}
    record["changed_files"] = 1
    record["changes"] = [change]
    return data_part(raw_json_marshal(record))


#: one side of a change: its text as Go holds it, and that text's :func:`endpoint` (size, digest)
_Side = tuple[str, dict[str, Any]]
#: the longest after side (in characters) a :class:`LastAfter` holds on to: a larger file is
#: encoded and digested again when the next edit starts from it, so that what a source's dialect
#: keeps between lines stays small beside the lines themselves
_REMEMBERED_UP_TO: Final = 1 << 20


def _side(text: str) -> _Side:
    """A file's text as Go holds it (:func:`~.marshal.go_string`) with its endpoint. Encoded
    first: a text that encodes holds no unpaired surrogate, so it is Go's as it is, and a whole
    file is not scanned for one (the scan cost more than the encoding the digest needs)."""
    try:
        return text, endpoint(text.encode("utf-8"))
    except UnicodeEncodeError:
        held = go_string(text)
        return held, endpoint(held.encode("utf-8"))


class LastAfter:
    """The after side of the last change a source's lines made (one per dialect instance).

    An edit's before is most often the after of the edit just before it, of the same file: that
    side's size and digest are then taken as they were made, not encoded and digested again. A
    before equal to the remembered text is that text, as Go holds it (which has no unpaired
    surrogate, so neither has the before), so both give the same endpoint."""

    __slots__ = ("side",)

    def __init__(self) -> None:
        self.side: _Side | None = None

    def side_of(self, before: str) -> _Side:
        """``before``'s side: the remembered one when it is the same text."""
        side = self.side
        if side is not None and side[0] == before:
            return side
        return _side(before)


def _file_change(path: str, created: bool, before_side: _Side | None, after_side: _Side | None,
                 patch: list[Fields]) -> dict[str, Any]:
    before = before_side[0] if before_side is not None else None
    after = after_side[0] if after_side is not None else None
    # an after not known is a file that is there, of unknown bytes; an endpoint may be a
    # remembered side's (:class:`LastAfter`), so each record takes its own copy
    known_after = after_side[1].copy() if after_side is not None else {"present": True, "bytes": None}
    change: dict[str, Any] = {"path": path, "operation": "create" if created else "modify",
                              "before": endpoint(None) if before_side is None else before_side[1].copy(),
                              "after": known_after}
    hunks: list[dict[str, Any]] = []
    additions = deletions = 0
    diff = "available"
    if patch:
        for hunk in patch:
            # the result read whole: each integer field holds an int or None, the lines a list
            # of strings (or None) or None
            values = hunk.values
            lines = values.get("lines")
            hunks.append({"old_start": values.get("oldStart") or 0, "old_lines": values.get("oldLines") or 0,
                          "new_start": values.get("newStart") or 0, "new_lines": values.get("newLines") or 0,
                          "lines": None if lines is None else _go_lines(lines)})
            if lines:
                texts = lines if None not in lines else [text or "" for text in lines]
                additions += sum(map(str.startswith, texts, repeat("+")))
                deletions += sum(map(str.startswith, texts, repeat("-")))
    else:
        computed = line_diff(before or "", after or "")
        diff, hunks = computed.diff, computed.hunks
        additions, deletions = computed.additions or 0, computed.deletions or 0
    change["diff"] = diff
    change["additions"] = additions if diff == "available" else None
    change["deletions"] = deletions if diff == "available" else None
    if hunks:
        change["hunks"] = hunks
    return change


def _go_lines(lines: list[str | None]) -> list[str]:
    """A patch's lines as Go holds them (``null`` an empty line), each one looked at only when
    the lines hold something other than ASCII, which a surrogate is not."""
    if None not in lines and "".join(lines).isascii():  # type: ignore[arg-type]
        return lines  # type: ignore[return-value]
    return [go_string(text or "") for text in lines]


def _relative(path: str, cwd: str) -> str:
    if not cwd:
        return path
    if path.startswith(cwd) and path[len(cwd):len(cwd) + 1] == "/" and _clean(cwd) and _clean(path):
        return path[len(cwd) + 1:]  # most edits: a file under the working directory
    rel = go_rel(cwd, path)
    return rel if rel is not None and not rel.startswith("..") else path


def _clean(path: str) -> bool:
    """Whether ``path`` is absolute and :func:`go_clean` leaves it as it is, judged by its text
    (no empty, ``.`` or ``..`` name, no slash at its end); a name that starts with a dot is
    taken as unclean, which only sends it the longer way."""
    return path.startswith("/") and "//" not in path and "/." not in path and not path.endswith("/")


def go_clean(path: str) -> str:
    """A path with ``.``, ``..`` and repeated slashes resolved by its text, as Go's
    ``path.Clean`` does."""
    rooted = path.startswith("/")
    kept: list[str] = []
    for name in path.split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if kept and kept[-1] != "..":
                kept.pop()
            elif not rooted:
                kept.append("..")
        else:
            kept.append(name)
    joined = "/".join(kept)
    return "/" + joined if rooted else (joined or ".")


def go_rel(base: str, target: str) -> str | None:
    """``target`` relative to ``base``, by their text alone, as Go's ``filepath.Rel`` gives it on
    a POSIX system; ``None`` when it cannot be (one is absolute and the other not, or ``base``
    climbs out of where ``target`` is)."""
    base, target = go_clean(base), go_clean(target)
    if base == target:
        return "."
    if base == ".":
        base = ""
    if base.startswith("/") != target.startswith("/"):
        return None
    base_names = [name for name in base.split("/") if name]
    target_names = [name for name in target.split("/") if name]
    common = 0
    while (common < len(base_names) and common < len(target_names)
           and base_names[common] == target_names[common]):
        common += 1
    if common < len(base_names):
        if base_names[common] == "..":
            return None
        up = "/".join([".."] * (len(base_names) - common))
        rest = "/".join(target_names[common:])
        return f"{up}/{rest}" if rest else up
    return "/".join(target_names[common:])
