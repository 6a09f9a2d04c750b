"""`desktop-env report` end to end on the fabricated results."""
import subprocess
import sys


def _run(*args):
    return subprocess.run([sys.executable, "-m", "desktop_env", "report", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_report_command_writes_the_report_and_prints_the_overall_table(fake_results, fake_suite, tmp_path):
    legacy = fake_results / "pyautogui" / "screenshot" / "legacy"
    agent = fake_results / "pyautogui" / "screenshot" / "agentA"
    out = tmp_path / "rep"
    proc = _run(agent, "--compare", legacy, "--out", out, "--tasks", fake_suite)
    assert proc.returncode == 0, proc.stderr
    assert "agentA" in proc.stdout and "legacy" in proc.stdout
    assert (out / "index.html").is_file() and (out / "csv" / "by_category.csv").is_file()
    assert "file://" in proc.stdout


def test_default_output_goes_inside_the_results_and_is_not_read_back(fake_results, tmp_path):
    import shutil

    copy = tmp_path / "res"
    shutil.copytree(fake_results / "pyautogui" / "screenshot" / "legacy", copy / "legacy")
    for _ in range(2):  # the second run must not take the first report for results
        proc = _run(copy)
        assert proc.returncode == 0, proc.stderr
    assert (copy / "report" / "index.html").is_file()
    assert (copy / "report" / "csv" / "tasks.csv").read_text().count("\n") == 1 + 3


def test_missing_folder_is_a_clear_error(tmp_path):
    proc = _run(tmp_path / "nothing")
    assert proc.returncode == 1
    assert "does not exist" in proc.stderr and "--result_dir" in proc.stderr
