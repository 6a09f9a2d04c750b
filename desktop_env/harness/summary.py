"""A run's record: the manifest (what ran, on which code and image) and the summary (scores by group)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from desktop_env.harness.config import RunConfig
from desktop_env.harness.layout import MANIFEST_FILE, now_iso, write_json_atomic
from desktop_env.harness.status import STATUSES, Status


def git_state() -> dict:
    """The repository's commit and whether tracked files differ from it."""
    from desktop_env.paths import repo_root

    def git(*cmd):
        try:
            return subprocess.run(["git", *cmd], cwd=repo_root(), capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "HEAD") or None, "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def image_state(config: RunConfig) -> dict:
    """The image the run uses (name, profile, hashes, screen); only the path for a provider without the
    ``images`` capability (its VMs are not this project's cached images).

    Raises:
        DesktopEnvError: the image cannot be found.
    """
    from desktop_env.registry import PROVIDERS

    if not PROVIDERS[config.provider_name].images:
        return {"path_to_vm": config.path_to_vm}
    from desktop_env.image.current import resolve

    image = resolve(config.path_to_vm or "base", config.cache_dir)
    meta = image.meta
    return {"name": image.name, "profile": meta.get("profile"), "assembly_hash": meta.get("assembly_hash"),
            "package_hash": meta.get("package_hash"), "created": meta.get("created"), "screen": list(image.screen)}


def image_key(image: dict) -> str | None:
    """What names an image in a manifest: its name (QEMU images), else the path given to another provider."""
    return image.get("name") or image.get("path_to_vm")


def earlier_image(folder: Path, image: dict) -> str | None:
    """The image named by ``folder``'s manifest.json when it is not ``image`` (results made on another
    image), else None (the same image, no manifest yet, or an image that cannot be named)."""
    try:
        earlier = json.loads((Path(folder) / MANIFEST_FILE).read_text()).get("image") or {}
    except (OSError, ValueError, AttributeError):
        return None
    before, now = image_key(earlier), image_key(image)
    return before if before and now and before != now else None


def write_manifest(folder: Path, config: RunConfig, image: dict, started: str, finished: str | None,
                   interrupted: bool = False) -> Path:
    """Write ``manifest.json`` in the model ``folder``; earlier runs into the same folder are kept in
    ``previous_runs``."""
    from desktop_env.agents.prompts import PROMPT_VERSION

    path = Path(folder) / MANIFEST_FILE
    previous = []
    try:
        old = json.loads(path.read_text())
        if old.get("started") != started:
            previous = old.pop("previous_runs", []) + [old]
        else:
            previous = old.get("previous_runs", [])
    except (OSError, ValueError):
        pass
    manifest = {"model": config.model, "git": git_state(), "image": image, "parameters": config.to_json(),
                "prompt_version": PROMPT_VERSION, "argv": sys.argv, "python": sys.version.split()[0],
                "started": started, "finished": finished, "interrupted": interrupted, "previous_runs": previous}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, manifest)
    return path


def group_stats(records: list[dict]) -> dict:
    """Mean score, success rate, pass@k, mean steps and time over ``records`` (final runs only)."""
    scored = [r for r in records if r.get("final") and r.get("status") in STATUSES and Status(r["status"]).scored
              and r.get("score") is not None]
    by_task: dict = {}
    for r in scored:
        by_task.setdefault((r["domain"], r["task_id"]), []).append(r)
    steps = [r["steps"] for r in scored if isinstance(r.get("steps"), int)]
    times = [r["duration_s"] for r in scored if isinstance(r.get("duration_s"), (int, float))]
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    return {"tasks": len(by_task), "runs": len(scored), "mean_score": mean([r["score"] for r in scored]),
            "success_rate": mean([1.0 if r["status"] == "success" else 0.0 for r in scored]),
            "pass_at_k": mean([1.0 if any(r["status"] == "success" for r in rs) else 0.0 for rs in by_task.values()]),
            "mean_steps": mean(steps), "mean_duration_s": mean(times)}


