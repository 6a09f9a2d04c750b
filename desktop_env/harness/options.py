"""run.py's options: the flags a run takes, parsed into the :class:`~desktop_env.harness.config.RunConfig` the
harness reads."""
from __future__ import annotations

import argparse

from desktop_env.harness.config import (ACTION_SPACES, COORDS, GUEST_PASSWORD, LOG_LEVELS, OBSERVATION_TYPES,
                                        TOOL_VERSIONS, RunConfig, RunConfigError)

BUILTIN_HELP = "oracle, noop, random, human"

DESCRIPTION = """Run an agent over a task suite: `python run.py --model oracle --test_all_meta_path evaluation_examples/test_smoke.json`.

Models: built-in agents `oracle` (replays each task's reference solution), `noop` (DONE at
once), `random` (random computer_13 actions, --seed) and `human` (you, through noVNC);
any other name is a chat model: `claude-*` through the Anthropic SDK (ANTHROPIC_API_KEY),
everything else through the OpenAI SDK (OPENAI_API_KEY, or --api_key_env; --base_url for
vLLM, Ollama, LM Studio or another compatible server). Models see the screen resized to
--model_screen and their coordinates are mapped back to the real screen.

Results go to <result_dir>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/
(with --trials K > 1: .../<task_id>/trial_<k>/): traj.jsonl, step_<n>_<timestamp>.png,
result.txt (the score), status.json (status, score, steps, times, attempts), runtime.log,
recording.mp4 (--record); manifest.json and summary.json in the model folder. Rerunning
the same command resumes: tasks with a final status are skipped, infrastructure failures
are retried. Ctrl-C or SIGTERM stops the VMs and keeps finished tasks.
"""


