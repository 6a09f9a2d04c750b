"""Model agents: OpenAI-compatible chat and Anthropic messages clients (official SDKs), prompting, history, retries."""
from __future__ import annotations

import base64
import inspect
import io
import logging
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from PIL import Image

from desktop_env.agents.a11y import a11y_text, draw_marks
from desktop_env.agents.base import Agent, TurnInfo
from desktop_env.agents.parsing import ParseError, ScreenMapping, extract_actions, fit_screen, map_action
from desktop_env.agents.prompts import system_prompt, turn_text
from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

#: HTTP statuses worth another try: timeouts, conflicts, rate limits, server errors.
RETRY_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))
#: Statuses that refuse the caller for good (the key, the account's rights, the model's name): no request will do.
REFUSED_STATUSES = frozenset({401, 402, 403, 404})
#: What a model API failure is, for the harness (docs/agents.md, "When the model API fails").
TRANSIENT, REFUSED, REJECTED = "transient", "refused", "rejected"
#: The longest wait a Retry-After header may ask for before the next attempt (seconds).
MAX_RETRY_AFTER_S = 300.0


class ModelAPIError(DesktopEnvError):
    """The model API failed: a refused request, or still failing after the retries.

    Attributes:
        status: the HTTP status of the last answer (None when there was no answer).
        retryable: whether the failure was of a kind that is retried (rate limit, 5xx, connection).
        kind: ``transient`` (retryable: rate limit, 5xx, timeout, no connection), ``refused`` (the key,
            rights or model name are refused: 401, 402, 403, 404; the run stops) or ``rejected`` (this
            request was refused for its content or size, e.g. a context too long: the agent's failure).
        retry_after_s: the wait the server asked for (its Retry-After header), if any.
    """

    def __init__(self, message: str, status: int | None = None, retryable: bool = False,
                 retry_after_s: float | None = None):
        self.status = status
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.kind = TRANSIENT if retryable else REFUSED if status in REFUSED_STATUSES or status is None else REJECTED
        super().__init__(message)


@dataclass
class Completion:
    """One model answer with its cost: tokens in/out (None when the API does not say) and latency."""

    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float = 0.0


@dataclass
class Message:
    """A provider-neutral chat message: ``role`` user|assistant, text and optional PNG images."""

    role: str
    text: str
    images: list[bytes] = field(default_factory=list)


class ChatClient:
    """A model behind an API: ``complete(system, messages, ...)`` -> :class:`Completion`.

    SDK-level retries are off (``max_retries=0``); :func:`call_with_backoff` retries instead,
    so the bound and the logging are ours.
    """

    provider = ""

    def __init__(self, model: str):
        self.model = model

    def complete(self, system: str, messages: list[Message], temperature: float | None, top_p: float | None,
                 max_tokens: int) -> Completion:
        raise NotImplementedError

    @staticmethod
    def _b64(png: bytes) -> str:
        return base64.b64encode(png).decode("ascii")


class OpenAIChatClient(ChatClient):
    """Chat completions through the ``openai`` SDK: OpenAI or any compatible server (vLLM, Ollama, LM Studio)."""

    provider = "openai"

    def __init__(self, model: str, api_key: str, base_url: str | None = None, timeout_s: float = 300.0):
        super().__init__(model)
        import openai

        self._sdk = openai
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)

    def complete(self, system, messages, temperature, top_p, max_tokens) -> Completion:
        wire: list[dict] = [{"role": "system", "content": system}]
        for m in messages:
            if m.role == "assistant" or not m.images:
                wire.append({"role": m.role, "content": m.text})
                continue
            content: list[dict] = [{"type": "text", "text": m.text}]
            content += [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + self._b64(png)}}
                        for png in m.images]
            wire.append({"role": "user", "content": content})
        kwargs = sampling_kwargs(self.client.chat.completions.create, {"model": self.model, "messages": wire},
                           max_tokens=max_tokens, temperature=temperature, top_p=top_p)
        t0 = time.monotonic()
        reply = sdk_call(self._sdk, self.client, self.model, self.client.chat.completions.create, kwargs)
        latency = time.monotonic() - t0
        choices = getattr(reply, "choices", None) or []
        text = (choices[0].message.content or "") if choices and choices[0].message else ""
        usage = getattr(reply, "usage", None)
        return Completion(text, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None),
                          latency)


