"""compare_notebook_outputs on real notebooks: outputs written as Jupyter writes them (pandas reprs,
matplotlib PNGs, Python warnings and tracebacks), saved with nbformat, in both directions."""
from __future__ import annotations

import base64
import io
import warnings

import matplotlib
import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from desktop_env.evaluators.metrics.notebook import compare_notebook_outputs, normalise_html  # noqa: E402
from desktop_env.evaluators.metrics.utils import MetricError  # noqa: E402

SALES = pd.DataFrame({"region": ["East", "North", "South", "West"],
                      "sales": [199038.90, 198513.32, 216735.94, 173263.14]})


def save(tmp_path, name, *cells):
    path = tmp_path / name
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Sales summary"), *cells]), str(path))
    return path


def stdout(text):
    return new_output("stream", name="stdout", text=text)


def stderr_warning():
    """A FutureWarning as the kernel prints it on stderr."""
    text = warnings.formatwarning("The default of observed=False is deprecated", FutureWarning,
                                  "/tmp/ipykernel_4242/1234567.py", 3, "df.groupby('region').sum()")
    return new_output("stream", name="stderr", text=text)


def frame_result(df, count=2):
    """``df`` as the last expression of a cell: text/plain and text/html, as Jupyter stores it."""
    return new_output("execute_result", data={"text/plain": repr(df), "text/html": df._repr_html_()},
                      execution_count=count)


def styled_result(df, count=3):
    """A pandas Styler: its text/plain is a default repr with an address, its html carries a random uuid."""
    styler = df.style.format({"sales": "{:,.2f}"})
    return new_output("execute_result", data={"text/plain": repr(styler), "text/html": styler.to_html()},
                      execution_count=count)


def figure(values):
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.bar(SALES.region, values)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    plt.close(fig)
    return new_output("display_data", data={"image/png": base64.b64encode(buf.getvalue()).decode(),
                                            "text/plain": "<Figure size 640x480 with 1 Axes>"})


def error(ename, evalue, where):
    return new_output("error", ename=ename, evalue=evalue, traceback=[
        "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
        f"\x1b[0;31m{ename}\x1b[0m  Traceback (most recent call last)",
        f"File \x1b[0;32m{where}:3\x1b[0m", f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])


def cell(*outputs, count=1, source="..."):
    return new_code_cell(source, outputs=list(outputs), execution_count=count)


def gold_cells():
    return [cell(stdout("48 rows\n"), count=1),
            cell(frame_result(SALES), count=2),
            cell(stdout("best region: South\n"), figure(SALES.sales), count=3)]


def test_rerun_with_an_extra_stderr_warning_passes(tmp_path):
    gold = save(tmp_path, "gold.ipynb", *gold_cells())
    rerun = save(tmp_path, "rerun.ipynb",
                 cell(stdout("48 rows\n"), count=5),
                 cell(stderr_warning(), frame_result(SALES), count=6),
                 cell(stdout("best region:"), stderr_warning(), stdout(" South\n"), figure(SALES.sales), count=7))
    assert compare_notebook_outputs(rerun, gold) == 1.0
    assert compare_notebook_outputs(rerun, gold, ignore_stderr=False) == 0.0  # stricter on request


def test_changed_printed_number_fails(tmp_path):
    gold = save(tmp_path, "gold.ipynb", *gold_cells())
    cells = gold_cells()
    cells[0] = cell(stdout("47 rows\n"))
    assert compare_notebook_outputs(save(tmp_path, "a.ipynb", *cells), gold) == 0.0
    changed = SALES.copy()
    changed.loc[2, "sales"] = 216735.95
    cells = gold_cells()
    cells[1] = cell(frame_result(changed), count=2)
    assert compare_notebook_outputs(save(tmp_path, "b.ipynb", *cells), gold) == 0.0


