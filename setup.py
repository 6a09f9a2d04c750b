"""Packaging for desktop-env: the host library, the in-VM server sources and the CLI."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


def _requirements():
    lines = (HERE / "requirements.txt").read_text().splitlines()
    return [l.split("#")[0].strip() for l in lines if l.split("#")[0].strip() and not l.startswith("-")]


setup(
    name="desktop-env",
    version="0.1.0",
    description="Offline-built desktop VMs under QEMU/KVM for evaluating computer-use agents",
    long_description=(HERE / "README.md").read_text() if (HERE / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    license_files=["LICENSE"],
    python_requires=">=3.11",
    classifiers=["License :: OSI Approved :: Apache Software License", "Operating System :: POSIX :: Linux",
                 "Programming Language :: Python :: 3.11"],
    packages=find_packages(include=["desktop_env", "desktop_env.*", "vm_server", "vm_server.*"]),
    include_package_data=True,
    package_data={
        "desktop_env.image": ["profiles/*", "profiles/**/*"],
        "vm_server": ["*", "**/*"],
    },
    install_requires=_requirements(),
    entry_points={"console_scripts": ["desktop-env=desktop_env.cli:main"]},
)
