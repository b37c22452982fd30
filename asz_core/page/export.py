"""One conversation as one file a person can share: HTML (self-contained) or Markdown.

1. The file is made from the same document the page draws (:meth:`Catalogue.document`), less what
   is withheld: a withheld step is a line saying what was withheld and its size, nothing more.
2. The conversation is read in the page's order: the main stream's steps, each child agent's
   steps inline after the tool call that started it, then any stream nothing started.
3. The HTML carries its style inline and a Content-Security-Policy that forbids every fetch and
   every script, so it opens with no network and nothing in it runs; every text is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from asz_core.page.assets import static_file

__all__ = ["Item", "items", "to_html", "to_markdown"]

_HIDEABLE: Final = ("system_prompt", "tool_schemas")
_EXPORT_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class Item:
    """One thing to show: ``kind`` is prompt, reply, thinking, tool, result, error, reset,
    summary, withheld, context, child (a child agent starts; ``depth`` says how deep) or call."""

    kind: str
    text: str
    depth: int
    title: str = ""
    anchor: str = ""


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def items(doc: dict[str, Any]) -> Iterator[Item]:
    """The conversation as a flat sequence of :class:`Item`, in reading order (rule 2)."""
    streams = {s["id"]: s for s in doc["streams"]}
    child_of_tool: dict[str, str] = {}
    result_of: dict[str, dict[str, Any]] = {}
    calls: dict[tuple[str, str], dict[str, Any]] = {}
    for stream in doc["streams"]:
        for call in stream["calls"]:
            calls[(stream["id"], call["id"])] = call
            for tool in call["tool_calls"]:
                if "child" in tool and "id" in tool:
                    child_of_tool[tool["id"]] = tool["child"]
        for step in stream.get("steps", []):
            for part in step["parts"]:
                if part["k"] == "result" and "of" in part:
                    result_of.setdefault(part["of"], part)
    placed: set[str] = set()
    seen_calls: set[tuple[str, str]] = set()

    def walk(stream: dict[str, Any], depth: int) -> Iterator[Item]:
        placed.add(stream["id"])
        if stream["role"] != "main":
            yield Item("child", stream.get("label", ""), depth, title=f"child agent {stream['id']}")
        for step in stream.get("steps", []):
            anchor = f"s-{step['at']['seq']}-{step['at']['row']}"
            key = (stream["id"], step.get("call", ""))
            if "call" in step and key not in seen_calls and key in calls:
                seen_calls.add(key)
                call = calls[key]
                usage = call.get("usage", {})
                yield Item("call", " · ".join(f"{k} {usage[k]}" for k in ("in", "out", "cache_read", "cache_write")
                                              if k in usage), depth, title=call.get("model", "model call"))
            if step.get("state") == "omitted":
                names = [f for f in step.get("flags", []) if f in _HIDEABLE]
                yield Item("withheld", f"{step['bytes']} bytes withheld", depth,
                           title=", ".join(names), anchor=anchor)
                continue
            flags = step.get("flags", [])
            if "context_reset" in flags or step.get("trigger") in ("auto", "manual"):
                yield Item("reset", "context reset", depth, anchor=anchor)
                continue
            flagged = [f for f in flags if f in _HIDEABLE]
            for part in step["parts"]:
                kind, text = part["k"], part.get("text")
                if "reset_summary" in flags and kind == "text" and text is not None:
                    yield Item("summary", text, depth, title="of the conversation before the reset", anchor=anchor)
                elif "error" in flags and text is not None:
                    yield Item("error", _pretty(text), depth, anchor=anchor)
                elif kind in ("text", "data") and flagged and text is not None:
                    yield Item("context", _pretty(text), depth, title=", ".join(flagged), anchor=anchor)
                elif kind == "text" and text is not None:
                    who = {"external": "prompt", "agent": "reply"}.get(step.get("from", ""), "runtime")
                    yield Item(who, text, depth, anchor=anchor)
                elif kind == "reasoning" and text is not None:
                    yield Item("thinking", text, depth, anchor=anchor)
                elif kind == "call":
                    yield Item("tool", _pretty(text) if text is not None else "", depth,
                               title=part.get("name", "tool"), anchor=anchor)
                    result = result_of.get(part.get("id", ""))
                    if result is not None:
                        yield Item("error" if result.get("failed") else "result",
                                   result.get("text", f"({result['state']})"), depth)
                    child = child_of_tool.get(part.get("id", ""))
                    if child in streams and child not in placed:
                        yield from walk(streams[child], depth + 1)

    main = next((s for s in doc["streams"] if s["role"] == "main"), None)
    if main is not None:
        yield from walk(main, 0)
    for stream in doc["streams"]:
        if stream["id"] not in placed:
            yield from walk(stream, 0)


def _title(doc: dict[str, Any]) -> str:
    label = doc["session"].get("label")
    if label:
        return str(label)
    for item in items(doc):
        if item.kind == "prompt":
            return " ".join(item.text.split())[:100]
    return str(doc["session"]["id"])


def _withheld_note(doc: dict[str, Any]) -> str:
    hidden = doc["session"].get("hide", [])
    return f"Withheld: {', '.join(hidden)}." if hidden else "Nothing withheld."


def to_markdown(doc: dict[str, Any]) -> str:
    session = doc["session"]
    out = [f"# {_title(doc)}", "",
           f"Session `{session['id']}` · {session.get('first_time', '')} → {session.get('last_time', '')} · "
           f"{doc['summary']['calls']} model calls · {_withheld_note(doc)}", ""]
    fence = "````"
    for item in items(doc):
        quote = "> " * item.depth
        if item.kind == "child":
            out += [f"{quote}### {item.title} {item.text}".rstrip(), ""]
        elif item.kind in ("prompt", "reply"):
            out += [f"{quote}**{item.kind.capitalize()}**", quote.rstrip()]
            out += [f"{quote}{line}".rstrip() for line in item.text.splitlines()] + [""]
        elif item.kind == "call":
            out += [f"{quote}_{item.title}: {item.text}_", ""]
        elif item.kind in ("withheld", "reset"):
            out += [f"{quote}_{item.kind}: {item.title} {item.text}_".replace("  ", " "), ""]
        else:
            label = f"{item.kind} {item.title}".strip()
            out += [f"{quote}**{label}**", f"{quote}{fence}"]
            out += [f"{quote}{line}" for line in item.text.splitlines()]
            out += [f"{quote}{fence}", ""]
    return "\n".join(out).rstrip() + "\n"


def to_html(doc: dict[str, Any]) -> str:
    esc = html.escape
    session = doc["session"]
    title = _title(doc)
    body: list[str] = []
    depth = 0
    for item in items(doc):
        while depth > item.depth:
            body.append("</div>")
            depth -= 1
        if item.kind == "child":
            body.append(f'<div class="child"><div class="title">{esc(item.title)} {esc(item.text)}</div>')
            depth += 1
            continue
        anchor = f' id="{esc(item.anchor)}"' if item.anchor else ""
        if item.kind in ("prompt", "reply"):
            body.append(f'<div class="step {item.kind}"{anchor}><div class="kind">{item.kind}</div>'
                        f'<pre class="text">{esc(item.text)}</pre></div>')
        elif item.kind == "call":
            body.append(f'<div class="call"><span class="badge">{esc(item.title)}</span> {esc(item.text)}</div>')
        elif item.kind in ("withheld", "reset"):
            body.append(f'<div class="step {item.kind}"{anchor}><div class="kind">{item.kind} {esc(item.title)}</div>'
                        f'{esc(item.text)}</div>')
        else:
            css = "tool failed" if item.kind == "error" else "tool"
            opened = " open" if len(item.text) <= 600 else ""
            body.append(f'<div class="{css}"{anchor}><details{opened}><summary>{esc(item.kind)} '
                        f'{esc(item.title)}</summary><pre>{esc(item.text)}</pre></details></div>')
    body.extend("</div>" for _ in range(depth))
    style = static_file("page.css").decode("utf-8")
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_EXPORT_CSP}\">"
        f"<title>{esc(title)}</title>"
        f"<style>{style}\npre.text {{ font: inherit; background: none; padding: 0; }}</style>"
        f"</head><body><main><h2>{esc(title)}</h2>"
        f"<div class=\"totals\">Session {esc(session['id'])} · {esc(str(session.get('first_time', '')))} → "
        f"{esc(str(session.get('last_time', '')))} · {doc['summary']['calls']} model calls · "
        f"{esc(_withheld_note(doc))}</div>\n" + "\n".join(body) + "\n</main></body></html>\n")
