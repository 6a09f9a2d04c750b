"""Whether a task runs here: the image it needs, and what stops it from running offline.

This project's VMs have no route to the internet and no Docker; its images hold neither the Astro CLI,
Airbyte nor Metabase. :func:`offline_blockers` reads a task's own JSON (the commands of its ``execute``,
``command`` and ``launch`` steps, the URLs the host fetches) and the shell scripts its setup steps copy
or run (``script_and_execute``'s ``src``, any ``*.sh`` or ``#!/bin/sh`` file a step copies), and says
what of these it needs, each reason with the place it was found. The rules are few and conservative
(a task is only held back on a command that would run):

- a command of the script or step counts; a comment (``# ...``), the text an ``echo`` or ``printf``
  prints and a here-document's body do not. ``bash -c '...'``, ``$(...)`` and backquotes are read as
  commands; ``sudo``, ``nohup``, ``env`` and ``VAR=value`` before a command are skipped;
- ``docker`` or ``docker-compose`` is Docker; ``astro`` the Astro CLI; ``abctl`` or ``run-ab-platform.sh``
  Airbyte; ``metabase*.jar`` Metabase; a registered name that cannot run here (``tasks check``'s
  ``not runnable here``) counts by its prefix (``astro_webui_init``, ``airbyte_*``, ``metabase_*``);
- ``wget`` or ``curl`` of an http(s)/ftp URL, or ``git clone`` of a remote repository, fetches from the
  internet unless the host is the VM itself (``localhost``, ``127.*``, ``0.0.0.0``, ``::1``) or a shell
  variable; so does a URL the host fetches for a setup step or getter (``download``, ``cloud_file``)
  when no download mirror is given. ``pip install`` does not count (the spider2v image's environments hold
  the suite's pins, and pip needs no network for what is installed; it has no wheelhouse for more),
  nor does a start page Chromium opens (it is not waited for offline);
- a task that needs a cloud account (:attr:`TaskSpec.needs_account`) says so too;
- so does a task this project keeps a reason for (``cannot_run_here`` in :mod:`desktop_env.tasks.references`:
  its own code fetches from the internet, say, which these rules do not read).

A variable holding a command (``$DOCKER run``), a Python file's own fetches, and scripts the evaluator
runs after the agent are not read.
"""
from __future__ import annotations

import re
import shlex
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from desktop_env.tasks.common import (ACCOUNT, AIRBYTE, ASTRO, DOCKER, EXTRA, INTERNET, KINDS, METABASE,  # noqa: F401
                                      SOFTWARE, UNAVAILABLE, TaskFileNotFound, is_remote_url, runtime_cache_part)
from desktop_env.tasks.urls import host_path_values, task_urls
from desktop_env.extras import install_hint, missing_extras

if TYPE_CHECKING:
    from desktop_env.tasks.spec import TaskSpec


#: A registered name that cannot run here counts as the tool its prefix names.
_NAME_PREFIXES = {"astro_": ASTRO, "airbyte_": AIRBYTE, "metabase_": METABASE}
#: Steps whose ``command`` runs in the VM.
_COMMAND_STEPS = ("execute", "command", "launch")
_SHELLS = ("sh", "bash", "dash", "zsh")
#: Words before the command that only change how it runs; options of theirs that take a value.
_PREFIX_WORDS = {"sudo", "nohup", "exec", "time", "command", "builtin", "env", "nice", "setsid", "stdbuf", "xargs",
                 "timeout", "if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"}
