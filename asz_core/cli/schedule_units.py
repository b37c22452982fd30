"""The files that make the system run a pass on an interval: a systemd user service and timer
(Linux), or a launchd agent (macOS). Pure text, so that what ``schedule install`` writes is
what a test reads.

- The service is one pass (``Type=oneshot``): a pass that outlives the interval is not started
  twice (systemd starts a oneshot unit again only once it has ended; ``asz-pipeline run`` also
  refuses a root another pass holds, exit 3).
- The timer starts a pass a minute after it is started (at login, or by ``install``), then
  ``interval`` after each pass started. (``OnUnitActiveSec`` alone would never fire: it counts
  from the service's last start, and a service never started has none.)
- The launchd agent runs a pass when it loads and then every ``interval`` seconds; its output
  goes to ``~/Library/Logs/asz/pipeline.log``.
- The command names the configuration file and ``$ASZ_ROOT`` as they are now, by absolute
  path, and runs in the working directory ``install`` ran in, since relative paths in a
  configuration resolve against it and the scheduler would otherwise start it in ``$HOME``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LAUNCHD_LABEL", "SYSTEMD_NAME", "Job", "launchd_plist", "systemd_quote", "systemd_service",
           "systemd_timer"]

SYSTEMD_NAME = "asz-pipeline"
LAUNCHD_LABEL = "org.asz.pipeline"


@dataclass(frozen=True)
class Job:
    """What the scheduler runs: ``command`` (absolute paths), every ``interval_s`` seconds."""

    command: list[str]
    interval_s: int
    cwd: str
    environment: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_this_install(cls, config: str | None, interval_s: int) -> Job:
        """A pass by this installation of asz (the ``asz-pipeline`` beside this Python, else
        ``python -m asz_core.cli``), with ``config`` if one was named or found."""
        script = Path(sys.executable).with_name("asz-pipeline")
        command = [str(script)] if script.is_file() else [sys.executable, "-m", "asz_core.cli"]
        command.append("run")
        if config:
            command += ["--config", os.path.abspath(config)]
        env = {k: os.path.abspath(os.environ[k]) for k in ("ASZ_ROOT",) if os.environ.get(k)}
        return cls(command, max(1, interval_s), os.getcwd(), env)


def systemd_quote(word: str) -> str:
    """``word`` as one argument of a systemd ``ExecStart=`` line (``%`` is a specifier there)."""
    word = word.replace("%", "%%")
    if word and not any(c in word for c in ' \t"\'\\;$'):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_service(job: Job) -> str:
    env = "".join(f"Environment={systemd_quote(f'{k}={v}')}\n" for k, v in sorted(job.environment.items()))
    return (
        "[Unit]\n"
        "Description=asz: land what AI coding agents wrote since the last pass\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"WorkingDirectory={job.cwd.replace('%', '%%')}\n"
        f"{env}"
        f"ExecStart={' '.join(systemd_quote(w) for w in job.command)}\n"
        "Nice=10\n"
        "IOSchedulingClass=idle\n"
    )


def systemd_timer(job: Job) -> str:
    return (
        "[Unit]\n"
        f"Description=asz: a pass every {job.interval_s}s\n"
        "\n"
        "[Timer]\n"
        "OnActiveSec=1min\n"
        f"OnUnitActiveSec={job.interval_s}s\n"
        f"Unit={SYSTEMD_NAME}.service\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )


def launchd_plist(job: Job, log: Path) -> bytes:
    agent: dict[str, object] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": job.command,
        "WorkingDirectory": job.cwd,
        "StartInterval": job.interval_s,
        "RunAtLoad": True,
        "ProcessType": "Background",
        "LowPriorityIO": True,
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    }
    if job.environment:
        agent["EnvironmentVariables"] = dict(job.environment)
    import plistlib  # macOS only: not loaded by every command's start-up

    return plistlib.dumps(agent)
