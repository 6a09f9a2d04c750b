"""Server configuration: defaults, the JSON config file, and CLI overrides."""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from dataclasses import dataclass, field

#: Command that sets the guest clock; the epoch seconds are appended as the last argument.
DEFAULT_CLOCK_COMMAND = ["sudo", "-n", "/usr/local/sbin/desktop-env-set-clock"]

#: Extra environment for programs the server starts, so that they register with AT-SPI.
#: A value of ``None`` removes the variable.
DEFAULT_CHILD_ENV: dict[str, str | None] = {
    "NO_AT_BRIDGE": None,
    "ACCESSIBILITY_ENABLED": "1",  # Chromium: expose the AT-SPI tree
    "GTK_MODULES": "gail:atk-bridge",
    "QT_ACCESSIBILITY": "1",
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
}


class ConfigError(ValueError):
    """The configuration file or the command line is invalid."""


@dataclass
class ServerConfig:
    """Everything the server can be told; see docs/vm_server.md for each key.

    Raises:
        ConfigError: from ``validate`` when values are inconsistent.
    """

    host: str = "0.0.0.0"
    port: int = 5000
    auth: bool = True
    token: str | None = None
    command_timeout_s: float = 120.0  # default limit for /execute and friends
    pyautogui_timeout_s: float = 60.0  # default limit for executor calls
    clock_command: list[str] = field(default_factory=lambda: list(DEFAULT_CLOCK_COMMAND))
    #: set the clock in the server's own process (needs CAP_SYS_TIME, which the image's unit grants);
    #: clock_command is the fallback when that is refused
    clock_settime: bool = False
    #: split the server's cgroup (a unit with Delegate=yes): launched programs below the server in CPU
    launch_cgroup: bool = False
    display: str | None = None  # X display; None means $DISPLAY, else ":0"
    display_wait_s: float = 5.0  # how long an X endpoint waits for the display to appear
    recordings_dir: str = field(default_factory=lambda: os.path.join(tempfile.gettempdir(), "desktop-env-recordings"))
    recording_fps: int = 10
    ffmpeg: str = "ffmpeg"
    a11y_max_depth: int = 50
    a11y_max_nodes: int = 20000
    a11y_timeout_s: float = 20.0  # budget for building one accessibility tree
    a11y_call_timeout_s: float = 3.0  # D-Bus timeout of a single AT-SPI call
    max_upload_bytes: int = 64 * 1024 ** 3
    threads: int = 16  # waitress worker threads (long commands each hold one)
    child_env: dict = field(default_factory=lambda: dict(DEFAULT_CHILD_ENV))
    executor_python: str | None = None  # interpreter of the pyautogui executor; None = this one
    log_level: str = "INFO"

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "ServerConfig":
        """Load a JSON config file; unknown keys are an error (they are usually typos)."""
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path} must hold a JSON object")
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: dict, source: str = "config") -> "ServerConfig":
        """Build a config from a dict, rejecting unknown keys."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {unknown}; known keys: {sorted(known)}")
        cfg = cls()
        for key, value in data.items():
            setattr(cfg, key, value)
        if "child_env" in data:  # merge over the defaults instead of replacing them
            cfg.child_env = {**DEFAULT_CHILD_ENV, **(data["child_env"] or {})}
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """Check types and consistency.

        Raises:
            ConfigError: naming the offending key.
        """
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ConfigError(f"port must be an integer in 0..65535, got {self.port!r}")
        for key in ("auth", "clock_settime", "launch_cgroup"):
            if not isinstance(getattr(self, key), bool):
                raise ConfigError(f"{key} must be true or false, got {getattr(self, key)!r}")
        if self.auth and not self.token:
            raise ConfigError("auth is on but no token is set: give --token, set \"token\" in the "
                              "config file, or turn auth off with --no-auth / \"auth\": false")
        if self.token is not None and not isinstance(self.token, str):
            raise ConfigError("token must be a string")
        if not (isinstance(self.clock_command, list) and self.clock_command
                and all(isinstance(a, str) for a in self.clock_command)):
            raise ConfigError("clock_command must be a non-empty list of strings")
        for key in ("command_timeout_s", "pyautogui_timeout_s", "display_wait_s", "a11y_timeout_s",
                    "a11y_call_timeout_s"):
            value = getattr(self, key)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"{key} must be a positive number, got {value!r}")
        for key in ("recording_fps", "a11y_max_depth", "a11y_max_nodes", "threads", "max_upload_bytes"):
            value = getattr(self, key)
            if not isinstance(value, int) or value <= 0:
                raise ConfigError(f"{key} must be a positive integer, got {value!r}")
        if not isinstance(self.child_env, dict):
            raise ConfigError("child_env must be an object of NAME: value-or-null")

    @property
    def display_name(self) -> str:
        """The X display to use: the configured one, else ``$DISPLAY``, else ``:0``."""
        return self.display or os.environ.get("DISPLAY") or ":0"

    def child_environment(self) -> dict[str, str]:
        """Environment for programs the server starts (commands, launches, the executor)."""
        env = dict(os.environ)
        env["DISPLAY"] = self.display_name
        for key, value in self.child_env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env
