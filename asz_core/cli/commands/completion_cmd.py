"""``asz-pipeline completion bash|zsh``: a completion script for the shell, made from the parser.

The script is static text: every command (plugins' included, as installed now), its options and
the values of those that take a fixed set, so completing costs the shell a function call and never
starts Python. Install it once, and again after installing a plugin that adds commands::

    asz-pipeline completion bash > ~/.local/share/bash-completion/completions/asz-pipeline
    asz-pipeline completion zsh > "${fpath[1]}/_asz-pipeline"     # or source it from ~/.zshrc
"""

from __future__ import annotations

import argparse

from asz_core.cli.app import EXIT_OK, App

__all__ = ["add", "script"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("completion", help="print a shell completion script (bash or zsh)",
                       description="Print a completion script for asz-pipeline's commands and options: "
                                   "`asz-pipeline completion bash > ~/.local/share/bash-completion/"
                                   "completions/asz-pipeline`, or for zsh into a directory of $fpath "
                                   "as _asz-pipeline.")
    p.add_argument("shell", choices=["bash", "zsh"])
    p.set_defaults(func=run)


def _words(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    """A parser's options and positional choices, and the choices each option takes."""
    words: list[str] = []
    values: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            words.extend(o for o in action.option_strings if o.startswith("--"))
            if action.choices:
                values.update({o: [str(c) for c in action.choices] for o in action.option_strings})
        elif action.choices:
            words.extend(str(c) for c in action.choices)
    return words, values


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``parser`` (the whole ``asz-pipeline`` parser)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    top, _ = _words(parser)
    cases, value_cases = [], []
    for name, command in sorted(sub.choices.items()):
        words, values = _words(command)
        cases.append(f'        {name}) words="{" ".join(sorted(set(words)))}" ;;')
        for option, choices in sorted(values.items()):
            value_cases.append(f'        {name}:{option}) words="{" ".join(choices)}" ;;')
    body = f'''_asz_pipeline() {{
    local cur prev command words i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    command=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            --config) ((i++)) ;;
            -*) ;;
            *) command="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    if [[ "$prev" == --config ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    words=""
    case "$command:$prev" in
{chr(10).join(value_cases)}
    esac
    if [[ -z "$words" ]]; then
        case "$command" in
        "") words="{" ".join(sorted(sub.choices))} {" ".join(top)}" ;;
{chr(10).join(cases)}
        esac
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _asz_pipeline asz-pipeline
'''
    if shell == "zsh":
        return "#compdef asz-pipeline\nautoload -U +X bashcompinit && bashcompinit\n" + body
    return body


def run(args: argparse.Namespace, app: App) -> int:
    from asz_core.cli.main import build_parser

    print(script(build_parser(app), args.shell), end="", file=app.out)
    return EXIT_OK