def parse_args(argv: list[str] | None = None) -> RunConfig:
    """Parse run.py's flags (``argv`` defaults to the command line) into a checked :class:`RunConfig`; exits
    with a usage error on bad ones.

    Sets ``$DESKTOP_ENV_TIME_SCALE`` from ``--time_scale`` (workers inherit it).
    """
    p = argparse.ArgumentParser(prog="run.py", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    from desktop_env.cli_flags import add_version_flag

    add_version_flag(p)
    env = p.add_argument_group("environment")
    env.add_argument("--path_to_vm", default=None, help="image name, profile or image folder (default: newest base)")
    env.add_argument("--provider_name", default="qemu", help="VM provider (default: qemu)")
    env.add_argument("--hosts", default=None, help="libvirt provider: URI[#N],... hosts to spread environments over "
                                                   "(N: capacity, default from each host's CPUs and memory); a host "
                                                   "that fails leaves rotation and its tasks are retried elsewhere")
    env.add_argument("--ray", default=None, metavar="ADDRESS",
                     help="run the environments on a Ray cluster (auto, or the head's HOST:PORT), one per slot its "
                          "nodes advertise (docs/distributed.md); results come back here, in the same layout")
    env.add_argument("--headless", action="store_true", help="accepted for compatibility: VMs never open a window")
    env.add_argument("--action_space", default="pyautogui", choices=ACTION_SPACES,
                     help="pyautogui code strings or computer_13 action dicts (default pyautogui)")
    env.add_argument("--observation_type", default="screenshot",
                     choices=OBSERVATION_TYPES,
                     help="what a model sees: the screenshot, the accessibility tree (as a table), both, or "
                          "set-of-marks (numbered boxes from the tree drawn on the screenshot plus their table)")
    env.add_argument("--screen_width", type=int, default=None, help="must match the image (default: the image's)")
    env.add_argument("--screen_height", type=int, default=None, help="must match the image (default: the image's)")
    env.add_argument("--sleep_after_execution", type=float, default=0.0, help="seconds to wait after each action")
    env.add_argument("--max_steps", type=int, default=15, help="actions per task (default 15); a turn whose reply "
                                                               "does not parse counts as one")
    env.add_argument("--cache_dir", default=None, help="image and runtime cache (default ~/.cache/desktop-env)")
    env.add_argument("--snapshot_name", default=None,
                     help="the snapshot every task starts from instead of its own: init_state or a warm state of the "
                          "image (e.g. superset); default: each task's snapshot")
    env.add_argument("--client_password", default=GUEST_PASSWORD,
                     help=f"the guest user's password, as the public suites' scripts pass it; the images' user "
                          f"'user' has the password '{GUEST_PASSWORD}' (accepted when it matches)")
    env.add_argument("--log_level", default="WARNING", type=str.upper, choices=LOG_LEVELS,
                     help="what the console shows besides one progress line per task (default WARNING); each "
                          "task's runtime.log keeps its INFO log (DEBUG with --log_level DEBUG)")
    env.add_argument("--record", action="store_true", help="record each task's screen into recording.mp4 "
                                                           "(host-side frames; costs CPU)")
    agent = p.add_argument_group("agent")
    agent.add_argument("--model", default=None,
                       help=f"built-in agent ({BUILTIN_HELP}) or a model name: claude-* via the Anthropic SDK, "
                            "anything else via the OpenAI SDK (default oracle; with a plug-in --agent, it names "
                            "the results folder and defaults to the class's name)")
    agent.add_argument("--agent", default="prompted", metavar="KIND_OR_PLUGIN",
                       help="how a model is driven: prompted to answer pyautogui code (default); computer-use: "
                            "Anthropic's computer tool (claude-* models); openai-computer-use: the OpenAI Responses "
                            "API's computer tool (computer-use-preview); ui-tars / qwen-vl: a grounding model's own "
                            "action grammar over an OpenAI-compatible --base_url; or your own agent class as "
                            "package.module:ClassName (or an installed desktop_env.agents entry point); "
                            "see docs/agents.md")
    agent.add_argument("--coords", default=None, choices=COORDS,
                       help="with --agent ui-tars: points on a 0-1000 grid (default) or in pixels of the screenshot")
    agent.add_argument("--tool_version", default=None,
                       choices=TOOL_VERSIONS,
                       help="the computer tool: computer_20251124 (default, with zoom) or computer_20250124 with "
                            "--agent computer-use; computer_use_preview (default) or computer with "
                            "--agent openai-computer-use")
    agent.add_argument("--base_url", default=None,
                       help="API base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1) or of an "
                            "Anthropic endpoint; without it the vendor's public API is used")
    agent.add_argument("--api_key_env", default=None,
                       help="environment variable holding the API key (default OPENAI_API_KEY, or ANTHROPIC_API_KEY "
                            "for claude-*); with --base_url and no key set, a placeholder key is sent")
    agent.add_argument("--max_trajectory_length", type=int, default=3,
                       help="past turns (observation and reply) kept in the prompt (default 3)")
    agent.add_argument("--a11y_tree_max_tokens", type=int, default=10000,
                       help="token budget for the accessibility tree / set-of-marks table; whole lines are kept, "
                            "tokens estimated as characters/4 (default 10000)")
    agent.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    agent.add_argument("--top_p", type=float, default=None,
                       help="nucleus sampling; not sent unless given (recent Claude models refuse it with "
                            "temperature)")
    agent.add_argument("--max_tokens", type=int, default=1500, help="most tokens per model reply (default 1500)")
    agent.add_argument("--model_screen", default="1280x720",
                       help="largest screen size the model is shown, WIDTHxHEIGHT (default 1280x720; the real "
                            "screen's aspect ratio is kept, coordinates are mapped back)")
    agent.add_argument("--seed", type=int, default=0, help="seed of the random agent (default 0)")
    suite = p.add_argument_group("suite and results")
    suite.add_argument("--domain", default="all", help="run only this app's tasks (default all)")
    suite.add_argument("--test_config_base_dir", default="evaluation_examples", help="folder holding examples/")
    suite.add_argument("--test_all_meta_path", default="evaluation_examples/test_smoke.json",
                       help="index file {app: [task ids]}")
    suite.add_argument("--exclude_account", action="store_true",
                       help="skip tasks that need a cloud account (tagged `account`, or using account-only steps, "
                            "getters or metrics)")
    suite.add_argument("--include_unrunnable", action="store_true",
                       help="also run tasks that cannot run offline here (their setup uses Docker, the Astro CLI, "
                            "Airbyte, Metabase or fetches from the internet; `desktop-env tasks check` names why); "
                            "by default they are left out before any VM starts")
    suite.add_argument("--grader_corrections", action="store_true",
                       help="apply this project's corrections of other suites' graders where it has one (the table "
                            "in desktop_env/tasks/grader_corrections/, each with its finding and evidence); off by "
                            "default, and summary.json and each corrected task's status.json say it was on")
    suite.add_argument("--result_dir", default="./results", help="where results go (default ./results)")
    suite.add_argument("--num_envs", type=int, default=1, help="environments (VMs, one process each) run in parallel")
    suite.add_argument("--trials", type=int, default=1,
                       help="runs per task (default 1); with more, each goes to <task_id>/trial_<k>/ and the summary "
                            "gives the mean and pass@k")
    suite.add_argument("--task_timeout", type=float, default=1800.0,
                       help="seconds per task attempt; past it the task scores 0 with status timeout (default 1800)")
    suite.add_argument("--retries", type=int, default=1,
                       help="extra attempts on a fresh VM after an infrastructure failure (default 1)")
    suite.add_argument("--time_scale", type=float, default=None,
                       help="multiply every named time limit of setup steps, reference solutions and evaluators "
                            "(desktop_env/limits.py) by this, for a slower host (default: $DESKTOP_ENV_TIME_SCALE or 1)")
    suite.add_argument("--download_mirror", default=None, metavar="DIR",
                       help="serve every URL a task fetches from this folder (made by `desktop-env mirror`), hash "
                            "checked, with no network access; a URL it lacks fails the task's setup (task_error)")
    agent.add_argument("--verbose_instruction", action="store_true",
                       help="give the agent the step-by-step instruction of tasks that have one (the public "
                            "data-science suite's verbose_instruction.txt beside the task file) instead of the task's")
    agent.add_argument("--stop_token", default=None, help=argparse.SUPPRESS)  # refused below, with what to use
    agent.add_argument("--rag", action="store_true",
                       help="add the documentation chunks that best match the instruction to the task text the agent "
                            "sees (index: desktop-env docs build)")
    agent.add_argument("--rag_topk", type=int, default=3, help="chunks added with --rag (default 3)")
    args = p.parse_args(argv)
    if args.stop_token is not None:
        p.error("--stop_token is not taken: the prompted agent reads its actions from the whole reply; bound the "
                "reply with --max_tokens")
    try:
        config = RunConfig.from_namespace(args)
    except RunConfigError as exc:
        p.error(str(exc))
    config.apply_time_scale()  # workers inherit it
    return config