class AnthropicChatClient(ChatClient):
    """Messages through the ``anthropic`` SDK (``claude-*`` models)."""

    provider = "anthropic"

    def __init__(self, model: str, api_key: str, base_url: str | None = None, timeout_s: float = 300.0):
        super().__init__(model)
        import anthropic

        self._sdk = anthropic
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)

    def complete(self, system, messages, temperature, top_p, max_tokens) -> Completion:
        wire = []
        for m in messages:
            if m.role == "assistant" or not m.images:
                wire.append({"role": m.role, "content": m.text or "(empty)"})
                continue
            content: list[dict] = [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                "data": self._b64(png)}} for png in m.images]
            content.append({"type": "text", "text": m.text})
            wire.append({"role": "user", "content": content})
        kwargs = sampling_kwargs(self.client.messages.create, {"model": self.model, "system": system, "messages": wire,
                                                         "max_tokens": max_tokens},
                           temperature=temperature, top_p=top_p)
        t0 = time.monotonic()
        reply = sdk_call(self._sdk, self.client, self.model, self.client.messages.create, kwargs)
        latency = time.monotonic() - t0
        text = "".join(getattr(b, "text", "") or "" for b in (getattr(reply, "content", None) or [])
                       if getattr(b, "type", "") == "text")
        usage = getattr(reply, "usage", None)
        return Completion(text, getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None), latency)


def sdk_call(sdk, client, model: str, create: Callable, kwargs: dict):
    """``create(**kwargs)`` on a client of ``sdk`` (the ``openai`` or ``anthropic`` module), its failures
    as :class:`ModelAPIError` (retryable or not, with the HTTP status)."""
    try:
        return create(**kwargs)
    except sdk.APIStatusError as exc:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        raise ModelAPIError(f"{model} at {client.base_url}: {exc}", exc.status_code,
                            exc.status_code in RETRY_STATUSES, retry_after(headers.get("retry-after"))) from exc
    except sdk.APIConnectionError as exc:
        raise ModelAPIError(f"{model} at {client.base_url} unreachable: {exc}", None, True) from exc


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header value asks to wait (delta-seconds or an HTTP date), None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def default_key_env(model: str) -> str:
    """The environment variable a model's API key is read from without ``--api_key_env``."""
    return "ANTHROPIC_API_KEY" if model.startswith("claude") else "OPENAI_API_KEY"


def sampling_kwargs(create: Callable, kwargs: dict, **params: Any) -> dict:
    """``kwargs`` plus the non-None ``params``: as keywords where the SDK method takes them, else in
    ``extra_body`` (SDK releases drop typed sampling keywords while the wire API still takes them)."""
    accepted = inspect.signature(create).parameters
    extra = {}
    for key, value in params.items():
        if value is None:
            continue
        if key in accepted:
            kwargs[key] = value
        else:
            extra[key] = value
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def call_with_backoff(call: Callable[[], Completion], attempts: int = 5, base_s: float = 2.0, max_s: float = 60.0,
                      sleep: Callable[[float], None] = time.sleep) -> Completion:
    """Run ``call``, retrying retryable :class:`ModelAPIError`s with exponential backoff.

    The wait before retry ``i`` (0-based) is ``min(max_s, base_s * 2**i)`` times a jitter
    in [0.5, 1.0], or longer when the server's Retry-After asks for more (up to
    :data:`MAX_RETRY_AFTER_S`); at most ``attempts`` calls are made.

    Raises:
        ModelAPIError: a non-retryable failure at once, or the last retryable one.
    """
    for i in range(attempts):
        try:
            return call()
        except ModelAPIError as exc:
            if not exc.retryable or i == attempts - 1:
                if exc.retryable:
                    raise ModelAPIError(f"{exc} (gave up after {attempts} attempts)", exc.status, True,
                                        exc.retry_after_s) from exc
                raise
            delay = min(max_s, base_s * 2 ** i) * (0.5 + random.random() / 2)
            if exc.retry_after_s is not None:
                delay = max(delay, min(MAX_RETRY_AFTER_S, exc.retry_after_s))
            log.warning("model API call failed (%s); retry %d/%d in %.1f s", exc, i + 1, attempts - 1, delay)
            sleep(delay)
    raise AssertionError("unreachable")


