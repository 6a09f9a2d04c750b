"""Your own agent through ``--agent package.module:Class`` (or an installed entry point): loaded, built with the
options it takes, adapted when it follows the public suites' contract, and refused with a clear message
before any VM starts when it cannot be loaded."""
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from desktop_env.agents import Agent, create_agent
from desktop_env.agents.plugins import ForeignAgent, installed_plugins, load_agent_class
from desktop_env.errors import DesktopEnvError
from desktop_env.harness.options import parse_args

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''
from desktop_env.agents import Agent


class Mine(Agent):
    name = "mine"

    def __init__(self, action_space="pyautogui", temperature=1.0, model=None):
        super().__init__(action_space=action_space)
        self.temperature, self.model = temperature, model
        self.tasks = []

    def reset(self, task, env=None):
        super().reset(task, env)
        self.tasks.append(task)

    def predict(self, instruction, obs):
        return "done", ["DONE"]


class PublicStyle:
    """As the public suites' runners call an agent: reset(_logger=None), predict(instruction, obs)."""

    def __init__(self, model="gpt", max_tokens=1500):
        self.model, self.max_tokens, self.resets, self.seen = model, max_tokens, 0, None

    def reset(self, _logger=None):
        self.resets += 1

    def predict(self, instruction, obs):
        self.seen = obs
        return "click", ["import pyautogui; pyautogui.click(1, 2)"]


class NotAnAgent:
    pass
'''


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    name = f"my_agents_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_plugin_class_is_built_with_the_options_it_takes_and_names_the_run(plugin_module, tmp_path):
    args = parse_args(["--agent", f"{plugin_module}:Mine", "--result_dir", str(tmp_path / "r"),
                       "--temperature", "0.2"])
    assert args.model == "mine"  # the class's name labels the results folder
    named = parse_args(["--agent", f"{plugin_module}:Mine", "--model", "mine-v2", "--result_dir", str(tmp_path)])
    assert named.model == "mine-v2"
    agent = create_agent("mine", agent=f"{plugin_module}:Mine", action_space="computer_13", temperature=0.2,
                         max_tokens=99, base_url=None)  # options it does not take are left out
    assert isinstance(agent, Agent) and agent.action_space == "computer_13"
    assert (agent.temperature, agent.model) == (0.2, "mine")
    assert agent.predict("do it", {}) == ("done", ["DONE"])


def test_a_public_suite_style_agent_is_adapted_and_sees_png_bytes(plugin_module):
    agent = create_agent("gpt-x", agent=f"{plugin_module}:PublicStyle", max_tokens=7, action_space="pyautogui")
    assert isinstance(agent, ForeignAgent) and agent.inner.max_tokens == 7 and agent.inner.model == "gpt-x"
    agent.reset(task=None)
    agent.reset(task=None)
    assert agent.inner.resets == 2
    pixels = np.zeros((4, 6, 3), dtype=np.uint8)
    pixels[1, 2] = (255, 0, 0)
    response, actions = agent.predict("click it", {"screenshot": pixels, "accessibility_tree": "tree"})
    assert (response, actions) == ("click", ["import pyautogui; pyautogui.click(1, 2)"])
    seen = agent.inner.seen
    assert seen["accessibility_tree"] == "tree"
    with Image.open(io.BytesIO(seen["screenshot"])) as img:
        assert img.format == "PNG" and img.size == (6, 4) and img.convert("RGB").getpixel((2, 1)) == (255, 0, 0)


@pytest.mark.parametrize("spec,message", [
    ("no_such_module_xyz:Agent", "module 'no_such_module_xyz' does not import"),
    ("{mod}:Missing", "has no 'Missing' (its classes with a predict method: Mine, PublicStyle)"),
    ("{mod}:NotAnAgent", "NotAnAgent is not an agent class"),
    ("{mod}:", "give a plug-in as package.module:ClassName"),
])
def test_a_plugin_that_cannot_load_is_named(plugin_module, spec, message):
    with pytest.raises(DesktopEnvError, match="--agent") as err:
        load_agent_class(spec.format(mod=plugin_module))
    assert message in str(err.value)


def test_run_py_refuses_a_bad_agent_before_anything_is_written(tmp_path):
    for spec, message in [("no_such_module_xyz:Agent", "does not import"),
                          ("prompt", "not a kind (computer-use, openai-computer-use, prompted, qwen-vl, ui-tars)")]:
        out = subprocess.run([sys.executable, "run.py", "--agent", spec, "--result_dir", str(tmp_path / "r")],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and message in out.stderr, out.stderr
        assert not (tmp_path / "r").exists()


def test_an_installed_package_names_its_agent_in_the_entry_point_group(plugin_module, tmp_path, monkeypatch):
    dist = tmp_path / "my_agents_pkg-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-agents-pkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [desktop_env.agents]
        mine = {plugin_module}:Mine
        """))
    assert installed_plugins()["mine"] == f"{plugin_module}:Mine"
    args = parse_args(["--agent", "mine", "--result_dir", str(tmp_path / "r")])
    assert args.model == "mine"
    assert type(create_agent(args.model, agent="mine")).__name__ == "Mine"