def test_missing_cell_output_fails(tmp_path):
    gold = save(tmp_path, "gold.ipynb", *gold_cells())
    for i in range(3):
        cells = gold_cells()
        cells[i] = cell(count=i + 1)
        assert compare_notebook_outputs(save(tmp_path, f"missing{i}.ipynb", *cells), gold) == 0.0, i
    cells = gold_cells()
    cells[2] = cell(figure(SALES.sales), count=3)  # the print is gone, the plot is there
    assert compare_notebook_outputs(save(tmp_path, "no_print.ipynb", *cells), gold) == 0.0
    fewer = save(tmp_path, "fewer.ipynb", *gold_cells()[:2])
    assert compare_notebook_outputs(fewer, gold) == 0.0


def test_html_differing_only_in_volatile_attributes_passes(tmp_path):
    """Two renders of one Styler differ in uuid-based ids and in the address of their text/plain."""
    gold = save(tmp_path, "gold.ipynb", cell(styled_result(SALES)))
    rerun = save(tmp_path, "rerun.ipynb", cell(styled_result(SALES.copy())))
    assert nbformat.read(str(gold), 4).cells[1].outputs[0].data != nbformat.read(str(rerun), 4).cells[1].outputs[0].data
    assert compare_notebook_outputs(rerun, gold) == 1.0
    assert compare_notebook_outputs(rerun, gold, mime_types=["text/html"]) == 1.0
    changed = SALES.copy()
    changed.loc[0, "sales"] = 1.0
    # the text/plain says nothing ("<...Styler at 0x...>"), so the html decides
    assert compare_notebook_outputs(save(tmp_path, "changed.ipynb", cell(styled_result(changed))), gold) == 0.0


def test_dataframe_html_from_another_pandas_passes_and_its_content_counts(tmp_path):
    html = SALES._repr_html_()
    other_pandas = (html.replace('<table border="1" class="dataframe">', '<table class="dataframe table" id="T_x1">')
                    .replace("vertical-align: top;", "vertical-align: bottom;"))
    assert other_pandas != html
    assert normalise_html(other_pandas) == normalise_html(html)

    def html_only(h):
        return cell(new_output("display_data", data={"text/html": h}))
    gold = save(tmp_path, "gold.ipynb", html_only(html))
    assert compare_notebook_outputs(save(tmp_path, "other.ipynb", html_only(other_pandas)), gold) == 1.0
    assert compare_notebook_outputs(save(tmp_path, "value.ipynb", html_only(html.replace("South", "Sud"))), gold) == 0.0


def test_text_plain_is_compared_when_both_have_it(tmp_path):
    gold = save(tmp_path, "gold.ipynb", cell(frame_result(SALES)))
    plain_only = save(tmp_path, "plain.ipynb", cell(new_output("execute_result", data={"text/plain": repr(SALES)},
                                                               execution_count=1)))
    assert compare_notebook_outputs(plain_only, gold) == 1.0
    assert compare_notebook_outputs(plain_only, gold, mime_types=["text/plain", "text/html"]) == 0.0
    shown = save(tmp_path, "shown.ipynb", cell(new_output("display_data", data={"text/plain": repr(SALES)})))
    assert compare_notebook_outputs(shown, gold) == 1.0  # display(df) shows what df does
    printed = save(tmp_path, "printed.ipynb", cell(stdout(repr(SALES) + "\n")))
    assert compare_notebook_outputs(printed, gold) == 0.0  # a print is not a result


def test_memory_addresses_in_reprs_are_ignored(tmp_path):
    def axes(address):
        return cell(new_output("execute_result", execution_count=1,
                               data={"text/plain": f"<matplotlib.axes._subplots.AxesSubplot at {address}>"}))
    gold = save(tmp_path, "gold.ipynb", axes("0x7f3a2c1b9e50"))
    assert compare_notebook_outputs(save(tmp_path, "a.ipynb", axes("0x7fd01e2a4c10")), gold) == 1.0
    other = save(tmp_path, "b.ipynb", cell(new_output("execute_result", execution_count=1,
                                                      data={"text/plain": "<Axes: title={'center': 'x'}>"})))
    assert compare_notebook_outputs(other, gold) == 0.0


