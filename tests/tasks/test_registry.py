"""Registries: every name of the compatibility reference is registered, duplicates are refused, shared names share code."""
from __future__ import annotations

import pytest

from desktop_env import registry as reg
from desktop_env.registry import Registry, UnknownNameError

SETUP_NAMES = """google_chrome_browser copyfile_from_host_to_guest script_and_execute launch open execute command sleep
activate_window close_window download upload_file chrome_open_tabs chrome_close_tabs change_wallpaper login
googledrive update_browse_history dagster_webui_init airbyte_webui_init metabase_webui_init superset_webui_init
astro_webui_init bigquery_init bigquery_login snowflake_init snowflake_login snowflake_write_sqls_in_new_worksheet
snowflake_delete_folder snowflake_delete_filter dbt_cloud_init dbt_cloud_webui_login workarena_task_init
workarena_unique_fields googledrive_init googledrive_login hasura_login""".split()
GETTER_NAMES = """rule local_file vm_file vm_script_output validate_correct_url active_url_from_accessTree active_tab_info
html_check vm_command_line vm_command_error list airbyte_localhost_page superset_localhost_page bigquery_table_to_csv
bigquery_sql_result_to_csv bigquery_datasets bigquery_connections snowflake_table_to_csv dbt_job_info dbt_project_info
dbt_environment_info dbt_profiles metabase_question_sql googlesheet_active_file workarena_task_result
vm_terminal_output accessibility_tree vm_screen_size vm_window_size vm_wallpaper list_directory cache_file""".split()
METRIC_NAMES = """check_include_exclude compare_csv compare_table compare_notebook_outputs compare_notebook_cells
compare_ipynb_files is_jupyter_cell_executed are_jupyter_outputs_cleared compare_jupyterlab_images
check_local_database compare_json_file exact_match literal_match compare_text_file diff_text_file check_yaml_file
check_file_existence is_expected_url_pattern_match is_not_in_list compare_images compare_image_list
compare_metabase_images compare_sql infeasible check_json""".split()
RUNNABLE_SETUP = """google_chrome_browser copyfile_from_host_to_guest script_and_execute launch open execute command
sleep activate_window close_window download upload_file change_wallpaper chrome_open_tabs chrome_close_tabs
update_browse_history""".split()


@pytest.mark.parametrize("name", SETUP_NAMES)
def test_setup_name_registered(name):
    assert name in reg.SETUP_STEPS
    assert name in reg.CONFIG_DISPATCH  # the func/arguments spelling reaches every step too


@pytest.mark.parametrize("name", GETTER_NAMES)
def test_getter_name_registered(name):
    assert name in reg.GETTERS


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_metric_name_registered(name):
    assert reg.METRICS.get(name).status == reg.SUPPORTED


@pytest.mark.parametrize("name", RUNNABLE_SETUP)
def test_runnable_setup_steps_are_supported(name):
    assert reg.SETUP_STEPS.get(name).status == reg.SUPPORTED


def test_statuses_of_unrunnable_names():
    assert reg.SETUP_STEPS.get("snowflake_init").status == reg.ACCOUNT
    assert reg.SETUP_STEPS.get("airbyte_webui_init").status == reg.UNAVAILABLE
    assert "not in any image" in reg.SETUP_STEPS.get("metabase_webui_init").note
    assert reg.GETTERS.get("dbt_job_info").status == reg.ACCOUNT


def test_vm_file_is_get_vm_file():
    from desktop_env.evaluators.getters.file import get_vm_file
    assert reg.GETTERS["vm_file"] is get_vm_file
    assert reg.GETTERS.get("vm_file").required == ("path", "dest")


def test_command_is_an_alias_of_execute():
    assert reg.SETUP_STEPS["command"] is reg.SETUP_STEPS["execute"]


def test_duplicates_are_refused():
    r = Registry("thing", skip=("ctx",))

    @r.register()
    def one(ctx, a, b=1):
        return a

    assert r.entries["one"].required == ("a",) and r.entries["one"].accepted == ("a", "b")
    with pytest.raises(ValueError, match="duplicated thing 'one'"):
        r.register("one")(lambda ctx: None)


def test_real_registries_refuse_duplicates():
    with pytest.raises(ValueError, match="duplicated metric 'compare_csv'"):
        reg.METRICS.register("compare_csv")(lambda result, expected: 0.0)


def test_unknown_name_suggests():
    with pytest.raises(UnknownNameError) as ei:
        reg.GETTERS.get("vm_files", path="t.json", field="evaluator.result.type")
    assert ei.value.suggestions[0] == "vm_file" and ei.value.field == "evaluator.result.type"


def test_config_dispatch_shares_the_setup_implementation(tmp_path):
    """The func/arguments adapter calls the same step function with the context as ``agent``."""
    calls = []
    r = Registry("step", skip=("ctx",))

    @r.register()
    def demo(ctx, x, y=2):
        calls.append((ctx, x, y))

    from desktop_env.configs.dispatch import _adapter
    adapter = _adapter(r.entries["demo"])
    adapter(task="T", agent="CTX", x=1)
    assert calls == [("CTX", 1, 2)]
    d = Registry("config func", skip=("task", "agent"))
    d.register("demo")(adapter)
    assert d.entries["demo"].required == ("x",) and d.entries["demo"].accepted == ("x", "y")


def test_eval_dispatch_entries_are_whole_evaluators():
    e = reg.EVAL_DISPATCH.get("compare_csv")
    assert e.required == ("vm_result", "local_expected")
    assert "ignore_order" in e.accepted and e.host_paths == ("local_expected",)
    assert reg.EVAL_DISPATCH.get("compare_table").required == ("vm_result",)


def test_every_module_that_registers_is_listed_in_one_place():
    """The built-in entries are the modules of registry.BUILTIN_MODULES: a module that registers
    anything (``@X.register``, ``@register_agent``, ``@register_provider``) is listed there."""
    import re
    from pathlib import Path

    from desktop_env.registry import BUILTIN_MODULES

    root = Path(__file__).resolve().parents[2]
    listed = {m for group in BUILTIN_MODULES.values() for m in group}
    pattern = re.compile(r"^@(\w+\.register\b|register_agent\(|register_provider\()", re.M)
    registering = set()
    for path in (root / "desktop_env").rglob("*.py"):
        if pattern.search(path.read_text()):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            registering.add(module.removesuffix(".__init__"))
    # a package listed stands for the modules it imports (desktop_env.providers.libvirt -> its provider)
    unlisted = {m for m in registering if m not in listed and m.rsplit(".", 1)[0] not in listed}
    assert registering and not unlisted, f"modules that register but are not in BUILTIN_MODULES: {sorted(unlisted)}"


def test_base_modules_do_not_import_their_plugins():
    """Importing an agent or provider base (or a metrics/getters package) loads no plugin: plugins load
    on the first registry lookup, from BUILTIN_MODULES."""
    import subprocess
    import sys

    code = ("import sys, desktop_env.agents.base, desktop_env.providers.base, desktop_env.evaluators.metrics, "
            "desktop_env.evaluators.getters\n"
            "plugins = ['desktop_env.agents.simple', 'desktop_env.agents.human', 'desktop_env.providers.qemu.provider',"
            " 'desktop_env.evaluators.metrics.table', 'desktop_env.evaluators.getters.vm']\n"
            "print([p for p in plugins if p in sys.modules])\n"
            "from desktop_env.agents.create import builtin_agents\n"
            "print(builtin_agents())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first == "[]"
    assert "oracle" in second and "noop" in second
