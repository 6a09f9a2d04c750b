"""Guest wheels built on the host from sdists: a wheel of Python files is kept even when its build tags it for
the host's platform (logbook, which dbt-core 1.7 needs, always claims extensions); one with compiled code is refused."""
import pytest

from desktop_env.errors import ImageBuildError
from desktop_env.image.wheels import _build_pure_wheel

SETUP = """
from setuptools import Extension, setup
from setuptools.dist import Distribution


class AlwaysPlatform(Distribution):
    def has_ext_modules(self):
        return True


setup(name="{name}", version="1.0", packages=["{name}"], distclass=AlwaysPlatform, {ext})
"""


def make_project(tmp_path, name: str, compiled: bool):
    src = tmp_path / name
    (src / name).mkdir(parents=True)
    (src / name / "__init__.py").write_text("VALUE = 1\n")
    ext = ""
    if compiled:
        (src / "speed.c").write_text('#include <Python.h>\nstatic struct PyModuleDef m = {PyModuleDef_HEAD_INIT, '
                                     '"speed", NULL, -1, NULL};\nPyMODINIT_FUNC PyInit_speed(void) '
                                     '{ return PyModule_Create(&m); }\n')
        ext = f'ext_modules=[Extension("{name}.speed", ["speed.c"])]'
    (src / "setup.py").write_text(SETUP.format(name=name, ext=ext))
    return src


@pytest.mark.slow
def test_a_platform_tagged_wheel_of_python_files_is_kept(tmp_path):
    dest = tmp_path / "wheels"
    dest.mkdir()
    wheel = _build_pure_wheel(str(make_project(tmp_path, "platonly", compiled=False)), dest, None)
    assert wheel.name.startswith("platonly-1.0-cp") and "linux" in wheel.name  # tagged, yet only Python inside


@pytest.mark.slow
def test_a_wheel_with_compiled_code_is_refused(tmp_path):
    dest = tmp_path / "wheels"
    dest.mkdir()
    with pytest.raises(ImageBuildError, match=r"builds compiled code on the host .*speed\..*so"):
        _build_pure_wheel(str(make_project(tmp_path, "withc", compiled=True)), dest, None)
    assert not list(dest.glob("*.whl"))
