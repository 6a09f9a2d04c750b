"""The task generators: every generated task, its data files and the index entries naming it.

Regenerate everything from the repository root with::

    python3 -m evaluation_examples.generators            # every module below, in this order
    python3 -m evaluation_examples.generators dagster    # only the named modules

Rerunning writes byte-identical files (xlsx files are rewritten only when their cells
change) and adds missing ids to the index files (``test_*.json``) without moving the others,
so a run on the committed tree changes nothing: commit what a change of a generator changes.

Generator modules, named by what they write (``GENERATORS``; each has a ``main()``):

- ``base_image``: data files of the hand-written base-image tasks and their verbose twins;
- ``postgresql``, ``mariadb``, ``dbt``, ``dagster``, ``airflow``, ``duckdb``, ``geany``,
  ``jupyter``, ``sqlite`` (the ``sqlite3`` app), ``terminal``, ``calc``, ``chromium``,
  ``superset``: the data-image task pairs of each app (``test_data.json``);
- ``accounts``: the BigQuery and Snowflake tasks (``test_account.json``);
- ``mousepad``, ``downloads``, ``file_manager``: base-image GUI task pairs (``test_gui.json``),
  solved with GUI steps that find their targets in the accessibility tree (Mousepad, Thunar)
  or a page's DOM (a Chromium download); the download's twin is in ``test_smoke.json``;
- ``writer``, ``impress``, ``gimp``, ``vlc``, ``vscode``, ``thunderbird``: LibreOffice Writer and
  Impress, GIMP, VLC, editor (code-server as ``code``) and Thunderbird GUI task pairs on the
  ``office`` image (``test_office.json``).

Shared helpers: ``common`` (guest commands, the ``eval.sh`` head, writing pairs of tasks and
updating indexes; it describes a pair's keys), ``datasets`` (synthetic data drawn from fixed
seeds, and the image's sample data), ``workbooks`` (saving xlsx files) and ``office_files`` (saving
docx and pptx files with fixed dates).

Old names: until the generators were grouped by app, the data-image pairs were written by
``data_batch1.py`` ... ``data_batch6.py`` (one script per batch), the base-image ones by
``smoke_base.py`` and ``base_counterparts.py``, the account ones by ``account_tasks.py``.
A data-image task's id is uuid5 of its batch's name, its pair's name and its guidance, so
each pair keeps its batch's name as ``id_seed``; and generated files still name those
scripts in comments (``eval.sh`` heads, SQL files): that is data, left as it is so that
regenerating leaves the committed files byte-identical.
"""
from __future__ import annotations

import importlib

#: Every generator module, in the order a full run writes them.
GENERATORS = ("base_image", "postgresql", "mariadb", "dbt", "dagster", "airflow", "duckdb", "geany", "jupyter",
              "sqlite", "terminal", "calc", "chromium", "superset", "accounts", "mousepad", "downloads",
              "file_manager", "writer", "impress", "gimp", "vlc", "vscode", "thunderbird")

#: The package's modules that generate nothing themselves.
HELPERS = ("common", "datasets", "workbooks", "office_files")


def run(names: tuple[str, ...] | list[str] = GENERATORS) -> None:
    """Run the ``main()`` of the generator modules ``names``, in the order of ``GENERATORS``.

    Raises:
        ValueError: a name is not one of ``GENERATORS``.
    """
    unknown = sorted(set(names) - set(GENERATORS))
    if unknown:
        raise ValueError(f"no generator module {', '.join(unknown)} (choose from {', '.join(GENERATORS)})")
    for name in (n for n in GENERATORS if n in names):
        print(f"== {name}")
        importlib.import_module(f".{name}", __name__).main()
