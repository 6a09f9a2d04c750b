"""Agents of the user's own, plugged in as they are: ``--agent my_package.module:MyAgent``, or a name that an
installed package declares in the ``desktop_env.agents`` entry-point group.

A plug-in is either a subclass of :class:`desktop_env.agents.Agent`, used directly, or any class with the
public suites' contract (``predict(instruction, obs) -> (response, actions)`` and a ``reset`` that takes no
argument or a logger), which :class:`ForeignAgent` adapts. The class is built with the run's agent options
that its ``__init__`` accepts (all of them when it takes ``**kwargs``), ``model`` included.
"""
from __future__ import annotations

import importlib
import inspect
import logging
from importlib.metadata import entry_points
from typing import Any

from desktop_env.agents.base import Agent, TurnInfo
from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

#: The entry-point group an installed package declares its agents in (``name = "pkg.module:Class"``).
ENTRY_POINT_GROUP = "desktop_env.agents"


def installed_plugins() -> dict[str, str]:
    """Agent names declared by installed packages in :data:`ENTRY_POINT_GROUP` -> their ``module:Class``."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def is_plugin(spec: str | None) -> bool:
    """True when ``--agent`` names a plug-in (``module:Class`` or an installed entry point's name)."""
    return bool(spec) and (":" in spec or spec in installed_plugins())


def load_agent_class(spec: str) -> type:
    """The class ``spec`` names: ``package.module:Class`` or an installed entry point's name.

    Raises:
        DesktopEnvError: the module does not import, has no such attribute, or it is not an agent class;
            the message names the spec and what to fix.
    """
    target = installed_plugins().get(spec, spec)
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise DesktopEnvError(f"--agent {spec!r}: give a plug-in as package.module:ClassName")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DesktopEnvError(f"--agent {spec!r}: module {module_name!r} does not import ({exc}); install its "
                              "package, or put the folder that holds it on PYTHONPATH") from exc
    cls: Any = module
    for part in attr.split("."):
        if not hasattr(cls, part):
            classes = sorted(n for n, v in vars(module).items() if inspect.isclass(v) and hasattr(v, "predict")
                             and v.__module__ == module.__name__)
            raise DesktopEnvError(f"--agent {spec!r}: {module_name} has no {attr!r} (its classes with a predict "
                                  f"method: {', '.join(classes) or 'none'})")
        cls = getattr(cls, part)
    if not inspect.isclass(cls) or not callable(getattr(cls, "predict", None)):
        raise DesktopEnvError(f"--agent {spec!r}: {attr} is not an agent class: it needs a "
                              "predict(instruction, obs) method returning (response, actions)")
    return cls


def _accepted(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The options ``cls.__init__`` takes: all with ``**kwargs``, else those it names."""
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return dict(options)
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in options.items() if k in names}


def create_plugin_agent(spec: str, model: str, **options: Any) -> Agent:
    """An instance of the plug-in ``spec``, built with the options its ``__init__`` accepts (``model`` too);
    a class that is not an :class:`Agent` is wrapped in :class:`ForeignAgent`."""
    cls = load_agent_class(spec)
    instance = cls(**_accepted(cls, {"model": model, **options}))
    if isinstance(instance, Agent):
        if not instance.name:
            instance.name = model
        return instance
    log.info("agent %s is not a desktop_env Agent: adapted (reset, predict)", spec)
    return ForeignAgent(instance, model, action_space=options.get("action_space", "pyautogui"))


def _as_public_observation(obs: dict) -> dict:
    """The observation as the public suites' runners give it: the screenshot as PNG bytes, not an RGB array."""
    shot = obs.get("screenshot")
    if shot is None or isinstance(shot, (bytes, bytearray)) or not getattr(shot, "size", 0):
        return obs
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(shot).save(buf, format="PNG")
    return {**obs, "screenshot": buf.getvalue()}


class ForeignAgent(Agent):
    """An agent written for the public suites' runners (``reset()`` or ``reset(logger)``, then
    ``predict(instruction, obs) -> (response, actions)``), adapted to the harness's :class:`Agent`: it gets
    the screenshot as PNG bytes, as those runners give it."""

    def __init__(self, inner: Any, model: str, action_space: str = "pyautogui"):
        super().__init__(action_space=action_space)
        self.inner = inner
        self.name = model

    def reset(self, task, env=None) -> None:
        super().reset(task, env)
        reset = getattr(self.inner, "reset", None)
        if reset is None:
            return
        try:
            required = [p for p in inspect.signature(reset).parameters.values()
                        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            required = []
        if required:
            reset(log)  # the public runners pass their logger
        else:
            reset()

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        self.last_turn = TurnInfo()
        response, actions = self.inner.predict(instruction, _as_public_observation(obs))
        return response, list(actions or [])

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()