def test_images_ignored_by_default_compared_on_request(tmp_path):
    gold = save(tmp_path, "gold.ipynb", cell(figure(SALES.sales)))
    redrawn = save(tmp_path, "redrawn.ipynb", cell(figure(SALES.sales.copy())))
    values = SALES.sales.copy()
    values[1] *= 1.1
    other_plot = save(tmp_path, "other.ipynb", cell(figure(values)))
    assert compare_notebook_outputs(other_plot, gold) == 1.0
    assert compare_notebook_outputs(redrawn, gold, ignore_images=False) == 1.0
    assert compare_notebook_outputs(other_plot, gold, ignore_images=False) == 0.0
    no_plot = save(tmp_path, "no_plot.ipynb", cell(new_output("display_data",
                                                              data={"text/plain": "<Figure size 640x480 with 1 Axes>"})))
    assert compare_notebook_outputs(no_plot, gold) == 1.0
    assert compare_notebook_outputs(no_plot, gold, ignore_images=False) == 0.0


def test_errors_count_but_tracebacks_do_not(tmp_path):
    gold = save(tmp_path, "gold.ipynb", *gold_cells())
    cells = gold_cells()
    cells[2] = cell(error("KeyError", "'regoin'", "/tmp/ipykernel_1/1.py"), count=3)
    assert compare_notebook_outputs(save(tmp_path, "err.ipynb", *cells), gold) == 0.0
    cells = gold_cells()
    cells[2] = cell(stdout("best region: South\n"), figure(SALES.sales), error("KeyError", "'x'", "/tmp/a.py"),
                    count=3)
    assert compare_notebook_outputs(save(tmp_path, "extra_err.ipynb", *cells), gold) == 0.0
    # a gold that ends in an error (e.g. a task about a failing cell): another traceback of the same error passes
    failing = save(tmp_path, "failing.ipynb", cell(error("KeyError", "'regoin'", "/tmp/ipykernel_1/1.py")))
    same_error = save(tmp_path, "same_error.ipynb", cell(error("KeyError", "'regoin'", "/tmp/ipykernel_99/7.py")))
    other_error = save(tmp_path, "other_error.ipynb", cell(error("ValueError", "bad", "/tmp/ipykernel_99/7.py")))
    fixed = save(tmp_path, "fixed.ipynb", cell(stdout("ok\n")))
    assert compare_notebook_outputs(same_error, failing) == 1.0
    assert compare_notebook_outputs(other_error, failing) == 0.0
    assert compare_notebook_outputs(fixed, failing) == 0.0


def test_pip_chatter_of_a_rerun_is_ignored(tmp_path):
    gold = save(tmp_path, "gold.ipynb", cell(stdout("Collecting tabulate\n  Downloading tabulate-0.9.0-py3-none-any.whl"
                                                    " (35 kB)\nInstalling collected packages: tabulate\n"
                                                    "Successfully installed tabulate-0.9.0\n")),
                *gold_cells())
    rerun = save(tmp_path, "rerun.ipynb", cell(stdout("Requirement already satisfied: tabulate in "
                                                      "/opt/conda/lib/python3.11/site-packages (0.9.0)\n")),
                 *gold_cells())
    assert compare_notebook_outputs(rerun, gold) == 1.0
    for rows, score in (("48 rows", 1.0), ("49 rows", 0.0)):  # only the chatter is dropped
        cells = gold_cells()
        cells[0] = cell(stdout(f"Requirement already satisfied: tabulate in /opt/conda\n{rows}\n"))
        assert compare_notebook_outputs(save(tmp_path, f"{rows}.ipynb", cell(), *cells), gold) == score


@pytest.mark.parametrize("bad", ["text/plain", [1], {"text/plain": True}])
def test_mime_types_must_be_a_list_of_strings(tmp_path, bad):
    gold = save(tmp_path, "gold.ipynb", *gold_cells())
    with pytest.raises(MetricError, match="mime_types"):
        compare_notebook_outputs(gold, gold, mime_types=bad)