def make_client(model: str, base_url: str | None = None, api_key_env: str | None = None) -> ChatClient:
    """The client for ``model``: ``claude-*`` -> Anthropic, anything else -> OpenAI-compatible.

    The key comes from the environment variable ``api_key_env`` (default ANTHROPIC_API_KEY
    for Claude, OPENAI_API_KEY otherwise). With a ``base_url`` and no key set, a
    placeholder key is sent (local servers such as vLLM and Ollama ignore it).

    Raises:
        ModelAPIError: no key and no base_url (the message names the variable to set).
    """
    key = api_key_for(model, base_url, api_key_env, default_key_env(model))
    cls = AnthropicChatClient if model.startswith("claude") else OpenAIChatClient
    return cls(model, api_key=key, base_url=base_url)


def api_key_for(model: str, base_url: str | None, api_key_env: str | None, default_env: str) -> str:
    """The API key in ``api_key_env`` (default ``default_env``); a placeholder with a ``base_url`` and no key.

    Raises:
        ModelAPIError: no key and no base_url (the message names the variable to set).
    """
    env_name = api_key_env or default_env
    key = os.environ.get(env_name)
    if not key:
        if not base_url:
            raise ModelAPIError(f"model {model!r} needs an API key in the environment variable {env_name} "
                                f"(export {env_name}=...; or name another variable with --api_key_env, or give "
                                f"--base_url for a local server)")
        log.info("no key in %s: sending a placeholder key to %s", env_name, base_url)
        key = "EMPTY"
    return key


_WITH_SCREENSHOT = ("screenshot", "screenshot_a11y_tree", "som")
_WITH_TREE = ("a11y_tree", "screenshot_a11y_tree")


