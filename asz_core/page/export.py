"""One conversation as one file a person can share: HTML (self-contained) or Markdown.

1. The file is made from what the page draws: upstream's ``asz.view`` document
   (:meth:`Catalogue.document`) and the page's additions to it (:meth:`Catalogue.additions`),
   less what is withheld: a withheld step is a line saying what was withheld and its size.
2. The conversation is read in the page's order: each stream's talks, the trees no talk
   contains and the prompts no node shows, by the position of their records; a child agent's
   stream inline after the call that started it; then any stream nothing started.
3. The HTML carries its style inline and a Content-Security-Policy that forbids every fetch and
   every script, so it opens with no network and nothing in it runs; every text is escaped.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from asz_core.page.assets import static_file

__all__ = ["Item", "items", "to_html", "to_markdown"]

_HIDEABLE: Final = ("system_prompt", "tool_schemas")
_CONTAINERS: Final = ("talk", "run", "epoch")
_EXPORT_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class Item:
    """One thing to show: ``kind`` is prompt, reply, thinking, tool, result, error, reset,
    summary, withheld, context, injected, runtime, child (a child agent starts; ``depth`` says
    how deep) or call."""

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


def _position(ref: dict[str, Any] | None, first: int) -> tuple[int, int, int, int]:
    ref = ref or {}
    block = ref.get("block")
    return (int(ref.get("seq") or 0), int(ref.get("row") or 0), -1 if block is None else int(block), first)


def items(doc: dict[str, Any], additions: dict[str, Any]) -> Iterator[Item]:
    """The conversation as a flat sequence of :class:`Item`, in reading order (rule 2)."""
    streams = {s["id"]: s for s in doc["streams"]}
    tops: dict[str, list[tuple[tuple[int, int, int, int], dict[str, Any], bool]]] = {}
    for node in (*doc["talks"], *doc["loose"]):
        tops.setdefault(node["stream"], []).append((_position(node.get("ref"), 1), node, False))
    for prompt in additions["prompts"]:
        tops.setdefault(prompt["stream"], []).append((_position(prompt["ref"], 0), prompt, True))
    for listed in tops.values():
        listed.sort(key=lambda entry: entry[0])
    placed: set[str] = set()
    anchors: set[str] = set()

    def anchor_of(ref: dict[str, Any] | None) -> str:
        if not ref or not ref.get("seq"):
            return ""
        for anchor in (f"s-{ref['seq']}-{ref['row']}", f"s-{ref['seq']}-{ref['row']}-{ref.get('block') or 0}"):
            if anchor not in anchors:
                anchors.add(anchor)
                return anchor
        return ""

    def stream_items(stream: dict[str, Any], depth: int) -> Iterator[Item]:
        placed.add(stream["id"])
        if stream["role"] != "main":
            yield Item("child", stream.get("label") or "", depth, title=f"child agent {stream['name']}")
        for _, node, is_prompt in tops.get(stream["name"], []):
            if is_prompt:
                yield Item("prompt", node["text"], depth, anchor=anchor_of(node["ref"]))
            else:
                yield from node_items(node, depth)

    def node_items(node: dict[str, Any], depth: int) -> Iterator[Item]:
        kind: str = node["kind"]
        text: Any = node.get("text")
        flagged = [f for f in node.get("flags", []) if f in _HIDEABLE]
        if node.get("state") == "omitted" and flagged:
            yield Item("withheld", f"{node.get('bytes', 0)} bytes withheld", depth, title=", ".join(flagged),
                       anchor=anchor_of(node.get("ref")))
            return
        anchor = "" if kind in _CONTAINERS else anchor_of(node.get("ref"))
        if kind == "llm.call":
            ref = node.get("ref") or {}
            usage = node.get("usage", {})
            yield Item("call", " · ".join(f"{k} {usage[k]}" for k in ("in", "out", "cache_read", "cache_write")
                                          if k in usage), depth,
                       title=additions["models"].get(f"{ref.get('seq')}:{ref.get('row')}", "model call"))
        elif kind in ("tool", "agent.call"):
            yield Item("tool", _pretty(text) if text is not None else "", depth, title=node.get("name", "tool"),
                       anchor=anchor)
            if "result_state" in node:
                yield Item("error" if node.get("failed") else "result",
                           node.get("result", f"({node['result_state']})"), depth)
            for edge in node.get("edges", []):
                if edge["type"] == "starts" and edge["dir"] == "out" and edge["other"] in streams \
                        and edge["other"] not in placed:
                    yield from stream_items(streams[edge["other"]], depth + 1)
        elif kind in _CONTAINERS or (text is None and kind != "epoch.boundary"):
            pass
        elif flagged:
            yield Item("context", _pretty(text), depth, title=", ".join(flagged), anchor=anchor)
        elif kind == "message.external":
            yield Item("prompt", text, depth, anchor=anchor)
        elif kind == "message.assistant":
            yield Item("reply", text, depth, anchor=anchor)
        elif kind == "thinking":
            yield Item("thinking", text, depth, anchor=anchor)
        elif kind == "context.injection":
            yield Item("injected", _pretty(text), depth, title="by the runtime", anchor=anchor)
        elif kind.startswith("error"):
            yield Item("error", _pretty(text), depth, anchor=anchor)
        elif kind == "epoch.boundary":
            yield Item("reset", "context reset", depth, anchor=anchor)
        elif kind == "epoch.summary":
            yield Item("summary", text, depth, title="of the conversation before the reset", anchor=anchor)
        else:
            yield Item("runtime", text, depth, title=kind, anchor=anchor)
        for child in node.get("children", []):
            yield from node_items(child, depth)

    main = next((s for s in doc["streams"] if s["role"] == "main"), None)
    if main is not None:
        yield from stream_items(main, 0)
    for stream in doc["streams"]:
        if stream["id"] not in placed:
            yield from stream_items(stream, 0)


def _title(doc: dict[str, Any], additions: dict[str, Any]) -> str:
    if doc["summary"].get("title"):
        return str(doc["summary"]["title"])
    for item in items(doc, additions):
        if item.kind == "prompt":
            return " ".join(item.text.split())[:100]
    return str(doc["conversation"])


def _when(ms: Any) -> str:
    if not isinstance(ms, int) or ms <= 0:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _head(doc: dict[str, Any]) -> str:
    summary = doc["summary"]
    hidden = [name for name in summary.get("withheld", {}) if name in _HIDEABLE]
    withheld = f"Withheld: {', '.join(hidden)}." if hidden else "Nothing withheld."
    calls = summary.get("kinds", {}).get("llm.call", 0)
    return (f"Conversation {doc['conversation']} · {_when(summary.get('from'))} → {_when(summary.get('to'))} · "
            f"{calls} model calls · {withheld}")


def to_markdown(doc: dict[str, Any], additions: dict[str, Any]) -> str:
    out = [f"# {_title(doc, additions)}", "", _head(doc), ""]
    fence = "````"
    for item in items(doc, additions):
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


def to_html(doc: dict[str, Any], additions: dict[str, Any]) -> str:
    esc = html.escape
    title = _title(doc, additions)
    body: list[str] = []
    depth = 0
    for item in items(doc, additions):
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
        f"<div class=\"totals\">{esc(_head(doc))}</div>\n" + "\n".join(body) + "\n</main></body></html>\n")
