"""``asz-pipeline scenario build|check``: upstream's conformance harness (``asz_core.scenario``)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from asz_core.cli.app import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, App

__all__ = ["add"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("scenario", help="build a scenario's files, or check one",
                       description="Turn a scenario (a conversation described in YAML) into the files a "
                                   "real session leaves, or run it as a test against its NAME.expect.yaml.")
    what = p.add_subparsers(dest="scenario_command", metavar="build|check", required=True)
    b = what.add_parser("build", help="write a scenario's files and DIR/asz.yaml")
    b.add_argument("files", nargs="+", metavar="FILE", help="a scenario, several, or a directory of them")
    b.add_argument("--format", choices=("claude-code", "sd"), default="claude-code")
    b.add_argument("--out", required=True, metavar="DIR", help="the directory; it ends as a storage root")
    _clock(b)
    b.add_argument("--through", default="", metavar="NAME", help="only the steps up to this checkpoint")
    b.add_argument("--repeat", type=int, default=1, metavar="N", help="N sessions end to end on the clock")
    b.add_argument("--every", default="", metavar="D", help="keep building: one session every D, until stopped")
    b.add_argument("--pick", choices=("cycle", "random"), default="cycle")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--remove", default="immediately", metavar="POLICY",
                   help="claude-code only: immediately, or a duration after the last record (24h, 7d)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_build)
    c = what.add_parser("check", help="build, collect and compare with NAME.expect.yaml; then the properties")
    c.add_argument("files", nargs="+", metavar="FILE|DIR")
    c.add_argument("--format", choices=("claude-code", "sd", "all"), default="all")
    c.add_argument("--out", default="", metavar="DIR",
                   help="keep the work here (else a temporary directory, in memory where there is one)")
    _clock(c)
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_check)


def _clock(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at", default=None, metavar="TIME", help="the base time, RFC 3339, or now")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every delta")
    p.add_argument("--interval", default="", metavar="D", help="overrides the scenario's interval")


def _scenario_files(names: list[str]) -> list[Path]:
    out: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            out.extend(sorted(f for f in path.glob("*.yaml") if not f.name.endswith(".expect.yaml")))
        else:
            out.append(path)
    return out


def _say_policy(app: App, args: argparse.Namespace) -> None:
    """A ``claude-code`` build says when a pipeline removes what it wrote."""
    from asz_core.scenario.build import describe_policy

    if args.format == "claude-code" and not getattr(args, "json", False):
        print(f"remove   : {describe_policy(args.remove)}", file=app.out)


def run_build(args: argparse.Namespace, app: App) -> int:
    import random

    from asz_core.scenario import build as b
    from asz_core.scenario.model import ScenarioError, load_scenario, parse_duration

    try:
        scenarios = [load_scenario(f) for f in _scenario_files(args.files)]
        opts = b.BuildOptions(format=args.format, at_ms=b.parse_at(args.at), scale=args.scale,
                              interval_ms=parse_duration(args.interval, "--interval") if args.interval else 0.0,
                              through=args.through, repeat=args.repeat, remove=args.remove,
                              watch=bool(args.every))
        b.check_options(opts)
        if not scenarios:
            raise ScenarioError("no scenario given")
        out = Path(args.out)
        if not args.every:
            if len(scenarios) > 1:
                raise ScenarioError("several scenarios are built with --every; give one, or a feed")
            built = b.build(scenarios[0], out, opts)
            ids = built.sessions
            named = ", ".join(ids) if len(ids) <= 3 else f"{ids[0]} … {ids[-1]}"
            _say(app, args, {"out": str(out), "format": args.format, "sessions": ids, "files": len(built.files)},
                 f"built {len(ids)} session(s) ({named}) into {out}; {len(built.files)} file(s)")
            _say_policy(app, args)
            return EXIT_OK
        period = b.every_ms(args.every) / 1000.0
        _say_policy(app, args)
        chooser = random.Random(args.seed or None)
        count = 0
        while args.repeat <= 1 or count < args.repeat:
            scenario = (scenarios[count % len(scenarios)] if args.pick == "cycle" else chooser.choice(scenarios))
            b.write_config(out, scenario, opts)
            p = b.build_one_feed_session(scenario, out, opts)
            count += 1
            _say(app, args, {"session": p.session, "scenario": scenario.name}, f"built {p.session} ({scenario.name})")
            if args.repeat > 1 and count >= args.repeat:
                break
            time.sleep(period)
        return EXIT_OK
    except ScenarioError as exc:
        print(f"asz: scenario: {exc}", file=app.err)
        return EXIT_CONFIG


def run_check(args: argparse.Namespace, app: App) -> int:
    from asz_core.scenario.build import parse_at
    from asz_core.scenario.check import CheckOptions, check_scenario
    from asz_core.scenario.model import ScenarioError, parse_duration

    try:
        files = _scenario_files(args.files)
        if not files:
            raise ScenarioError("no scenario given")
        formats = ("claude-code", "sd") if args.format == "all" else (args.format,)
        opts = CheckOptions(formats=formats, out=Path(args.out) if args.out else None,
                            at_ms=parse_at(args.at) if args.at else None, scale=args.scale,
                            interval_ms=parse_duration(args.interval, "--interval") if args.interval else 0.0)
        reports = [check_scenario(f, opts) for f in files]
    except ScenarioError as exc:
        print(f"asz: scenario: {exc}", file=app.err)
        return EXIT_CONFIG
    failed = any(not r.ok for r in reports)
    if args.json:
        print(json.dumps({"ok": not failed, "scenarios": [r.to_json() for r in reports]}), file=app.out)
    else:
        for report in reports:
            for line in report.lines():
                print(line, file=app.out)
        passed = sum(r.passed for r in reports)
        failures = sum(len(r.failures) for r in reports)
        print(f"scenario check: scenarios={len(reports)} passed={passed} failed={failures}", file=app.out)
    return EXIT_FAILED if failed else EXIT_OK


def _say(app: App, args: argparse.Namespace, obj: dict[str, object], line: str) -> None:
    print(json.dumps(obj) if args.json else line, file=app.out, flush=True)
