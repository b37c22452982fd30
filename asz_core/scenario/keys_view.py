"""The ``view`` expectation key: what the ``asz.view`` document of the scenario's session must say.

The document is built as a reader gets it (:func:`~asz_core.view.build_view`), withholding what
``hide`` names. Only what is written is compared (upstream's ``guides/scenario.md``, "Check"):

* ``state``, ``problems`` (how many), ``talks``, ``steps``, ``rounds``: the summary's;
* ``files``: every listed file, landed and round; ``provider_files``: the ``provider_body`` ones;
* ``provider_bodies``, ``captured_prompts``: the summary's; ``changes``: the change records listed,
  ``changed_files`` the files they name, ``changes_joined`` those joined to a step,
  ``captured_by`` them by observer; ``executions``, ``executions_joined``, ``outcomes`` likewise;
* ``flags``: the document's steps by each flag they carry;
* ``first_talk``: the first talk's ``label``, ``reply`` and ``runs``;
* ``hide``: built withholding these; then every step carrying one has no text and says
  ``omitted``, no withheld text is a talk's label or reply, and no call lists a provider body;
  ``withheld``: the summary's counts, name by name, and no count it does not list.

Always, whatever is written: ``summary.changes`` is the number of change records listed, and no
talk is named by an injection a reader may withhold, in the document withheld or whole. A key
the block does not know fails by name, rather than checking nothing.
"""

from __future__ import annotations

from typing import Any, Final

from asz_core.scenario.keys import register
from asz_core.scenario.workspace import Workspace
from asz_core.view import HIDEABLE, build_view
from asz_core.view.walk import walk

__all__: list[str] = []

_KNOWN: Final = frozenset({"state", "problems", "talks", "steps", "files", "rounds", "changes", "provider_bodies",
                           "provider_files", "captured_prompts", "flags", "executions", "executions_joined",
                           "outcomes", "changed_files", "changes_joined", "captured_by", "first_talk", "hide",
                           "withheld"})


def _counts(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _view(ws: Workspace, want: Any) -> str | None:
    if not isinstance(want, dict):
        return f"expected a mapping, got {want!r}"
    unknown = sorted(set(want) - _KNOWN)
    if unknown:
        return f"no such view key: {', '.join(unknown)}"
    hide = [str(h) for h in want.get("hide") or []]
    doc = build_view(ws.out, ws.session, hide=hide)
    summary = doc["summary"]
    bad: list[str] = []

    def expect(what: str, got: Any) -> None:
        if what in want and got != want[what]:
            bad.append(f"view.{what} is {got}, want {want[what]}")

    whole = build_view(ws.out, ws.session) if hide else doc
    for talk in whole["talks"]:  # in every document, no injection a reader may withhold names a talk
        named_by = [n for n in walk({"talks": [talk], "loose": []}) if n["kind"] == "context.injection"
                    and set(n.get("flags", [])) & set(HIDEABLE) and n.get("text") == talk.get("label")]
        if named_by:
            bad.append(f"talk {talk['id']} is named by {named_by[0]['id']}, which a reader may withhold")
    if hide:
        texts = {n["id"]: n.get("text") for n in walk(whole)}
        for node in walk(doc):
            if any(f in hide for f in node.get("flags", [])) and ("text" in node or node.get("state") != "omitted"):
                bad.append(f"step {node['id']} carries {node['flags']} and is not withheld")
            if node.get("provider_bodies"):
                bad.append(f"call {node['id']} lists provider bodies while something is withheld")
        withheld = {texts[n["id"]] for n in walk(doc) if n.get("state") == "omitted" and texts.get(n["id"])}
        for talk in doc["talks"]:
            if talk.get("label") in withheld or talk.get("reply") in withheld:
                bad.append(f"talk {talk['id']} shows withheld text as its label or reply")
    if "withheld" in want:
        wanted = want["withheld"] or {}
        for name, n in summary["withheld"].items():
            if name not in wanted:
                bad.append(f"view.withheld.{name} is {n}, and the expectation lists nothing for it")
        for name, n in wanted.items():
            if summary["withheld"].get(name) != n:
                bad.append(f"view.withheld.{name} is {summary['withheld'].get(name)}, want {n}")
    if "state" in want and summary["state"] != want["state"]:
        bad.append(f"view.state is {summary['state']} ({'; '.join(summary['problems'])}), want {want['state']}")
    if "problems" in want and len(summary["problems"]) != want["problems"]:
        bad.append(f"view.problems is {len(summary['problems'])} ({'; '.join(summary['problems'])}), "
                   f"want {want['problems']}")
    for key in ("talks", "steps", "rounds", "provider_bodies", "captured_prompts"):
        expect(key, summary[key])
    expect("files", len(doc["files"]))
    expect("provider_files", sum(1 for f in doc["files"] if f["kind"] == "provider_body"))
    changes, executions = doc["workspace_changes"], doc["tool_executions"]
    if summary["changes"] != len(changes):
        bad.append(f"view.summary.changes is {summary['changes']}, the document lists {len(changes)}")
    expect("changes", len(changes))
    expect("changed_files", sum(len(c.get("changes") or []) for c in changes))
    expect("changes_joined", sum(1 for c in changes if c["step"]))
    expect("executions", len(executions))
    expect("executions_joined", sum(1 for e in executions if e["step"]))
    for key, got in (("captured_by", _counts(c.get("captured_by") for c in changes)),
                     ("outcomes", _counts(e.get("outcome") for e in executions)),
                     ("flags", _counts(f for n in walk(doc) for f in n.get("flags", [])))):
        for name, n in (want.get(key) or {}).items():
            if got.get(name, 0) != n:
                bad.append(f"view.{key}.{name} is {got.get(name, 0)}, want {n}")
    first = want.get("first_talk")
    if first is not None:
        if not doc["talks"]:
            bad.append("view.first_talk: the document has no talks")
        else:
            talk = doc["talks"][0]
            for key in ("label", "reply", "runs"):
                if key in first and talk.get(key, "" if key != "runs" else 0) != first[key]:
                    bad.append(f"view.first_talk.{key} is {talk.get(key)!r}, want {first[key]!r}")
    return "; ".join(bad) or None


register("view", _view)