def summarize(config: RunConfig, records: list[dict], not_run: list, excluded: int,
              wrong_image: dict[str, int] | None = None, excluded_offline: dict[str, int] | None = None) -> dict:
    """summary.json's content over every planned (task, trial) of this suite; ``excluded`` tasks (needing an
    account), ``wrong_image`` ones ({profile: n}) and ``excluded_offline`` ones ({reason kind: n}) are counted
    apart and are in no score."""
    from desktop_env.tasks import CATEGORIES, GUIDANCES

    groups: dict[str, dict[str, list]] = {"domain": {}, "category": {}, "guidance": {}}
    for r in records:
        groups["domain"].setdefault(r["domain"], []).append(r)
        tags = r.get("tags") or []
        for t in tags:
            if t in CATEGORIES:
                groups["category"].setdefault(t, []).append(r)
            if t in GUIDANCES:
                groups["guidance"].setdefault(t, []).append(r)
    counts: dict[str, int] = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1

    def errors(status):
        return [{k: r.get(k) for k in ("domain", "task_id", "trial", "error")} for r in records if r["status"] == status]

    # the agent's failures by reason kind (a timeout, an agent error or a folder from before reasons has none)
    reasons: dict[str, int] = {}
    for r in records:
        if r.get("final") and r["status"] in STATUSES and Status(r["status"]).scored and r["status"] != "success":
            kind = r["reason"].get("kind") if isinstance(r.get("reason"), dict) else None
            kind = kind or f"{r['status']} (no reason recorded)"
            reasons[kind] = reasons.get(kind, 0) + 1

    return {"model": config.model, "action_space": config.action_space, "observation_type": config.observation_type,
            "trials": config.trials, "k": config.trials, "overall": group_stats(records),
            "by_domain": {k: group_stats(v) for k, v in sorted(groups["domain"].items())},
            "by_category": {k: group_stats(v) for k, v in sorted(groups["category"].items())},
            "by_guidance": {k: group_stats(v) for k, v in sorted(groups["guidance"].items())},
            "statuses": counts, "failure_reasons": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
            "agent_errors": errors("agent_error"), "infra_errors": errors("infra_error"),
            "task_errors": errors("task_error"), "evaluator_errors": errors("evaluator_error"),
            "not_run": len(not_run), "excluded_account": excluded,
            "excluded_image": dict(wrong_image or {}), "excluded_offline": dict(excluded_offline or {}),
            "grader_corrections": config.grader_corrections,
            "corrected": [{k: r.get(k) for k in ("domain", "task_id", "trial", "grader_correction")}
                          for r in records if r.get("grader_correction")],
            "written": now_iso()}


def format_summary(summary: dict) -> str:
    """The printed table: one row per group, then infrastructure and task errors apart."""
    k = summary["k"]
    head = f"{'group':<44} {'tasks':>5} {'runs':>5} {'mean':>6} {'success':>8} {f'pass@{k}':>7} {'steps':>6} {'time_s':>7}"
    lines = [head, "-" * len(head)]

    def row(name, s):
        f = lambda v, fmt: format(v, fmt) if v is not None else "-"  # noqa: E731
        lines.append(f"{name[:44]:<44} {s['tasks']:>5} {s['runs']:>5} {f(s['mean_score'], '.3f'):>6} "
                     f"{f(s['success_rate'], '.1%'):>8} {f(s['pass_at_k'], '.1%'):>7} {f(s['mean_steps'], '.1f'):>6} "
                     f"{f(s['mean_duration_s'], '.0f'):>7}")

    row("overall", summary["overall"])
    for title, key in (("domain", "by_domain"), ("category", "by_category"), ("guidance", "by_guidance")):
        for name, s in summary[key].items():
            row(f"  {title}: {name}", s)
    lines.append("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["statuses"].items())))
    if summary.get("failure_reasons"):
        lines.append("failures by reason: " + ", ".join(f"{k} {v}" for k, v in summary["failure_reasons"].items()))
    for kind, note in (("agent_errors", "counted as failures"), ("infra_errors", "not in the scores"),
                       ("task_errors", "not in the scores"), ("evaluator_errors", "not in the scores")):
        if summary.get(kind):
            lines.append(f"{kind.replace('_', ' ')} ({note}):")
            lines += [f"  {e['domain']}/{e['task_id']} trial {e['trial']}: {str(e['error'])[:160]}" for e in summary[kind]]
    if summary.get("excluded_offline"):
        from desktop_env.tasks.offline import counts_text

        lines.append(f"left out, cannot run offline here (not in the scores): "
                     f"{counts_text(summary['excluded_offline'])}")
    if summary.get("grader_corrections"):
        corrected = summary.get("corrected") or []
        lines.append(f"grader corrections: on ({len(corrected)} task run(s) scored by a corrected grader"
                     + (": " + ", ".join(f"{c['domain']}/{c['task_id']}" for c in corrected[:5])
                        + (" ..." if len(corrected) > 5 else "") if corrected else "") + ")")
    if summary["not_run"]:
        lines.append(f"not run yet: {summary['not_run']} (rerun the same command to complete)")
    return "\n".join(lines)
