"""The package's optional parts (pyproject.toml's extras): which modules each brings, which task entries need
one, and the command that installs it. A task whose metric needs an extra that is not installed is reported by
``desktop-env tasks check`` and left out by run.py with that command, instead of failing on an import."""
from __future__ import annotations

import importlib.util

#: The distribution's name (the import name is desktop_env; the name desktop-env is the general suite's own).
DISTRIBUTION = "desktop-env-offline"

#: Extra -> the top-level modules it installs.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "libvirt": ("libvirt",),
    "cloud": ("google.cloud.bigquery", "snowflake.connector"),
    "office": ("pypdf", "rapidfuzz", "mutagen", "skimage", "cv2"),
    "agents": ("openai", "anthropic"),
    "mcp": ("mcp",),
    "ray": ("ray",),
}

#: Extra -> the metrics that import one of its modules when they score (tests/test_extras.py recomputes this
#: from the metric modules' code and fails when it is out of date).
METRIC_EXTRAS: dict[str, frozenset[str]] = {
    "office": frozenset({
        "check_accessibility_tree", "check_contrast_increase_and_structure_sim",
        "check_file_exists_and_structure_sim", "check_image_mirror", "check_mp3_meta",
        "check_palette_and_structure_sim", "check_pdf_pages", "check_saturation_increase_and_structure_sim",
        "check_structure_sim", "check_structure_sim_resized", "check_structure_sim_with_threshold",
        "compare_docx_files", "compare_docx_files_and_ignore_new_lines", "compare_pdf_images", "compare_pdfs",
        "compare_references", "compare_videos", "compare_zip_files", "fuzzy_place_math",
    }),
}


def installed(extra: str) -> bool:
    """True when every module of ``extra`` can be imported here."""
    for module in EXTRA_MODULES[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):  # a parent package missing
            return False
    return True


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'desktop-env-offline[office]'`` (from a checkout:
    ``pip install -e '.[office]'``)."""
    return f"pip install '{DISTRIBUTION}[{extra}]' (from a checkout: pip install -e '.[{extra}]')"


def extra_for_metric(name: str) -> str | None:
    """The extra the metric ``name`` needs, or None."""
    return next((extra for extra, names in METRIC_EXTRAS.items() if name in names), None)


def missing_extras(metric_names) -> dict[str, list[str]]:
    """Extra -> the metrics of ``metric_names`` that need it, for the extras not installed here."""
    out: dict[str, list[str]] = {}
    for name in metric_names:
        extra = extra_for_metric(name)
        if extra and not installed(extra):
            out.setdefault(extra, []).append(name)
    return out


def package_hint(module: str, package: str) -> str:
    """How to install the package that provides ``module``: its extra's command when one brings it, else pip's."""
    top = module.split(".")[0]
    extra = next((e for e, mods in EXTRA_MODULES.items() if any(m.split(".")[0] == top for m in mods)), None)
    return f"the {extra} extra: {install_hint(extra)}" if extra else f"pip install {package}"
