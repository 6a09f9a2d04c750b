"""The public data-science suite's semantics on the base image, with a small task file of our own written in its
conventions (an excel task: copy the workbook, `open` it; a postconfig that activates its Calc window by its
exact title and saves): the first observation shows the file, and an agent that closes Calc before DONE is
scored on the saved file (the failed postconfig step is recorded, as the suite's own harness does)."""
import json
import uuid

import openpyxl
import pytest

from desktop_env.envs import DesktopEnv

pytestmark = [pytest.mark.vm, pytest.mark.slow]


@pytest.fixture
def excel_task(tmp_path):
    """An excel task in the suite's layout and spelling; its gold is the workbook as it is copied in."""
    tid = str(uuid.uuid4())
    folder = tmp_path / "evaluation_examples" / "examples" / "excel" / tid
    folder.mkdir(parents=True)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    for row in (("Month", "Sales"), ("Jan", 120), ("Feb", 95)):
        ws.append(row)
    wb.save(folder / "Sales.xlsx")
    wb.save(folder / "Sales_gold.xlsx")
    rel = f"evaluation_examples/examples/excel/{tid}"
    task = {
        "id": tid, "snapshot": "excel", "instruction": "Save the workbook Sales.xlsx as it is.",
        "config": [
            {"type": "copyfile_from_host_to_guest", "parameters": {"src": f"{rel}/Sales.xlsx",
                                                                   "dest": "/home/user/Sales.xlsx"}},
            {"type": "open", "parameters": {"path": "/home/user/Sales.xlsx"}},
        ],
        "related_apps": ["excel"],
        "evaluator": {
            "postconfig": [
                {"type": "activate_window", "parameters": {"window_name": "Sales.xlsx - LibreOffice Calc",
                                                           "strict": True}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
                {"type": "execute", "parameters": {"command": ["python", "-c",
                                                               "import pyautogui; pyautogui.hotkey(\"ctrl\", \"s\");"]}},
                {"type": "sleep", "parameters": {"seconds": 0.5}},
            ],
            "func": "compare_table",
            "result": {"type": "vm_file", "path": "/home/user/Sales.xlsx", "dest": "Sales.xlsx"},
            "expected": {"type": "local_file", "path": f"{rel}/Sales_gold.xlsx", "dest": "Sales_gold.xlsx"},
            "options": {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]},
        },
        "tags": ["traditional_data_processing", "cli+gui", "abstract"],
    }
    path = folder / f"{tid}.json"
    path.write_text(json.dumps(task, indent=1))
    return path


def test_open_shows_the_file_and_a_closed_app_still_scores_its_saved_file(base_image, excel_task):
    with DesktopEnv(path_to_vm=base_image.name, require_a11y_tree=False, max_steps=5) as env:
        obs, info = env.reset(options={"task_config": str(excel_task)})
        # the setup returned once Calc showed the workbook: the agent's first observation has it
        windows = env.controller.execute(["wmctrl", "-lG"])["output"]
        assert "Sales.xlsx - LibreOffice Calc" in windows, windows
        # ... drawn, not a window listed but still one flat colour (Calc under emulation draws seconds later)
        import io

        from PIL import Image

        from desktop_env.configs.steps import window_drawn

        line = next(x for x in windows.splitlines() if "Sales.xlsx - LibreOffice Calc" in x)
        box = tuple(int(v) for v in line.split()[2:6])
        first = io.BytesIO()
        Image.fromarray(obs["screenshot"]).save(first, "PNG")  # the observation's pixels (height, width, RGB)
        assert window_drawn(first.getvalue(), box), (box, windows)
        # the agent closes Calc (its file is already as it should be), then says DONE
        obs, reward, terminated, truncated, info = env.step(
            "import subprocess; subprocess.run(['pkill', '-f', 'soffice']); import time; time.sleep(3)")
        assert not info.get("error"), info
        obs, reward, terminated, truncated, info = env.step("DONE")  # never raises for a failed postconfig step
    assert terminated and reward == 1.0, info
    assert info["reason"]["kind"] == "passed"
    assert info["postconfig_errors"] and info["postconfig_errors"][0].startswith(
        "evaluator.postconfig[0] (activate_window)"), info


INIT_SH = """#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate dagster
dagster dev > /dev/null 2>&1 &
echo "dagster started"
"""


@pytest.mark.parametrize("config,where,says", [
    ([{"type": "script_and_execute", "parameters": {"src": "init.sh", "dest": "/home/user/init.sh"}}],
     "config[0]", "conda.sh` failed (exit 1)"),
    ([{"type": "launch", "parameters": {"command": ["bash", "-c",
                                                    "source /home/user/anaconda3/etc/profile.d/conda.sh && "
                                                    "conda activate jupyter && jupyter lab"]}},
      {"type": "sleep", "parameters": {"seconds": 2}}], "config[0]", "exited with 1 during the setup"),
])
def test_a_setup_that_fails_silently_is_a_task_error_not_the_agent_s_zero(base_image, tmp_path, config, where,
                                                                          says):
    """The suite's silenced init.sh (it sources conda, which this VM lacks, and ends on an echo) and a launch that
    starts and dies: the harness records task_error naming the step; the agent is not scored."""
    from desktop_env.agents.simple import NoopAgent
    from desktop_env.harness.jobs import Job, run_job
    from desktop_env.harness.options import parse_args

    tid = str(uuid.uuid4())
    folder = tmp_path / "evaluation_examples" / "examples" / "dagster" / tid
    folder.mkdir(parents=True)
    (folder / "init.sh").write_text(INIT_SH)
    (folder / f"{tid}.json").write_text(json.dumps({
        "id": tid, "snapshot": "dagster", "instruction": "Materialize the asset.", "config": config,
        "evaluator": {"func": "check_include_exclude",
                      "result": {"type": "vm_command_line", "command": "echo failed", "shell": True},
                      "expected": {"type": "rule", "rules": {"include": ["succeed"], "exclude": ["failed"]}}}}))
    args = parse_args(["--model", "noop", "--result_dir", str(tmp_path / "results"), "--path_to_vm", base_image.name])
    job = Job("dagster", tid, 1, folder / f"{tid}.json", tmp_path / "results" / tid)
    env_box = [DesktopEnv(path_to_vm=base_image.name, require_a11y_tree=False)]
    try:
        status = run_job(job, args, NoopAgent(), env_box, None)
    finally:
        if env_box[0] is not None:
            env_box[0].close()
    assert status["status"] == "task_error" and status["score"] is None, status
    assert where in status["error"] and says in status["error"], status["error"]