_PREFIX_OPTIONS_WITH_VALUE = {"-u", "-g", "-p", "-C", "-D", "-h", "-r", "-t", "-U", "-n", "-s", "-k"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_URL = re.compile(r"(?:https?|ftp|git|ssh)://[^\s'\"]+|git@[^\s:'\"]+:")
_LOCAL_HOSTS = {"localhost", "0.0.0.0", "::1"}
_SHOWN_CHARS = 80  # of a command quoted in a reason
#: A host-file field of a setup step: (step label, field inside its parameters).
_STEP_FIELD = re.compile(r"^((?:config|evaluator\.postconfig)\[\d+\])\.(?:parameters|arguments)\.(.+)$")


@dataclass(frozen=True)
class Blocker:
    """One thing that stops a task from running here.

    Attributes:
        kind: a key of :data:`KINDS`.
        where: where it was found: ``init.sh line 12: docker compose up -d``, ``config[2] execute: ...``,
            ``setup step astro_webui_init``.
    """

    kind: str
    where: str

    def __str__(self) -> str:
        return f"{KINDS[self.kind]} ({self.where})"


def offline_blockers(task: "TaskSpec", download_mirror: bool = False) -> list[Blocker]:
    """What stops ``task`` from running offline here, at most one reason per kind (the first place it is
    found, in the order of the task's steps), in the order of :data:`KINDS`; empty when it runs.

    Args:
        task: a loaded task.
        download_mirror: the run serves the URLs the host fetches from a download mirror
            (``run.py --download_mirror``), so they do not count.
    """
    found: dict[str, Blocker] = {}
    steps = [(f"config[{i}]", s) for i, s in enumerate(task.config)]
    if task.evaluator is not None:
        steps += [(f"evaluator.postconfig[{i}]", s) for i, s in enumerate(task.evaluator.postconfig)]
    files = _host_files(task)
    for label, step in steps:
        command = step.params.get("command") if step.name in _COMMAND_STEPS else None
        if command:
            text = command if isinstance(command, str) else shlex.join(str(w) for w in command)
            for _line, shown, kind in scan_shell(text):
                found.setdefault(kind, Blocker(kind, f"{label} {step.name}: {shown}"))
        for field_, path in files.get(label, []):
            runs = step.name == "script_and_execute" and field_ == "src"
            if not (runs or _is_shell_script(path)) or _is_binary(path):
                continue
            for line, shown, kind in scan_shell(path.read_text(encoding="utf-8", errors="replace")):
                found.setdefault(kind, Blocker(kind, f"{_display_name(task, path)} line {line}: {shown}"))
    if not download_mirror:
        for url, dotted in task_urls(task):
            if not is_local_url(url):
                found.setdefault(INTERNET, Blocker(INTERNET, f"{dotted}: {url}"))
    for (kind, name), status in task.name_statuses().items():
        if status == "unavailable":
            tool = next((k for prefix, k in _NAME_PREFIXES.items() if name.startswith(prefix)), UNAVAILABLE)
            found.setdefault(tool, Blocker(tool, f"{kind} {name}"))
    metrics = [name for kind, name in task.names_used() if kind == "metric"]
    for extra, names in missing_extras(metrics).items():
        found.setdefault(EXTRA, Blocker(EXTRA, f"metric {', '.join(names)} needs the {extra} extra: "
                                               f"{install_hint(extra)}"))
    if task.needs_account:
        found.setdefault(ACCOUNT, Blocker(ACCOUNT, _account_detail(task)))
    for kind, where in _kept_reasons(task.id):
        found.setdefault(kind, Blocker(kind, where))
    return [found[k] for k in KINDS if k in found]


def _kept_reasons(task_id: str) -> list[tuple[str, str]]:
    """The reasons this project keeps for a task no solution can solve here (``cannot_run_here`` in
    :mod:`desktop_env.tasks.references`), each ``where`` ending with the file that keeps it."""
    from desktop_env.tasks.references import kept_solution

    kept = kept_solution(task_id)
    if kept is None:
        return []
    package_root = Path(__file__).resolve().parents[2]  # the checkout (or site-packages) holding desktop_env/
    shown = kept.path.relative_to(package_root) if kept.path.is_relative_to(package_root) else kept.path
    return [(kind, f"{where}; kept in {shown}") for kind, where in kept.cannot_run_here]


def profiles_provided(profile: str) -> set[str]:
    """The image profiles an image of ``profile`` provides: itself and every profile it extends."""
    from desktop_env.image.recipe import Recipe

    known = set(Recipe.available())
    provided, name = set(), profile
    while name and name not in provided and name in known:
        provided.add(name)
        name = Recipe.load(name).extends
    return provided


def image_needed(task: "TaskSpec") -> str | None:
    """The image profile ``task`` needs (:attr:`TaskSpec.image_profile`), or None when every image of this
    repository runs it (no profile, or one every profile extends, like ``base``)."""
    from desktop_env.image.recipe import Recipe

    profile = task.image_profile
    if profile is None or all(profile in profiles_provided(p) for p in Recipe.available()):
        return None
    return profile


def counts_text(counts: dict[str, int]) -> str:
    """``uses the Astro CLI: 22, uses Docker: 10`` for ``{reason kind: tasks}``, most first. A task is counted
    once, under its first reason (``offline_blockers(task)[0].kind``)."""
    return ", ".join(f"{KINDS.get(kind, kind)}: {n}" for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def runs_here_text(image: str | None, blockers: list[Blocker]) -> str:
    """The one-line answer: ``runs on image spider2v``, ``runs on any image`` or ``not runnable here: ...``."""
    if blockers:
        return "not runnable here: " + "; ".join(map(str, blockers))
    return f"runs on image {image}" if image else "runs on any image"


# --------------------------------------------------------------------------- the files steps copy or run
def _host_files(task: "TaskSpec") -> dict[str, list[tuple[str, Path]]]:
    """step label (``config[1]``) -> (field, host file) of each task file the step names (``("src", init.sh)``);
    URLs, run-time cache files, account settings and files that do not exist (a load error) left out."""
    out: dict[str, list[tuple[str, Path]]] = {}
    for value, dotted in host_path_values(task):
        m = _STEP_FIELD.match(dotted)
        if m is None or is_remote_url(value) or runtime_cache_part(value) is not None:
            continue
        if task.settings_template(value) is not None:
            continue
        try:
            path = task.resolve_path(value)
        except TaskFileNotFound:
            continue
        if path.is_file():
            out.setdefault(m.group(1), []).append((m.group(2), path))
    return out


def _is_shell_script(path: Path) -> bool:
    """A ``.sh``/``.bash`` file, or one whose ``#!`` line names a shell (``#!/usr/bin/env bash`` too)."""
    if path.suffix in (".sh", ".bash"):
        return True
    try:
        with path.open("rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    words = first[2:].split()[:2] if first.startswith(b"#!") else []
    return any(Path(w.decode("utf-8", "replace")).name in _SHELLS for w in words)


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return b"\0" in f.read(8192)
    except OSError:
        return True


def _display_name(task: "TaskSpec", path: Path) -> str:
    if task.task_dir is not None:
        try:
            return str(path.relative_to(task.task_dir))
        except ValueError:
            pass
    return path.name


def _account_detail(task: "TaskSpec") -> str:
    names = [f"{kind} {name}" for (kind, name), status in task.name_statuses().items() if status == "account"]
    if names:
        return names[0]
    if task.settings_needed:
        return f"settings file {task.settings_needed[0]}"
    return "tag 'account'"


# --------------------------------------------------------------------------- shell text
def scan_shell(text: str) -> Iterator[tuple[int, str, str]]:
    """(line number, the command as shown, reason kind) for each command of shell ``text`` that needs
    something this project does not have (the rules are in the module docstring)."""
    for line, command in shell_commands(text):
        words = _words(command)
        shown = " ".join(words)
        shown = shown if len(shown) <= _SHOWN_CHARS else shown[:_SHOWN_CHARS - 3] + "..."
        for kind in _kinds_of(words):
            yield line, shown, kind


def _kinds_of(words: list[str]) -> Iterator[str]:
    """The reason kinds one simple command (its words) gives."""
    words = _strip_prefixes(words)
    if not words:
        return
    cmd, args = Path(words[0]).name, words[1:]
    if cmd in ("echo", "printf"):
        return
    if cmd in _SHELLS:  # bash -c 'script'
        flag = next((i for i, w in enumerate(args) if re.fullmatch(r"-[a-z]*c[a-z]*", w)), None)
        if flag is not None and flag + 1 < len(args):
            yield from (kind for _line, _shown, kind in scan_shell(args[flag + 1]))
    if cmd in ("docker", "docker-compose"):
        yield DOCKER
    if cmd == "astro":
        yield ASTRO
    if cmd == "abctl" or any(Path(w).name == "run-ab-platform.sh" for w in words):
        yield AIRBYTE
    if any(re.fullmatch(r"metabase[\w.-]*\.jar", Path(w).name) for w in words):
        yield METABASE
    fetches = cmd in ("wget", "curl") or (cmd == "git" and "clone" in args)
    if fetches and any(not is_local_url(u) for w in args for u in _URL.findall(w)):
        yield INTERNET


def is_local_url(url: str) -> bool:
    """True for a URL of the VM itself (``localhost``, ``127.*``, ``0.0.0.0``, ``::1``) or whose host is a
    shell variable (unknown, so not counted); ``git@host:`` counts as a URL of ``host``."""
    netloc = url[4:].split(":", 1)[0] if url.startswith("git@") else urllib.parse.urlsplit(url).netloc
    host = netloc.rpartition("@")[2]
    host = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
    return "$" in netloc or host.lower() in _LOCAL_HOSTS or host.startswith("127.")


def _strip_prefixes(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        w = words[i]
        if _ASSIGNMENT.match(w):
            i += 1
        elif w in _PREFIX_WORDS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in _PREFIX_OPTIONS_WITH_VALUE else 1
            if w == "timeout" and i < len(words):
                i += 1  # its duration
        else:
            break
    return words[i:]


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # a quote the split left open (a string running over several commands)
        return command.split()


def shell_commands(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each simple command of shell ``text``: split at newlines, ``;``, ``&``,
    ``|``, parentheses and backquotes outside quotes; comments and here-document bodies left out; a
    command substitution (``$(...)``, even inside double quotes) is a command of its own."""
    cur: list[str] = []
    start = line = 1
    quote: str | None = None
    opened: list[tuple[str, str | None]] = []  # (what opened a nested command, the quote outside it)
    heredocs: list[str] = []  # delimiters of here-documents whose bodies start on the next line
    i, n = 0, len(text)

    def take(chars: str) -> None:
        nonlocal start
        if not cur and chars.strip():
            start = line
        if cur or chars.strip():
            cur.append(chars)

    def emit() -> Iterator[tuple[int, str]]:
        command = "".join(cur).strip()
        cur.clear()
        if command:
            yield start, command

    while i < n:
        c, at = text[i], i
        if quote == "'":
            take(c)
            quote = None if c == "'" else quote
        elif c == "\\" and i + 1 < n:
            take(text[i:i + 2])
            i += 1
        elif text.startswith("$(", i) or (c == "`" and not (opened and opened[-1][0] == "`")):
            yield from emit()
            opened.append(("`" if c == "`" else "(", quote))
            quote = None
            i += c == "$"
        elif quote == '"':
            take(c)
            quote = None if c == '"' else quote
        elif c in "'\"":
            take(c)
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;&|()"):
            while i + 1 < n and text[i + 1] != "\n":  # a comment, to the end of its line
                i += 1
        elif c == "\n":
            yield from emit()
            if heredocs:
                i, line = _skip_heredocs(text, i + 1, line + 1, heredocs)
                heredocs.clear()
                continue
        elif c in ")`":
            yield from emit()
            if opened and opened[-1][0] == ("(" if c == ")" else "`"):
                quote = opened.pop()[1]
        elif c == "(":
            yield from emit()
            opened.append(("(", None))
        elif c in ";&|":
            yield from emit()
        elif (m := _HEREDOC.match(text, i)) and not text.startswith("<<<", i):
            heredocs.append(m.group(2))
            take(m.group(0))
            i = m.end()
            continue
        else:
            take(c)
        line += text.count("\n", at, i + 1)
        i += 1
    yield from emit()


def _skip_heredocs(text: str, i: int, line: int, delimiters: list[str]) -> tuple[int, int]:
    """Past the bodies of here-documents starting at ``i`` (line ``line``, after the line that opened them):
    the index and line number of what follows the last delimiter line."""
    for delimiter in delimiters:
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            body_line = text[i:end]
            i, line = end + 1, line + 1
            if body_line.strip() == delimiter:
                break
    return i, line