class LLMAgent(Agent):
    """A chat model that sees the screen (downscaled) and/or the accessibility tree and answers actions.

    Each turn sends the system prompt (:mod:`prompts`), the last ``max_trajectory_length``
    turns (observation and answer) and the current observation; the answer is parsed
    with :func:`parsing.extract_actions` and its coordinates mapped from the model's
    screen (``model_screen``, the real screen's aspect kept) to the real one. A reply
    with no usable action gives no actions and ``last_turn.parse_error``.

    Args:
        model: the model name sent to the API.
        action_space, observation_type: as run.py's flags.
        max_trajectory_length: past turns kept in the prompt.
        a11y_tree_max_tokens: budget for the tree / set-of-marks table (estimate: see :mod:`a11y`).
        temperature, top_p, max_tokens: sampling parameters (None: not sent).
        model_screen: the largest screen size the model is shown (width, height).
        base_url, api_key_env: where the model is served and which variable holds the key.
        client: a ready :class:`ChatClient` (overrides model/base_url/api_key_env).
        api_attempts, api_backoff_s: bound and base of the retry backoff.
    """

    def __init__(self, model: str, action_space: str = "pyautogui", observation_type: str = "screenshot",
                 max_trajectory_length: int = 3, a11y_tree_max_tokens: int = 10000,
                 temperature: float | None = 1.0, top_p: float | None = None, max_tokens: int = 1500,
                 model_screen: tuple[int, int] = (1280, 720), base_url: str | None = None,
                 api_key_env: str | None = None, client: ChatClient | None = None, api_attempts: int = 5,
                 api_backoff_s: float = 2.0, **_options: Any):
        super().__init__(action_space)
        if observation_type not in ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som"):
            raise DesktopEnvError(f"unknown observation type {observation_type!r} "
                                  "(use screenshot, a11y_tree, screenshot_a11y_tree or som)")
        self.name = model
        self.observation_type = observation_type
        self.max_trajectory_length = max(0, int(max_trajectory_length))
        self.a11y_tree_max_tokens = a11y_tree_max_tokens
        self.temperature, self.top_p, self.max_tokens = temperature, top_p, max_tokens
        self.model_screen = tuple(model_screen)
        self.client = client or make_client(model, base_url, api_key_env)
        self.api_attempts, self.api_backoff_s = api_attempts, api_backoff_s
        self.history: list[tuple[Message, Message]] = []
        self.screen_mapping: ScreenMapping | None = None

    def reset(self, task, env=None) -> None:
        self.history = []
        self.last_turn = TurnInfo()

    def predict(self, instruction: str, obs: dict) -> tuple[str, list]:
        shot = obs.get("screenshot")
        image = Image.fromarray(shot) if shot is not None and getattr(shot, "size", 0) else None
        screen = image.size if image is not None else self.model_screen
        mapping = ScreenMapping(self.model_size(tuple(screen)), tuple(screen))
        self.screen_mapping = mapping
        tree = obs.get("accessibility_tree") or ""
        images, a11y, table, centres = [], None, None, None
        if self.observation_type == "som":
            if image is None:
                raise DesktopEnvError("the som observation needs a screenshot in the observation")
            marks = draw_marks(image, tree, mapping, self.a11y_tree_max_tokens)
            images, table, centres = [marks.png], marks.table, marks.centres
        elif self.observation_type in _WITH_SCREENSHOT and image is not None:
            images = [png_at(image, mapping.model)]
        if self.observation_type in _WITH_TREE:
            a11y = a11y_text(tree, mapping.screen, self.a11y_tree_max_tokens, mapping)
        user = Message("user", turn_text(instruction, a11y, table, obs.get("error") or ""), images)
        past = self.history[-self.max_trajectory_length:] if self.max_trajectory_length else []
        messages = [m for pair in past for m in pair] + [user]
        system = self.system_text(mapping)
        completion = call_with_backoff(
            lambda: self.client.complete(system, messages, self.temperature, self.top_p, self.max_tokens),
            attempts=self.api_attempts, base_s=self.api_backoff_s)
        self.last_turn = TurnInfo(tokens_in=completion.tokens_in, tokens_out=completion.tokens_out,
                                  latency_s=round(completion.latency_s, 3))
        self.history.append((user, Message("assistant", completion.text)))
        try:
            actions = self.actions_from(completion.text, mapping, centres)
        except ParseError as exc:
            log.warning("could not parse the model's reply: %s", exc)
            self.last_turn.parse_error = str(exc)
            return completion.text, []
        return completion.text, actions

    # -- what a subclass speaking another action grammar changes ---------------------------------
    def model_size(self, screen: tuple[int, int]) -> tuple[int, int]:
        """The size of the screenshot the model is shown for a ``screen`` sized screen."""
        return fit_screen(screen, self.model_screen)

    def system_text(self, mapping: ScreenMapping) -> str:
        """The system prompt: what the model sees and how it answers."""
        return system_prompt(self.action_space, self.observation_type, mapping.model)

    def actions_from(self, text: str, mapping: ScreenMapping, centres: dict | None) -> list:
        """The env actions (real screen coordinates) a reply asks for.

        Raises:
            ParseError: the reply holds no usable action.
        """
        return [map_action(a, mapping) for a in extract_actions(text, self.action_space, mapping.model, centres)]


def png_at(image: Image.Image, size: tuple[int, int]) -> bytes:
    """``image`` as PNG bytes at ``size`` (resized when it differs)."""
    if tuple(image.size) != tuple(size):
        image = image.resize(tuple(size), Image.LANCZOS)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()
