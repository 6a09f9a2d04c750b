"""Notebook metrics on real .ipynb files written with nbformat."""
from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from desktop_env.evaluators.metrics.notebook import (
    are_jupyter_outputs_cleared, compare_ipynb_files, compare_notebook_cells, compare_notebook_outputs,
    is_jupyter_cell_executed,
)


def nb(tmp_path, name, cells, **meta):
    book = new_notebook(cells=cells, metadata=meta)
    path = tmp_path / name
    nbformat.write(book, str(path))
    return str(path)


def code(src, out=None, count=None, image=None):
    outputs = []
    if out is not None:
        outputs.append(new_output("stream", name="stdout", text=out))
    if image is not None:
        outputs.append(new_output("display_data", data={"image/png": image, "text/plain": "<Figure>"}))
    return new_code_cell(src, outputs=outputs, execution_count=count)


def test_compare_notebook_outputs(tmp_path):
    gold = nb(tmp_path, "gold.ipynb", [new_markdown_cell("# T"), code("print(1+1)", "2\n", 1)])
    same = nb(tmp_path, "same.ipynb", [new_markdown_cell("# Title"), code("print(2)", "2\n", 7)])
    wrong = nb(tmp_path, "wrong.ipynb", [new_markdown_cell("# T"), code("print(1+2)", "3\n", 1)])
    unrun = nb(tmp_path, "unrun.ipynb", [new_markdown_cell("# T"), code("print(1+1)")])
    assert compare_notebook_outputs(same, gold) == 1.0  # execution counts and sources do not matter
    assert compare_notebook_outputs(wrong, gold) == 0.0
    assert compare_notebook_outputs(unrun, gold) == 0.0
    assert compare_notebook_outputs(str(tmp_path / "none.ipynb"), gold) == 0.0


def test_stream_chunks_of_one_print_compare_as_one_text(tmp_path):
    """A kernel may deliver one print as two stream messages (seen in CI); Jupyter shows one text."""
    split = new_code_cell("print('best region:', r)", execution_count=1, outputs=[
        new_output("stream", name="stdout", text="best region:"), new_output("stream", name="stdout", text=" South\n")])
    a = nb(tmp_path, "a.ipynb", [split])
    gold = nb(tmp_path, "gold.ipynb", [code("print('best region:', r)", "best region: South\n", 1)])
    other = nb(tmp_path, "other.ipynb", [code("print('best region:', r)", "best region: North\n", 1)])
    stderr = new_code_cell("x", execution_count=1, outputs=[
        new_output("stream", name="stdout", text="best region:"), new_output("stream", name="stderr", text=" South\n")])
    mixed = nb(tmp_path, "mixed.ipynb", [stderr])
    assert compare_notebook_outputs(a, gold) == 1.0
    assert compare_notebook_outputs(a, other) == 0.0
    assert compare_notebook_outputs(mixed, gold) == 0.0   # stdout and stderr are not merged
    assert compare_notebook_outputs(mixed, gold, ignore_stderr=False) == 0.0


def test_compare_notebook_outputs_ignore_images(tmp_path):
    """Images are ignored by default; with ignore_images false, bytes that are no image compare as they are."""
    a = nb(tmp_path, "a.ipynb", [code("plot()", count=1, image="aGVsbG8=")])
    b = nb(tmp_path, "b.ipynb", [code("plot()", count=1, image="d29ybGQ=")])
    assert compare_notebook_outputs(a, b) == 1.0
    assert compare_notebook_outputs(a, b, ignore_images=False) == 0.0
    assert compare_notebook_outputs(a, a, ignore_images=False) == 1.0


def test_compare_notebook_cells(tmp_path):
    gold = nb(tmp_path, "gold.ipynb", [new_markdown_cell("# T"), code("x = 1")])
    same = nb(tmp_path, "same.ipynb", [new_markdown_cell("# T"), code("x = 1", "", 3)])
    other = nb(tmp_path, "other.ipynb", [new_markdown_cell("# T"), code("x = 2")])
    fewer = nb(tmp_path, "fewer.ipynb", [new_markdown_cell("# T")])
    assert compare_notebook_cells(same, gold) == 1.0
    assert compare_notebook_cells(other, gold) == 0.0
    assert compare_notebook_cells(fewer, gold) == 0.0


def test_compare_ipynb_files(tmp_path):
    gold = nb(tmp_path, "gold.ipynb", [code("x = 1", "ok\n", 1)], kernelspec={"name": "python3", "display_name": "Python 3"})
    same_but_meta = nb(tmp_path, "meta.ipynb", [code("x = 1", "ok\n", 1)], kernelspec={"name": "other", "display_name": "Other"})
    other = nb(tmp_path, "other.ipynb", [code("x = 1", "ko\n", 1)])
    assert compare_ipynb_files(same_but_meta, gold) == 1.0
    assert compare_ipynb_files(other, gold) == 0.0


def test_is_jupyter_cell_executed(tmp_path):
    done = nb(tmp_path, "done.ipynb", [new_markdown_cell("x"), code("a", "1", 1), code("b", None, 2)])
    partial = nb(tmp_path, "partial.ipynb", [new_markdown_cell("x"), code("a", "1", 1), code("b")])
    assert is_jupyter_cell_executed(done, {"expected": []}) == 1.0
    assert is_jupyter_cell_executed(partial, {"expected": []}) == 0.0
    assert is_jupyter_cell_executed(partial, {"expected": [2]}) == 1.0


def test_are_jupyter_outputs_cleared(tmp_path):
    cleared = nb(tmp_path, "cleared.ipynb", [code("a"), code("b")])
    dirty = nb(tmp_path, "dirty.ipynb", [code("a"), code("b", "out", 3)])
    assert are_jupyter_outputs_cleared(cleared, {"expected": []}) == 1.0
    assert are_jupyter_outputs_cleared(cleared) == 1.0
    assert are_jupyter_outputs_cleared(dirty, {"expected": []}) == 0.0
    assert are_jupyter_outputs_cleared(str(tmp_path / "none.ipynb")) == 0.0
