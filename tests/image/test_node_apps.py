"""Guest Node.js apps in a profile: the recipe's tables, the lock, the install's launchers."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from desktop_env.errors import ImageBuildError
from desktop_env.image import node_apps
from desktop_env.image.digest import json_digest
from desktop_env.image.node_apps import NodeAppSpec
from desktop_env.image.recipe import Recipe

PARENT = '[profile]\nkernel_cmdline = "root=/dev/vda"\n[debian]\npackages = ["a"]\n'
APP = ('[node.apps.editor]\npath = "/opt/editor"\nnode = "24.1.0"\nnpm = "11.0.0"\n'
       'dependencies = { tool = "1.2.3" }\nexpose = ["tool"]\n')


def _profiles(tmp_path, child_extra: str = APP):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "parent.toml").write_text(PARENT)
    (tmp_path / "child.toml").write_text('[profile]\nextends = "parent"\n[debian]\npackages = ["b"]\n' + child_extra)
    return tmp_path


def _spec() -> NodeAppSpec:
    return NodeAppSpec("editor", "/opt/editor", "24.1.0", "11.0.0", {"tool": "1.2.3"}, ["tool"])


def _installed_tree(tmp_path):
    """What install_tree leaves: Node.js in node/, the packages, the lock."""
    tree = tmp_path / "tree"
    (tree / "node/bin").mkdir(parents=True)
    (tree / "node/bin/node").write_text("#!/bin/sh\necho node \"$@\"\n")
    (tree / "node/bin/node").chmod(0o755)
    pkg = tree / "node_modules/tool"
    (pkg / "out").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "tool", "version": "1.2.3", "bin": {"tool": "./out/main.js"}}))
    (pkg / "out/main.js").write_text("console.log('hi')\n")
    (tree / "package-lock.json").write_text(json.dumps({"packages": {
        "": {"dependencies": {"tool": "1.2.3"}}, "node_modules/tool": {"version": "1.2.3"},
        "node_modules/tool/node_modules/inner": {"version": "0.1.0"}, "node_modules/dep": {"version": "2.0.0"}}}))
    (tree / ".complete").write_text("x\n")
    return tree


def test_profile_declares_node_apps_and_they_key_its_package_layer(tmp_path):
    recipe = Recipe.load("child", _profiles(tmp_path))
    assert recipe.node_apps == [_spec()]
    assert recipe.locked_node_apps() is None, "no lock yet"
    without = Recipe.load("child", _profiles(tmp_path / "plain", ""))
    assert recipe.package_hash("http://m", "parent") != without.package_hash("http://m", "parent")
    other = Recipe.load("child", _profiles(tmp_path / "other", APP.replace('"24.1.0"', '"24.2.0"')))
    assert other.package_hash("http://m", "parent") != recipe.package_hash("http://m", "parent")


def test_lock_is_used_only_while_it_matches_the_recipe(tmp_path, monkeypatch):
    recipe = Recipe.load("child", _profiles(tmp_path))
    package_lock = {"lockfileVersion": 3, "packages": {}}
    monkeypatch.setattr(node_apps, "lock", lambda app, cache: package_lock)  # what npm would resolve
    entry = node_apps.lock_entries(recipe.node_apps, tmp_path)["editor"]  # as `image lock` writes it
    recipe.lock_path.write_text(json.dumps({"python_version": "3.11.2", "venvs": {}, "node_apps": {"editor": entry}}))
    assert recipe.locked_node_apps() == {"editor": package_lock}
    locked_hash = recipe.package_hash("http://m", "parent")
    entry["spec"]["dependencies"] = {"tool": "1.2.4"}
    recipe.lock_path.write_text(json.dumps({"python_version": "3.11.2", "venvs": {}, "node_apps": {"editor": entry}}))
    assert recipe.locked_node_apps() is None, "a lock of another version is stale"
    assert recipe.package_hash("http://m", "parent") != locked_hash


@pytest.mark.parametrize("extra, message", [
    (APP.replace('path = "/opt/editor"\n', ""), "needs 'path'"),
    (APP.replace('"/opt/editor"', '"opt/editor"'), "absolute guest path"),
    (APP.replace('dependencies = { tool = "1.2.3" }', "dependencies = {}"), "dependencies must map"),
])
def test_bad_node_app_tables_name_the_field(tmp_path, extra, message):
    with pytest.raises(ImageBuildError, match=message) as err:
        Recipe.load("child", _profiles(tmp_path, extra))
    assert "node.apps.editor" in str(err.value) and "child.toml" in str(err.value)


def test_a_root_profile_cannot_declare_node_apps(tmp_path):
    (tmp_path / "solo.toml").write_text(PARENT + APP)
    with pytest.raises(ImageBuildError, match="extends"):
        Recipe.load("solo", tmp_path)


def test_office_profile_locks_code_server_on_node_24():
    recipe = Recipe.load("office")
    (app,) = recipe.node_apps
    assert app.node.startswith("24.") and "code-server" in app.dependencies
    lock = recipe.locked_node_apps()
    assert lock is not None, "office.lock.json is stale: run `desktop-env image lock --profile office`"
    assert lock["code-server"]["packages"]["node_modules/code-server"]["version"] == app.dependencies["code-server"]


def test_copy_into_puts_the_app_at_its_path_and_a_launcher_on_path(tmp_path):
    tree = _installed_tree(tmp_path)
    root = tmp_path / "root"
    manifest = node_apps.copy_into(root, _spec(), tree)
    assert manifest == {"node": "24.1.0", "npm": "11.0.0", "path": "/opt/editor",
                        "packages": {"tool": "1.2.3", "dep": "2.0.0"}}
    assert (root / "opt/editor/node_modules/tool/out/main.js").exists()
    assert not (root / "opt/editor/.complete").exists()
    launcher = root / "usr/local/bin/tool"
    assert os.access(launcher, os.X_OK)
    assert 'exec /opt/editor/node/bin/node /opt/editor/node_modules/tool/out/main.js "$@"' in launcher.read_text()
    # Run it against the copied tree: the launcher passes its arguments to Node.js with the script.
    text = launcher.read_text().replace("/opt/editor", str(root / "opt/editor"))
    launcher.write_text(text)
    out = subprocess.run([str(launcher), "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"node {root}/opt/editor/node_modules/tool/out/main.js --version"


def test_exposing_a_command_no_dependency_provides_is_an_error(tmp_path):
    tree = _installed_tree(tmp_path)
    spec = NodeAppSpec("editor", "/opt/editor", "24.1.0", "11.0.0", {"tool": "1.2.3"}, ["nope"])
    with pytest.raises(ImageBuildError, match="'nope'"):
        node_apps.copy_into(tmp_path / "root", spec, tree)


def test_a_complete_install_is_reused_without_building(tmp_path, monkeypatch):
    spec, lock = _spec(), {"packages": {}}
    key = json_digest({"spec": spec.__dict__, "lock": lock})
    tree = tmp_path / "node-apps" / f"editor-{key}"
    tree.mkdir(parents=True)
    (tree / ".complete").write_text(key)
    monkeypatch.setattr(node_apps, "check_host_tools", lambda: pytest.fail("a cached install must not rebuild"))
    assert node_apps.install_tree(spec, lock, tmp_path) == tree
