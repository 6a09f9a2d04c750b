"""run.py's options: the flags a run takes, checked, as one namespace the harness reads."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

BUILTIN_HELP = "oracle, noop, random, human"
#: The password of the images' desktop user ``user`` (set by the base profile's assemble.sh).
GUEST_PASSWORD = "password"

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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse run.py's flags (``argv`` defaults to the command line); exits with a usage error on bad ones.

    Sets ``model_screen_size`` from ``--model_screen``, and ``$DESKTOP_ENV_TIME_SCALE`` from ``--time_scale``
    (workers inherit it).
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
    env.add_argument("--headless", action="store_true", help="accepted for compatibility: VMs never open a window")
    env.add_argument("--action_space", default="pyautogui", choices=["pyautogui", "computer_13"],
                     help="pyautogui code strings or computer_13 action dicts (default pyautogui)")
    env.add_argument("--observation_type", default="screenshot",
                     choices=["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"],
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
    env.add_argument("--log_level", default="WARNING", type=str.upper, choices=["DEBUG", "INFO", "WARNING", "ERROR"],
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
    agent.add_argument("--coords", default=None, choices=("grid1000", "pixels"),
                       help="with --agent ui-tars: points on a 0-1000 grid (default) or in pixels of the screenshot")
    agent.add_argument("--tool_version", default=None,
                       choices=("computer_20251124", "computer_20250124", "computer_use_preview", "computer"),
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
    if (args.screen_width is None) != (args.screen_height is None):
        p.error("give both --screen_width and --screen_height, or neither")
    _check_agent(p, args)
    _check_provider_and_result_dir(p, args)
    _check_public_suite_flags(p, args)
    if args.num_envs < 1:
        p.error("--num_envs must be at least 1")
    if args.trials < 1:
        p.error("--trials must be at least 1")
    if args.retries < 0:
        p.error("--retries must be 0 or more")
    if args.time_scale is not None:
        if not args.time_scale > 0:
            p.error("--time_scale must be above 0")
        from desktop_env.limits import SCALE_ENV

        os.environ[SCALE_ENV] = repr(args.time_scale)  # workers inherit it
    anthropic_tools, openai_tools = ("computer_20251124", "computer_20250124"), ("computer_use_preview", "computer")
    if args.coords and args.agent != "ui-tars":
        p.error("--coords goes with --agent ui-tars")
    if args.tool_version and args.agent in ("prompted", "ui-tars", "qwen-vl"):
        p.error("--tool_version goes with --agent computer-use or openai-computer-use")
    if args.tool_version in (openai_tools if args.agent == "computer-use" else anthropic_tools):
        p.error(f"--tool_version {args.tool_version} is not a tool of --agent {args.agent} (its tools: "
                f"{', '.join(anthropic_tools if args.agent == 'computer-use' else openai_tools)})")
    if args.download_mirror is not None:
        from desktop_env.configs.mirror import MANIFEST

        if not (Path(args.download_mirror) / MANIFEST).is_file():
            p.error(f"--download_mirror {args.download_mirror}: no {MANIFEST} there; fill the folder with "
                    f"`desktop-env mirror {args.test_all_meta_path} --out {args.download_mirror}`")
    from desktop_env.agents.parsing import parse_size

    try:
        args.model_screen_size = parse_size(args.model_screen)
    except ValueError as exc:
        p.error(f"--model_screen: {exc}")
    if args.model == "human" and args.num_envs != 1:
        p.error("--model human takes one task at a time: use --num_envs 1")
    if args.rag_topk < 1:
        p.error("--rag_topk must be at least 1")
    if args.rag:
        from desktop_env.rag import default_index_path

        if not default_index_path(args.cache_dir).is_file():
            p.error(f"--rag: no documentation index at {default_index_path(args.cache_dir)}; "
                    "build it with: desktop-env docs build")
    return args


def _check_provider_and_result_dir(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Flags that would otherwise spoil the results folder, checked before any VM starts or any result is written:
    an unknown ``--provider_name`` (each task would be recorded as a final task_error, so a rerun with the right
    name would find nothing to do) and a ``--result_dir`` that is a file."""
    import difflib

    from desktop_env.registry import PROVIDERS

    if args.provider_name not in PROVIDERS:
        known = PROVIDERS.names()
        close = difflib.get_close_matches(args.provider_name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        p.error(f"--provider_name {args.provider_name!r} is not a provider here (known: {', '.join(known)}){hint}")
    result_dir = Path(args.result_dir)
    existing = next((q for q in (result_dir, *result_dir.parents) if q.exists()), None)
    if existing is not None and not existing.is_dir():
        p.error(f"--result_dir {args.result_dir}: {existing} is a file, not a folder; give a folder (it is created "
                "if missing)")


def _check_agent(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--agent``: a kind of the built-in model clients, or a plug-in class that imports; a plug-in's run is
    named after its class unless ``--model`` names it."""
    from desktop_env.agents.plugins import is_plugin, load_agent_class
    from desktop_env.errors import DesktopEnvError
    from desktop_env.registry import AGENT_KINDS

    if is_plugin(args.agent):
        try:
            cls = load_agent_class(args.agent)
        except DesktopEnvError as exc:
            p.error(str(exc))
        if args.model is None:
            name = getattr(cls, "name", "")
            args.model = name if isinstance(name, str) and name else cls.__name__
    elif args.agent not in AGENT_KINDS:
        p.error(f"--agent {args.agent!r}: not a kind ({', '.join(AGENT_KINDS.names())}) nor a plug-in; give your own "
                "agent class as package.module:ClassName")
    if args.model is None:
        args.model = "oracle"


def _check_public_suite_flags(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Flags the public suites' run scripts pass: taken when they mean something here, else refused with the
    flag to use instead."""
    if args.stop_token is not None:
        p.error("--stop_token is not taken: the prompted agent reads its actions from the whole reply; bound the "
                "reply with --max_tokens")
    if args.client_password != GUEST_PASSWORD:
        p.error(f"--client_password: the images' user 'user' has the password '{GUEST_PASSWORD}' (set when the "
                "image is built); drop the flag or pass that one")
    if args.snapshot_name not in (None, "init_state"):
        from desktop_env.image.recipe import PROFILES_DIR, Recipe
        from desktop_env.image.states import state_recipes

        known = sorted({name for prof in Recipe.available(PROFILES_DIR) for name in state_recipes(prof)})
        if args.snapshot_name not in known:
            p.error(f"--snapshot_name {args.snapshot_name!r} is no snapshot of the images here (init_state, or a "
                    f"warm state: {', '.join(known)})")
