"""The chapter's registry covers every algorithm and every environment of the library."""

from __future__ import annotations

import inspect

from causalbandits_lib.core.protocols import Environment, Policy
from causalbandits_lib.fairx import algorithms, model, registry, yahoo


def _classes(module, protocol):
    return {
        obj
        for name in module.__all__
        if inspect.isclass(obj := getattr(module, name)) and name != "RidgeState" and issubclass(obj, protocol)
    }


def test_every_policy_and_environment_class_is_registered():
    policies = {type(e.make_policy()) for e in registry.ENTRIES}
    environments = {type(e.make_env()) for e in registry.ENTRIES}
    missing = (_classes(algorithms, Policy) - policies) | (
        (_classes(model, Environment) | _classes(yahoo, Environment)) - environments
    )
    assert not missing, f"classes without a registry entry: {sorted(c.__name__ for c in missing)}"
    assert len(_classes(algorithms, Policy)) == 12 and len(_classes(model, Environment)) == 5


def test_entry_names_are_unique_and_every_entry_has_a_merit():
    names = [e.name for e in registry.ENTRIES]
    assert len(names) == len(set(names))
    assert set(registry.MERITS) == set(names)


def test_the_benchmark_cases_keep_their_settings():
    bench = {e.name: e for e in registry.ENTRIES if e.bench_T is not None}
    assert {n: (e.bench_T, e.bench_runs, e.target_ratio, e.seed) for n, e in bench.items()} == {
        "fairx.fairx_ts_yeast_means": (2000, (1, 10, 100), 5.0, 0),
        "fairx.fairx_ucb_pgd_yeast_means": (1000, (1, 10, 100), None, 0),
        "fairx.ucb_yeast_means": (2000, (1, 10, 100), None, 0),
        "fairx.fairx_lints_gaussian_contexts": (500, (1, 10, 100), None, 0),
    }
