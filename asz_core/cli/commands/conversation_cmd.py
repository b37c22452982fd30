"""``asz-pipeline conversation ID``: fold a conversation's round chain and print what it holds.

Plain, the fold as a tree for a person. With ``--json`` or ``--yaml``, the conversation's whole
``asz.view`` document, as upstream's ``asz conversation -json``/``-yaml`` print it: withholding
nothing, since whoever runs the command reads the storage root itself.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("conversation", help="fold a conversation's rounds and print it",
                       description="Fold every round of _conversations/<ID>/ in order and print the "
                                   "structure: the head, then the tree of nodes, the relations and the "
                                   "unresolved references. Exit 1 when the chain cannot be folded.")
    p.add_argument("conversation", metavar="ID")
    shape = p.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="the asz.view document, as JSON")
    shape.add_argument("--yaml", action="store_true", help="the asz.view document, as YAML")
    p.set_defaults(func=run)


def fold_document(fold: Any) -> dict[str, Any]:
    return {"conversation": fold.first.get("conversation") if fold.first else "",
            "session": fold.first.get("session") if fold.first else "",
            "round": fold.rounds, "digest": fold.digest, "through_seq": fold.through_seq,
            "nodes": [{**n, "revision": fold.revisions.get(n["id"], 0)} for n in fold.nodes.values()],
            "relations": list(fold.relations.values()), "unresolved": list(fold.unresolved.values())}


def _tree(fold: Any) -> list[str]:
    children: dict[str, list[dict[str, Any]]] = {}
    for n in sorted(fold.nodes.values(), key=lambda n: (n.get("ref", {}).get("seq", 0),
                                                        n.get("ref", {}).get("row", 0), n["id"])):
        children.setdefault(n.get("parent", ""), []).append(n)
    lines: list[str] = []

    def walk(parent: str, depth: int) -> None:
        for n in children.get(parent, []):
            attrs = n.get("attrs") or {}
            note = " ".join(f"{k}={v}" for k, v in attrs.items() if not isinstance(v, (dict, list)))
            lines.append(f"{'  ' * depth}{n['kind']} {n['id']}" + (f"  {note}" if note else ""))
            walk(n["id"], depth + 1)

    roots = [p for p in children if p not in fold.nodes]
    for parent in sorted(roots):
        walk(parent, 0)
    return lines


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.assembly.chain import Chain
    from asz_core.assembly.flow import RoundError

    chain = Chain(app.config.root, args.conversation)
    try:
        if not chain.files():
            print(f"conversation: no rounds under {chain.dir} (run asz-pipeline parse first)", file=app.err)
            return EXIT_FAILED
        fold = chain.fold()
    except (RoundError, OSError) as exc:
        print(f"conversation: {args.conversation}: the chain cannot be folded: {exc}", file=app.err)
        return EXIT_FAILED
    doc = fold_document(fold)
    if args.json or args.yaml:
        from asz_core.view import ViewError, build_view
        from asz_core.view.yamlform import render_yaml

        try:
            view = build_view(app.config.root, args.conversation)
        except ViewError as exc:
            print(f"conversation: {args.conversation}: {exc}", file=app.err)
            return EXIT_FAILED
        text = json.dumps(view, ensure_ascii=False, indent=2) + "\n" if args.json else render_yaml(view)
        app.out.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    else:
        h = fold.head or {}
        print(f"conversation {doc['conversation']}  session {doc['session']}  round {fold.rounds} "
              f"({fold.digest[:12]})  through seq {fold.through_seq}", file=app.out)
        print(f"talks {h.get('talks', 0)}  steps {h.get('steps', 0)}  streams {h.get('streams', 0)}  "
              f"segments {h.get('segments', 0)}  open {h.get('unresolved', 0)}"
              + (f"  title {h['title']!r}" if h.get("title") else ""), file=app.out)
        for line in _tree(fold):
            print(line, file=app.out)
        for r in fold.relations.values():
            print(f"{r['type']} {r['from']} -> {r['to']} ({r['quality']})", file=app.out)
        for u in fold.unresolved.values():
            print(f"unresolved {u['kind']} {u.get('ref', '')}: {u['state']} ({u.get('reason', '')})",
                  file=app.out)
    return EXIT_OK
