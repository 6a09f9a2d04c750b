"""The architecture holds (docs/architecture.md): the import contracts of .importlinter, no duplicated
code in desktop_env/ (pylint's duplicate-code check, 6 lines or more) and no module over 600 lines."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 600


def test_import_contracts_are_kept():
    out = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                          "sys.exit(lint_imports(config_filename='.importlinter', no_cache=True, no_logo=True))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert "5 kept, 0 broken" in out.stdout


def test_the_layers_contract_places_every_package_and_module():
    """A new package or top-level module of desktop_env must be given its layer (so the contracts cover the
    whole tree, not only the parts someone remembered)."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    placed = {name.strip() for line in config["importlinter:contract:layers"]["layers"].splitlines()
              for name in line.split("|") if name.strip()}
    package = ROOT / "desktop_env"
    present = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    present |= {p.parent.name for p in package.glob("*/__init__.py")}
    assert present - placed == set(), f"give these a layer in .importlinter: {sorted(present - placed)}"


def test_no_duplicated_code_in_the_library():
    out = subprocess.run([sys.executable, "-m", "pylint", "--disable=all", "--enable=duplicate-code",
                          "--min-similarity-lines=6", "--score=n", "desktop_env"],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in [*(ROOT / "desktop_env").rglob("*.py"), *(ROOT / "vm_server").rglob("*.py")]
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concept): {long}"
