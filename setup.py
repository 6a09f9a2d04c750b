"""The package is declared in pyproject.toml; this file stays for tools that still call setup.py."""
from setuptools import setup

setup()
