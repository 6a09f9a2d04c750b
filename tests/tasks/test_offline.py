"""Which tasks run here offline (desktop_env/tasks/offline.py): small task files in the public suite's
conventions (an init.sh run by ``script_and_execute``), both ways, and the suite's development split."""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from desktop_env.tasks import load_task
from desktop_env.tasks.offline import image_needed, offline_blockers, runs_here_text, shell_commands

HEADER = """#!/bin/bash

####################################################################################################
# Please ensure that Chromium or Chrome, VSCode, docker and anaconda3 is installed on your system before running this script.
####################################################################################################

# ignore all output and error
exec 1>/dev/null
exec 2>/dev/null
"""


def spider2v_task(suite, app, n, init_sh=None, steps=(), files=None, snapshot=None):
    """A task laid out as the public suite lays its tasks out: <app>/<id>/<id>.json with init.sh beside it,
    copied and run by ``script_and_execute`` (path written from the suite root), then ``steps``."""
    task_id = f"5e1f0000-0000-4000-8000-{n:012d}"
    config = []
    files = dict(files or {})
    if init_sh is not None:
        files["init.sh"] = HEADER + init_sh
        config.append({"type": "script_and_execute", "parameters": {
            "src": f"evaluation_examples/examples/{app}/{task_id}/init.sh", "dest": "/home/user/init.sh"}})
    config += list(steps)
    path = suite(app, {
        "id": task_id, "snapshot": snapshot or app, "instruction": "Do the thing.", "source": ["https://docs.example"],
        "related_apps": [app], "tags": ["cli", "verbose", "data_transformation"], "config": config,
        "evaluator": {"func": "check_include_exclude",
                      "result": {"type": "vm_script_output", "src": f"evaluation_examples/examples/{app}/{task_id}/eval.sh",
                                 "dest": "/home/user/eval.sh"},
                      "expected": {"type": "rule", "rules": {"include": ["succeed"], "exclude": ["failed"]}}},
    }, files={**files, "eval.sh": "#!/bin/bash\ndocker ps | grep -q x && echo succeed || echo failed\n"})
    return load_task(path)


def reasons(task, **kw):
    return [str(b) for b in offline_blockers(task, **kw)]


# --------------------------------------------------------------------------- what stops a task
def test_docker_in_init_sh(suite):
    task = spider2v_task(suite, "superset", 1, "cd /home/user/projects/superset\n"
                                               "docker compose -f docker-compose-image-tag.yml up --detach\n")
    assert reasons(task) == ["uses Docker (init.sh line 11: docker compose -f docker-compose-image-tag.yml up --detach)"]
    assert runs_here_text(image_needed(task), offline_blockers(task)).startswith("not runnable here: uses Docker")


def test_the_astro_cli_piped_from_an_echo(suite):
    task = spider2v_task(suite, "airflow", 2, 'cd /home/user/projects/astro\necho -e "y\\n" | astro dev init\n'
                                              "astro dev start --no-browser >/dev/null 2>&1\n")
    assert reasons(task) == ["uses the Astro CLI (init.sh line 11: astro dev init)"]


def test_wget_from_the_internet(suite):
    task = spider2v_task(suite, "jupyter", 3, "cd /home/user\n"
                                              "wget -q https://raw.githubusercontent.com/x/y/main/data.csv -O data.csv\n")
    assert reasons(task) == [
        "fetches from the internet (init.sh line 11: wget -q https://raw.githubusercontent.com/x/y/main/data.csv -O data.csv)"]


def test_docker_only_in_a_comment_an_echo_or_a_heredoc_does_not_count(suite):
    task = spider2v_task(suite, "jupyter", 4, (
        "# cd /home/user/projects/superset; docker compose up -d (done in the snapshot)\n"
        "source /home/user/anaconda3/etc/profile.d/conda.sh  # then: astro dev init | tee log\n"
        'echo "start it: docker compose up -d; astro dev start" >> ~/.bashrc\n'
        "echo later: bash run-ab-platform.sh or java -jar metabase.jar\n"
        "printf 'astro dev start\\n' > notes.txt\n"
        "cat > README.md <<'EOF'\ndocker run --rm hello-world\nwget https://example.com/x\nEOF\n"
        "# wget https://raw.githubusercontent.com/apache-superset/examples-data/x.csv\n"
        "pip install pandas==2.2.2\n"))
    assert reasons(task) == []
    assert runs_here_text(image_needed(task), []) == "runs on image spider2v"


