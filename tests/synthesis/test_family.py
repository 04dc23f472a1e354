"""The random family of recommender SCMs (:mod:`causalbandits_lib.synthesis.family`): valid models on
1,000 seeds, parameters within the documented ranges, reproducible from the seed, and the exact
means and discrepancies of its members (whose engagement parameters vary, unlike notebook 2's
instances) equal to pgmpy's."""

from __future__ import annotations

import re

import numpy as np
import pytest

from causalbandits_lib.core.streams import notebook_seed_sequence
from causalbandits_lib.synthesis import family as F
from causalbandits_lib.synthesis import model as M

SEEDS = range(1000)


def within(x, key) -> bool:
    lo, hi = F.RANGES[key]
    return bool(np.all((lo <= np.asarray(x)) & (np.asarray(x) <= hi)))


def test_the_docstring_table_states_the_ranges():
    """Every row ``name ... U(lo, hi)`` of the module's table is :data:`RANGES` (and every range has
    its row), so the documentation cannot drift from the generator."""
    lines = F.__doc__.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("=====")]
    assert len(rules) == 3  # top, below the header, bottom
    rows, name = {}, None
    for line in lines[rules[1] + 1 : rules[2]]:
        if line and not line[0].isspace():  # a row starts with its name; indented lines continue it
            name = line.split()[0]
            rows[name] = ""
        if name:
            rows[name] += line
    rows = {k: re.search(r"U\((-?[\d.]+, -?[\d.]+)\)", v).group(1) for k, v in rows.items()}
    assert set(rows) == set(F.RANGES) | {"w_a"}
    for key, (lo, hi) in F.RANGES.items():
        assert rows[key] == f"{lo}, {hi}", key
    assert rows["w_a"] == f"-{F.W_A_NOISE}, {F.W_A_NOISE}"


def test_a_thousand_seeds_give_valid_models_within_the_ranges():
    for seed in SEEDS:
        (inst,) = F.family(seed, 1)
        for arr in (inst.means, inst.discrepancy, inst.p_engage):
            assert np.all(np.isfinite(arr))
        assert np.all((0 < inst.means) & (inst.means < 1)) and np.all((0 < inst.p_engage) & (inst.p_engage < 1))
        assert np.all((0 <= inst.discrepancy) & (inst.discrepancy < 1))
        lam, s0, s1 = F.log_bias(inst)
        cells = M.log_cell_probabilities(inst, lam, s0, s1)
        assert np.all(np.isfinite(cells)) and np.all(cells > 0) and cells.sum() < 1
        # parameters within the table's ranges
        a = inst.extra["a_effect"]
        assert within(a, "a_effect") and within(inst.b, "b") and within(inst.w_u, "w_u") and within(inst.e, "e")
        assert within(inst.w_e, "w_e") and within(inst.eta, "eta") and within(inst.logging, "logging")
        assert within(lam, "lam") and within(s0, "s0") and within(s1, "s1")
        # |w^A_k| is a_effect x (0, 1/3, 2/3, 1), each within the noise's half-width
        assert np.all(np.abs(np.sort(np.abs(inst.w_a)) - a * np.linspace(0, 1, 4)) <= F.W_A_NOISE)


def test_the_draws_fill_their_ranges():
    """Not a constant or a narrower draw: over 1,000 seeds each scalar parameter comes within 5% of
    both ends of its range (a uniform draw misses one end with probability about 2 x 0.95^1000)."""
    models = [F.family(seed, 1)[0] for seed in SEEDS]
    scalars = {
        "a_effect": [m.extra["a_effect"] for m in models],
        "w_e": [m.w_e for m in models],
        "eta": [m.eta for m in models],
        **{k: [m.extra[k] for m in models] for k in ("lam", "s0", "s1")},
        **{k: [getattr(m, k)[0] for m in models] for k in ("b", "w_u", "e")},
        "logging": [m.logging[0, 0] for m in models],
    }
    for key, vals in scalars.items():
        lo, hi = F.RANGES[key]
        assert min(vals) < lo + 0.05 * (hi - lo) and max(vals) > hi - 0.05 * (hi - lo), key


def test_reproducible_prefix_stable_and_seed_dependent():
    a, b, c = F.family(7, 5), F.family(7, 5), F.family(7, 3)
    for x, y in zip(a, b):
        assert np.array_equal(x.means, y.means) and x.extra == y.extra and x.name == y.name
    for x, y in zip(a, c):  # model i does not depend on how many are drawn
        assert np.array_equal(x.logging, y.logging) and x.w_e == y.w_e
    assert not np.array_equal(F.family(8, 1)[0].b, a[0].b)
    assert not np.array_equal(a[0].b, a[1].b)
    # a root seed is the notebook stream "family" of that seed; a SeedSequence given twice gives the
    # same models (the family does not spawn from it, which would advance it)
    root = notebook_seed_sequence(7, F.STREAM)
    for ms in (F.family(root, 5), F.family(root, 5)):
        assert all(np.array_equal(x.w_a, y.w_a) for x, y in zip(ms, a))
    assert [m.name for m in a] == [f"model {i}" for i in range(5)] and [m.extra["index"] for m in a] == list(range(5))
    assert F.family(7, 0) == []
    with pytest.raises(ValueError):
        F.family(7, -1)


@pytest.mark.parametrize("inst", F.family(3, 3), ids=lambda i: i.name)
def test_members_means_and_discrepancies_match_pgmpy(inst):
    scm = M.build_scm(inst, *F.log_bias(inst))
    assert np.allclose(M.pgmpy_means(scm), inst.means, rtol=0, atol=1e-12)
    cf = {a: M.pgmpy_counterfactual_means(scm, a) for a in (0, 1)}
    assert np.allclose(np.abs(cf[1] - cf[0]), inst.discrepancy, rtol=0, atol=1e-12)
    # the log the model carries: its cells are pgmpy's joint with S = 1
    q = scm.query(["I", "A", "U", "E", "Y", "S"])
    ref = np.stack([q[:, a, u, :, :, 1] for a, u in M.CONTEXTS], axis=1)
    assert np.allclose(M.log_cell_probabilities(inst, *F.log_bias(inst)), ref, rtol=0, atol=1e-14)


def test_random_instance_is_not_the_family():
    """notebooks 2 and 3's generator is untouched: its instances keep the default engagement
    parameters the family varies."""
    inst = M.instances(np.random.SeedSequence(0), 1)[0]
    assert inst.w_e == 1.5 and inst.eta == 1.0 and "a_effect" not in inst.extra
