"""``asz-pipeline schedule install|remove|status``: the system runs a pass on an interval.

Claude Code deletes its transcripts after 30 days, so collecting must not depend on someone
remembering to. ``install`` writes a systemd user timer (Linux) or a launchd agent (macOS)
that runs ``asz-pipeline run`` with the configuration in effect now, then starts it (``--no-start``
only writes the files, and prints the command that starts them). ``remove`` stops it and deletes
those files, nothing else: what landed stays. ``status`` says what is installed and what the
scheduler reports.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from asz_core import userdirs
from asz_core.cli.app import EXIT_FAILED, EXIT_OK, App
from asz_core.cli.schedule_units import (
    LAUNCHD_LABEL,
    SYSTEMD_NAME,
    Job,
    launchd_plist,
    systemd_service,
    systemd_timer,
)
from asz_core.config import find_config, parse_duration
from asz_core.errors import UsageError

__all__ = ["Scheduler", "add", "scheduler"]


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schedule", help="run a pass on an interval (systemd timer / launchd agent)",
                       description="install: write and start a systemd user timer (Linux) or a launchd "
                                   "agent (macOS) that runs `asz-pipeline run` with this configuration "
                                   "every INTERVAL. remove: stop it and delete its files (nothing "
                                   "landed is touched). status: what is installed and what the "
                                   "scheduler says.")
    p.add_argument("action", choices=["install", "remove", "status"])
    p.add_argument("--interval", metavar="DURATION",
                   help="time between passes (e.g. 10m, 1h); default: the smallest collector.interval "
                        "of the enabled adapters")
    p.add_argument("--no-start", action="store_true",
                   help="do not call the scheduler: install only writes the files (and prints the "
                        "command that starts them), remove only deletes them")
    p.set_defaults(func=run)


@dataclass(frozen=True)
class Scheduler:
    """Where one platform's scheduler keeps a user's jobs, and how it is told about them."""

    name: str
    files: tuple[Path, ...]
    start: tuple[tuple[str, ...], ...]
    stop: tuple[tuple[str, ...], ...]
    status: tuple[str, ...]

    def write(self, job: Job) -> None:
        self.files[0].parent.mkdir(parents=True, exist_ok=True)
        if self.name == "launchd":
            log = Path.home() / "Library" / "Logs" / "asz" / "pipeline.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            _replace(self.files[0], launchd_plist(job, log))
        else:
            _replace(self.files[0], systemd_service(job).encode())
            _replace(self.files[1], systemd_timer(job).encode())


def scheduler(platform: str | None = None) -> Scheduler:
    """The scheduler of this platform (``sys.platform`` unless given)."""
    platform = platform or sys.platform
    if platform == "darwin":
        plist = Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        domain = f"gui/{os.getuid()}"
        return Scheduler("launchd", (plist,),
                         start=(("launchctl", "bootstrap", domain, str(plist)),),
                         stop=(("launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"),),
                         status=("launchctl", "print", f"{domain}/{LAUNCHD_LABEL}"))
    if platform.startswith("linux"):
        units = Path(userdirs.config_dir()).parent / "systemd" / "user"
        timer = f"{SYSTEMD_NAME}.timer"
        return Scheduler("systemd", (units / f"{SYSTEMD_NAME}.service", units / timer),
                         start=(("systemctl", "--user", "daemon-reload"),
                                ("systemctl", "--user", "enable", "--now", timer)),
                         stop=(("systemctl", "--user", "disable", "--now", timer),),
                         status=("systemctl", "--user", "list-timers", timer, "--all"))
    raise UsageError(f"schedule: no scheduler is known for {platform}; run `asz-pipeline run --watch` "
                     f"under whatever keeps services running there")


def _replace(path: Path, data: bytes) -> None:
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temp.write_bytes(data)
    temp.chmod(0o644)  # the scheduler reads it; it holds no secret (the configuration is named, not copied)
    os.replace(temp, path)


def _call(command: tuple[str, ...], app: App) -> bool:
    import subprocess  # loaded by this command only, not by every command's start-up

    """Run one scheduler command; say what failed and return whether it worked."""
    if shutil.which(command[0]) is None:
        print(f"asz: {command[0]} is not on PATH", file=app.err)
        return False
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"asz: {' '.join(command)}: {exc}", file=app.err)
        return False
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        print(f"asz: {' '.join(command)} failed: {said[-1] if said else f'exit {done.returncode}'}", file=app.err)
        return False
    return True


def _interval(args: argparse.Namespace, app: App) -> int:
    try:
        if args.interval:
            return int(parse_duration(args.interval))
        intervals = [parse_duration(a.options["collector"]["interval"]) for a in app.config.adapters if a.enabled]
    except ValueError as exc:
        raise UsageError(f"--interval: {exc}") from None
    return int(min(intervals, default=600.0))


def run(args: argparse.Namespace, app: App) -> int:
    where = scheduler()
    if args.action == "install":
        config = find_config(args.config)
        job = Job.for_this_install(str(config) if config is not None else None, _interval(args, app))
        app.config  # noqa: B018 - the configuration must load before the system runs it unattended
        where.write(job)
        for path in where.files:
            print(f"wrote {path}", file=app.out)
        print(f"every {job.interval_s}s: {' '.join(job.command)} (storage root {app.config.root})", file=app.out)
        start = [" ".join(c) for c in where.start]
        if args.no_start:
            print(f"start it with: {' && '.join(start)}", file=app.out)
            return EXIT_OK
        if all(_call(c, app) for c in where.start):
            print(f"started ({where.name})", file=app.out)
            return EXIT_OK
        print(f"asz: the files are written but {where.name} did not start them; start them with: "
              f"{' && '.join(start)}", file=app.err)
        return EXIT_FAILED
    if args.action == "remove":
        present = [p for p in where.files if p.exists()]
        if not present:
            print(f"nothing to remove: {where.files[0]} is not there", file=app.out)
            return EXIT_OK
        stopped = args.no_start or all(_call(c, app) for c in where.stop)
        for path in present:
            path.unlink()
            print(f"removed {path}", file=app.out)
        if where.name == "systemd" and not args.no_start:
            _call(("systemctl", "--user", "daemon-reload"), app)
        return EXIT_OK if stopped else EXIT_FAILED
    present = [p for p in where.files if p.exists()]
    if not present:
        print(f"not installed ({where.files[0]} is not there); `asz-pipeline schedule install` installs it",
              file=app.out)
        return EXIT_FAILED
    for path in present:
        print(f"installed: {path}", file=app.out)
    if shutil.which(where.status[0]) is not None:
        import subprocess

        done = subprocess.run(where.status, capture_output=True, text=True, timeout=60, check=False)
        print((done.stdout or done.stderr).rstrip(), file=app.out)
    return EXIT_OK