def test_localhost_curl_does_not_count(suite):
    task = spider2v_task(suite, "dagster", 5, (
        'token=$(curl -X POST "http://localhost:8088/api/v1/security/login" -H "Content-Type: application/json" \\\n'
        "    -d '{\"username\": \"admin\", \"password\": \"admin\"}' | jq -rM .access_token)\n"
        "curl -s http://127.0.0.1:3000/graphql\n"
        'curl -s "http://${HOST}:8080/health"\n'))
    assert reasons(task) == []


def test_commands_in_the_task_json_and_commands_nested_in_a_script(suite):
    launch = {"type": "launch", "parameters": {"command": ["bash", "-c", "sudo docker start superset_app"]}}
    execute = {"type": "execute", "parameters": {"command": "git clone https://github.com/dbt-labs/jaffle_shop.git",
                                                 "shell": True}}
    task = spider2v_task(suite, "dbt", 6, steps=[launch, execute])
    assert reasons(task) == ["uses Docker (config[0] launch: bash -c sudo docker start superset_app)",
                             "fetches from the internet (config[1] execute: git clone "
                             "https://github.com/dbt-labs/jaffle_shop.git)"]
    task = spider2v_task(suite, "dbt", 7, 'msg="$(docker ps | grep webserver)"\nif true; then `abctl local install`; fi\n'
                                          "nohup java -jar /home/user/projects/metabase/metabase.jar &\n")
    assert [b.kind for b in offline_blockers(task)] == ["docker", "airbyte", "metabase"]
    # a script of the project the setup copies (not run by the step itself) is read too
    copy = {"type": "copyfile_from_host_to_guest", "parameters": {
        "src": "evaluation_examples/examples/dbt/5e1f0000-0000-4000-8000-000000000008/start.sh",
        "dest": "/home/user/start.sh"}}
    task = spider2v_task(suite, "dbt", 8, "bash /home/user/start.sh\n", steps=[copy],
                         files={"start.sh": "cd /home/user/projects/airbyte\nbash run-ab-platform.sh\n",
                                "notes.md": "docker compose up -d\n"})
    assert reasons(task) == ["needs Airbyte (start.sh line 2: bash run-ab-platform.sh)"]


def test_other_files_the_steps_copy_are_not_read_as_scripts(suite):
    files = {"models.py": "docker = 1\nwget = 'https://example.com'\n", "docker-compose.yml": "services:\n  db: {}\n",
             "blob.sh": "\x00\x01docker run\n"}
    steps = [{"type": "copyfile_from_host_to_guest", "parameters": {
        "src": f"evaluation_examples/examples/dbt/5e1f0000-0000-4000-8000-000000000009/{name}",
        "dest": f"/home/user/{name}"}} for name in files]
    task = spider2v_task(suite, "dbt", 9, "cd /home/user\n", steps=steps, files=files)
    assert reasons(task) == []


def test_downloads_count_unless_a_mirror_serves_them(suite):
    remote = {"type": "download", "parameters": {"files": [
        {"url": "https://drive.usercontent.google.com/download?id=abc", "path": "/home/user/data.xlsx"}]}}
    local = {"type": "download", "parameters": {"files": [
        {"url": "http://127.0.0.1:8000/data.xlsx", "path": "/home/user/local.xlsx"}]}}
    task = spider2v_task(suite, "excel", 10, steps=[local, remote])
    assert reasons(task) == ["fetches from the internet (config[1].parameters.files[0].url: "
                             "https://drive.usercontent.google.com/download?id=abc)"]
    assert reasons(task, download_mirror=True) == []
    assert runs_here_text(image_needed(task), []) == "runs on any image"  # excel: the base image, which all extend


def test_names_that_cannot_run_here_and_accounts(suite):
    astro_ui = {"type": "astro_webui_init", "parameters": {"listening_port": 9222, "url": "http://localhost:8080"}}
    task = spider2v_task(suite, "airflow", 11, steps=[astro_ui])
    assert reasons(task) == ["uses the Astro CLI (setup step astro_webui_init)"]
    bigquery = {"type": "bigquery_init", "parameters": {"config_file": "evaluation_examples/settings/google/gcp_config.json",
                                                         "project_name": "p", "actions": []}}
    task = spider2v_task(suite, "bigquery", 12, "docker ps\n", steps=[bigquery])
    assert [b.kind for b in offline_blockers(task)] == ["docker", "account"]
    assert str(offline_blockers(task)[1]) == "needs a cloud account (setup step bigquery_init)"


