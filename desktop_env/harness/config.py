"""One run's settings (:class:`RunConfig`): what run.py's flags give, typed, and checked in one place."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from desktop_env.errors import DesktopEnvError

#: The password of the images' desktop user ``user`` (set by the base profile's assemble.sh).
GUEST_PASSWORD = "password"
ACTION_SPACES = ("pyautogui", "computer_13")
OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
COORDS = ("grid1000", "pixels")
ANTHROPIC_TOOLS = ("computer_20251124", "computer_20250124")
OPENAI_TOOLS = ("computer_use_preview", "computer")
TOOL_VERSIONS = ANTHROPIC_TOOLS + OPENAI_TOOLS
#: Fields that hold a file or folder: given as ``str`` or a path, kept as a :class:`~pathlib.Path`.
_PATHS = ("cache_dir", "test_config_base_dir", "test_all_meta_path", "result_dir", "download_mirror", "worker_log")


class RunConfigError(DesktopEnvError, ValueError):
    """A run's settings do not hold together; the message names the flag (run.py's, or the field of the same
    name) and what to give instead."""


@dataclass(frozen=True)
class RunConfig:
    """Every setting of one run, with run.py's defaults; checked when made, so a bad one fails before any VM starts.

    ``run.py`` makes one from its flags (:func:`desktop_env.harness.options.parse_args`); a library user makes one
    directly and passes it to :func:`desktop_env.harness.suite.run_suite`::

        RunConfig(model="noop", test_all_meta_path="evaluation_examples/test_smoke.json", num_envs=2)

    Each field is the flag of the same name (``python run.py --help`` says more). Paths may be given as strings.

    Environment (the VMs): ``path_to_vm`` (image name, profile or folder; None: the newest base image),
    ``provider_name``, ``hosts`` (libvirt: ``URI[#N],...``), ``ray`` (a Ray cluster's address: the environments run
    on its nodes, docs/distributed.md), ``headless`` (accepted, no effect: VMs never open a
    window), ``action_space``, ``observation_type``, ``screen_width``/``screen_height`` (both or neither; None: the
    image's), ``sleep_after_execution`` (seconds after each action), ``max_steps`` (an agent's actions per task),
    ``cache_dir``, ``snapshot_name`` (the state every task starts from; None: each task's own),
    ``client_password`` (must be the images' :data:`GUEST_PASSWORD`), ``log_level``, ``record`` (recording.mp4).

    Agent: ``model`` (None: the plug-in class's name, else ``oracle``; always set once made), ``agent`` (a kind
    or a plug-in ``package.module:Class``), ``coords`` and ``tool_version`` (of some kinds only), ``base_url``,
    ``api_key_env``, ``max_trajectory_length``, ``a11y_tree_max_tokens``, ``temperature``, ``top_p``,
    ``max_tokens``, ``model_screen`` (``WIDTHxHEIGHT``; :attr:`model_screen_size` parsed), ``seed`` (of the random
    agent), ``verbose_instruction``, ``rag`` and ``rag_topk``.

    Suite and results: ``domain`` (``all`` or one app), ``test_config_base_dir`` (holds ``examples/``),
    ``test_all_meta_path`` (the index), ``exclude_account``, ``include_unrunnable``, ``grader_corrections`` (apply
    the project's corrections of other suites' graders: :mod:`desktop_env.tasks.corrections`), ``result_dir``, ``num_envs``
    (VMs in parallel), ``trials`` (runs per task), ``task_timeout`` (seconds per attempt), ``retries`` (after an
    infrastructure failure), ``time_scale`` (multiplies every named time limit; see :meth:`apply_time_scale`),
    ``download_mirror`` (a ``desktop-env mirror`` folder).

    Library only (no flag): ``worker_log``, a file the workers log to instead of the console (``tasks verify``
    keeps them in its run.log).

    Raises:
        RunConfigError: on construction, a setting that cannot work (its message says which and why).
    """

    # environment
    path_to_vm: str | None = None
    provider_name: str = "qemu"
    hosts: str | None = None
    ray: str | None = None
    headless: bool = False
    action_space: str = "pyautogui"
    observation_type: str = "screenshot"
    screen_width: int | None = None
    screen_height: int | None = None
    sleep_after_execution: float = 0.0  # seconds
    max_steps: int = 15
    cache_dir: Path | None = None
    snapshot_name: str | None = None
    client_password: str = GUEST_PASSWORD
    log_level: str = "WARNING"
    record: bool = False
    # agent
    model: str | None = None
    agent: str = "prompted"
    coords: str | None = None
    tool_version: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_trajectory_length: int = 3
    a11y_tree_max_tokens: int = 10000
    temperature: float = 1.0
    top_p: float | None = None
    max_tokens: int = 1500
    model_screen: str = "1280x720"
    seed: int = 0
    verbose_instruction: bool = False
    rag: bool = False
    rag_topk: int = 3
    # suite and results
    domain: str = "all"
    test_config_base_dir: Path = Path("evaluation_examples")
    test_all_meta_path: Path = Path("evaluation_examples/test_smoke.json")
    exclude_account: bool = False
    include_unrunnable: bool = False
    grader_corrections: bool = False
    result_dir: Path = Path("./results")
    num_envs: int = 1
    trials: int = 1
    task_timeout: float = 1800.0  # seconds
    retries: int = 1
    time_scale: float | None = None
    download_mirror: Path | None = None
    # library only
    worker_log: Path | None = None

    def __post_init__(self) -> None:
        for name in _PATHS:
            value = getattr(self, name)
            self._set(name, None if value in (None, "") else Path(value))
        self._set("log_level", str(self.log_level).upper())
        for name, allowed in (("action_space", ACTION_SPACES), ("observation_type", OBSERVATION_TYPES),
                              ("log_level", LOG_LEVELS), ("coords", (None, *COORDS)),
                              ("tool_version", (None, *TOOL_VERSIONS))):
            if getattr(self, name) not in allowed:
                raise RunConfigError(f"--{name} {getattr(self, name)!r}: not one of "
                                     f"{', '.join(a for a in allowed if a)}")
        if (self.screen_width is None) != (self.screen_height is None):
            raise RunConfigError("give both --screen_width and --screen_height, or neither")
        self._check_agent()
        self._check_provider_and_result_dir()
        self._check_public_suite_settings()
        self._check_numbers()
        self._check_agent_options()
        if self.download_mirror is not None:
            from desktop_env.configs.mirror import MANIFEST

            if not (self.download_mirror / MANIFEST).is_file():
                raise RunConfigError(f"--download_mirror {self.download_mirror}: no {MANIFEST} there; fill the "
                                     f"folder with `desktop-env mirror {self.test_all_meta_path} --out "
                                     f"{self.download_mirror}`")
        if self.rag:
            from desktop_env.rag import default_index_path

            if not default_index_path(self.cache_dir).is_file():
                raise RunConfigError(f"--rag: no documentation index at {default_index_path(self.cache_dir)}; "
                                     "build it with: desktop-env docs build")

    @classmethod
    def from_namespace(cls, namespace) -> "RunConfig":
        """The config of an argparse namespace holding run.py's flags (others, such as ``stop_token``, are left).

        Raises:
            RunConfigError: see the class.
        """
        return cls(**{f.name: getattr(namespace, f.name) for f in fields(cls) if hasattr(namespace, f.name)})

    def to_json(self) -> dict:
        """The settings as JSON values (paths as strings): manifest.json's ``parameters``."""
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}

    @property
    def model_screen_size(self) -> tuple[int, int]:
        """``model_screen`` as ``(width, height)``."""
        from desktop_env.agents.parsing import parse_size

        return parse_size(self.model_screen)

    @property
    def screen_size(self) -> tuple[int, int] | None:
        """``(screen_width, screen_height)``, or None for the image's own."""
        return None if self.screen_width is None else (self.screen_width, self.screen_height)

    def apply_time_scale(self) -> None:
        """Export ``time_scale`` as ``$DESKTOP_ENV_TIME_SCALE`` (the workers this process starts inherit it), so
        every named time limit (:mod:`desktop_env.limits`) is stretched; nothing when it is None."""
        if self.time_scale is not None:
            from desktop_env.limits import SCALE_ENV

            os.environ[SCALE_ENV] = repr(self.time_scale)

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)  # the frozen dataclass's own normalisation, during __post_init__

    def _check_agent(self) -> None:
        """``agent``: a kind of the built-in model clients, or a plug-in class that imports; a plug-in's run is
        named after its class unless ``model`` names it."""
        from desktop_env.agents.plugins import is_plugin, load_agent_class
        from desktop_env.registry import AGENT_KINDS

        if is_plugin(self.agent):
            try:
                cls = load_agent_class(self.agent)
            except DesktopEnvError as exc:
                raise RunConfigError(str(exc)) from exc
            if self.model is None:
                name = getattr(cls, "name", "")
                self._set("model", name if isinstance(name, str) and name else cls.__name__)
        elif self.agent not in AGENT_KINDS:
            raise RunConfigError(f"--agent {self.agent!r}: not a kind ({', '.join(AGENT_KINDS.names())}) nor a "
                                 "plug-in; give your own agent class as package.module:ClassName")
        if self.model is None:
            self._set("model", "oracle")

    def _check_provider_and_result_dir(self) -> None:
        """Settings that would otherwise spoil the results folder, checked before any VM starts or any result is
        written: an unknown ``provider_name`` (each task would be recorded as a final task_error, so a rerun with
        the right name would find nothing to do) and a ``result_dir`` that is a file."""
        import difflib

        from desktop_env.registry import PROVIDERS

        if self.provider_name not in PROVIDERS:
            known = PROVIDERS.names()
            close = difflib.get_close_matches(self.provider_name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise RunConfigError(f"--provider_name {self.provider_name!r} is not a provider here (known: "
                                 f"{', '.join(known)}){hint}")
        existing = next((q for q in (self.result_dir, *self.result_dir.parents) if q.exists()), None)
        if existing is not None and not existing.is_dir():
            raise RunConfigError(f"--result_dir {self.result_dir}: {existing} is a file, not a folder; give a "
                                 "folder (it is created if missing)")

    def _check_public_suite_settings(self) -> None:
        """Settings the public suites' run scripts pass: taken when they mean something here."""
        if self.client_password != GUEST_PASSWORD:
            raise RunConfigError(f"--client_password: the images' user 'user' has the password '{GUEST_PASSWORD}' "
                                 "(set when the image is built); drop the flag or pass that one")
        if self.snapshot_name not in (None, "init_state"):
            from desktop_env.image.recipe import PROFILES_DIR, Recipe
            from desktop_env.image.states import state_recipes

            known = sorted({name for prof in Recipe.available(PROFILES_DIR) for name in state_recipes(prof)})
            if self.snapshot_name not in known:
                raise RunConfigError(f"--snapshot_name {self.snapshot_name!r} is no snapshot of the images here "
                                     f"(init_state, or a warm state: {', '.join(known)})")

    def _check_numbers(self) -> None:
        if self.num_envs < 1:
            raise RunConfigError("--num_envs must be at least 1")
        if self.trials < 1:
            raise RunConfigError("--trials must be at least 1")
        if self.retries < 0:
            raise RunConfigError("--retries must be 0 or more")
        if self.time_scale is not None and not self.time_scale > 0:
            raise RunConfigError("--time_scale must be above 0")

    def _check_agent_options(self) -> None:
        """The options of one kind of agent only, the model's screen, and one task at a time for a human."""
        if self.coords and self.agent != "ui-tars":
            raise RunConfigError("--coords goes with --agent ui-tars")
        if self.tool_version and self.agent in ("prompted", "ui-tars", "qwen-vl"):
            raise RunConfigError("--tool_version goes with --agent computer-use or openai-computer-use")
        if self.tool_version in (OPENAI_TOOLS if self.agent == "computer-use" else ANTHROPIC_TOOLS):
            raise RunConfigError(f"--tool_version {self.tool_version} is not a tool of --agent {self.agent} (its "
                                 f"tools: {', '.join(ANTHROPIC_TOOLS if self.agent == 'computer-use' else OPENAI_TOOLS)})")
        from desktop_env.agents.parsing import parse_size

        try:
            parse_size(self.model_screen)
        except ValueError as exc:
            raise RunConfigError(f"--model_screen: {exc}") from exc
        if self.model == "human" and self.num_envs != 1:
            raise RunConfigError("--model human takes one task at a time: use --num_envs 1")
        if self.ray is not None:
            from desktop_env.extras import install_hint, installed

            if self.model == "human":
                raise RunConfigError("--model human drives a VM on this host: drop --ray")
            if self.hosts:
                raise RunConfigError("--ray and --hosts both say where the environments run: give one")
            if not installed("ray"):
                raise RunConfigError(f"--ray needs Ray: {install_hint('ray')}")
        if self.rag_topk < 1:
            raise RunConfigError("--rag_topk must be at least 1")
