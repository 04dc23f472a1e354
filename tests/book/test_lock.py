"""The pins: requirements.lock, environment.yml and pyproject.toml agree."""

from __future__ import annotations

import tomllib

import yaml


def lock_pins(root):
    pins = {}
    for line in (root / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_environment_yml_has_the_same_pins_as_the_lock(root):
    env = yaml.safe_load((root / "environment.yml").read_text())
    pip_section = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    env_pins = {}
    for line in pip_section:
        name, version = line.split("==")
        env_pins[name.lower().replace("_", "-")] = version
    assert env_pins == lock_pins(root)
    lock_python = (root / "requirements.lock").read_text().split("resolved on Python ")[1].split(")")[0]
    assert f"python={lock_python}" in env["dependencies"]


def test_required_toolchain_pins(root):
    pins = lock_pins(root)
    assert pins["jupyter-book"] == "1.0.4.post1"
    assert pins["sphinx"].startswith("7.")
    major, minor = (int(x) for x in pins["pgmpy"].split(".")[:2])
    assert (1, 1) <= (major, minor) < (1, 3)
    assert pins["cvxpy"].startswith("1.9.")
    assert pins["numpy"].startswith("2.")
    for pkg in (
        "myst-nb",
        "jupytext",
        "papermill",
        "nbval",
        "pytest",
        "hypothesis",
        "scipy",
        "networkx",
        "matplotlib",
        "sphinxcontrib-bibtex",
        "clarabel",
    ):
        assert pkg in pins, pkg
    assert "torch" not in pins  # pgmpy 1.1 needs no torch


def test_every_direct_dependency_is_locked(root):
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    pins = lock_pins(root)
    deps = project["dependencies"] + [d for group in project["optional-dependencies"].values() for d in group]
    for dep in deps:
        name = dep.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower()
        assert name in pins, f"{name} is a dependency but not in requirements.lock"


def test_no_intersphinx_and_cache_execution(root):
    config = yaml.safe_load((root / "_config.yml").read_text())
    assert config["execute"]["execute_notebooks"] == "cache"
    assert config["execute"]["timeout"] > 0
    assert config["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    assert "intersphinx_mapping" not in str(config)