def test_shell_commands_split_where_the_shell_does():
    text = 'a; b && c | d\nx="$(e "f)")" # g\ncat <<-END\n  h\n  END\ni `j`\n(k)\n'
    assert [c for _, c in shell_commands(text)] == ["a", "b", "c", "d", 'x="', 'e "f)"', '"', "cat <<-END", "i", "j",
                                                    "k"]
    assert [n for n, c in shell_commands(text) if c in ("a", "i", "k")] == [1, 6, 7]


# --------------------------------------------------------------------------- the development split
DEV = os.environ.get("DESKTOP_ENV_PUBLIC_SUITE_DEV")
DEV_INDEX = Path(DEV or "/nonexistent") / "evaluation_examples" / "test_dev.json"


@pytest.fixture(scope="module")
def dev_report():
    if not DEV:
        pytest.skip("DESKTOP_ENV_PUBLIC_SUITE_DEV is not set: export it as the folder of the public suite's "
                    "development split (holding evaluation_examples/test_dev.json) to run this test")
    if not DEV_INDEX.is_file():
        pytest.skip(f"DESKTOP_ENV_PUBLIC_SUITE_DEV={DEV}: no evaluation_examples/test_dev.json there")
    from desktop_env.cli_tasks import check

    out = io.StringIO()
    status = check(DEV_INDEX, as_json=True, out=out)
    return status, json.loads(out.getvalue())


def test_the_development_split_counts(dev_report):
    status, report = dev_report
    runs = report["runs_here"]
    assert status == 1 and report["files"] == 142 and report["tasks"] == 132  # 10 superset tasks lack a file
    assert {e["message"].split("'")[1] for e in report["errors"]} == {
        "evaluation_examples/examples/superset/all_databases.sql"}
    assert (runs["runnable"], runs["by_image"]) == (88, {"spider2v": 50, "any": 38})
    # kept in reference_solutions: ten dagster tasks whose code fetches Hacker News, NASA's API, the iris CSV
    # or the movie CSVs, and the Airflow migration pair (no Airflow in the image's dagster environment)
    assert (runs["not_runnable"], runs["by_reason"]) == (44, {"astro": 22, "docker": 10, "internet": 10,
                                                               "software": 2})
    by_app: dict[str, set] = {}
    for row in runs["tasks"]:
        by_app.setdefault(row["app"], set()).add(row["answer"].split(" (")[0])
    assert by_app == {"excel": {"runs on any image"}, "dbt": {"runs on image spider2v"},
                      "dagster": {"runs on image spider2v", "not runnable here: fetches from the internet",
                                  "not runnable here: needs software the image lacks"},
                      "jupyter": {"runs on image spider2v"},
                      "airflow": {"not runnable here: uses the Astro CLI"}, "superset": {"not runnable here: uses Docker"}}


@pytest.mark.parametrize("app,task_id,answer", [
    # astro dev start is the only astro command (its init.sh has no astro dev init)
    ("airflow", "a02a58d9-f52f-586e-b121-6f49f934b90e",
     "not runnable here: uses the Astro CLI (init.sh line 41: astro dev start --no-browser > start_server.log 2> "
     "start_server.log)"),
    # a wget of raw.githubusercontent.com in a comment (line 20) does not count; docker compose does
    ("superset", "7a485891-146b-481a-9dfc-42b2c8596b7a",
     "not runnable here: uses Docker (init.sh line 27: docker compose -f docker-compose-image-tag.yml up --detach)"),
    # docker only in the header comment; a launch step runs bash -c "... jupyter lab"
    ("jupyter", "7c0dee43-ab20-4fad-8310-f3bafc25c034", "runs on image spider2v"),
    # the UI at http://localhost:3000 that dagster_webui_init opens is the VM's own: it does not count
    ("dagster", "1c3aaad0-5081-4dde-8139-e3be3d0a9bb4", "runs on image spider2v"),
    ("excel", "0326d92d-d218-48a8-9ca1-981cd6d064c7", "runs on any image"),
])
def test_development_split_tasks(dev_report, app, task_id, answer):
    rows = {(r["app"], r["id"]): r for r in dev_report[1]["runs_here"]["tasks"]}
    assert rows[(app, task_id)]["answer"] == answer
    task = load_task(DEV_INDEX.parent / "examples" / app / task_id / f"{task_id}.json")
    assert runs_here_text(image_needed(task), offline_blockers(task)) == answer
