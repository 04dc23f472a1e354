"""The Email Campaign model (App. E.1) against independent routes: the paper's formulas enumerated
by hand, pgmpy inference, and the closed form of its discrepancy."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.fucb.instances.email_campaign import (
    ARM_NODES,
    CONTEXT_NODES,
    SENSITIVE,
    TABLE5,
    email_campaign_env,
    email_campaign_model,
)


@pytest.fixture(scope="module")
def env():
    return email_campaign_env()


def hand_mean(x, a, i3_values=2):
    """E[R | do(a), x] enumerated from the appendix's formulas, typed here independently."""
    a1, a2, a3 = a
    p_i4 = TABLE5[4 * x[0] + 2 * x[1] + x[2]]
    total = 0.0
    for i4, p4 in zip((1, 2, 3, 4), p_i4):
        for i2 in (1, 2):
            q2 = (a1 + a2 + i4) / 12
            p2 = q2 if i2 == 1 else 1 - q2
            for i1 in (1, 2):
                q1 = (a1 + a2 + i2) / 10
                p1 = q1 if i1 == 1 else 1 - q1
                q3 = 0.4 if i2 == 1 else 0.6
                i3_dist = (
                    [(1, q3), (2, 1 - q3)] if i3_values == 2 else [(1, q3)] + [(v, (1 - q3) / 3) for v in (2, 3, 4)]
                )
                for i3, p3 in i3_dist:
                    total += p4 * p2 * p1 * p3 * (i1 + i2 + i3 + a3) / 12
    return total


def test_tables_are_normalised_and_errors_name_the_parameter():
    for k in (2, 4):
        m = email_campaign_model(i3_values=k)
        for node, mech in m.mechanisms.items():
            np.testing.assert_allclose(mech.table.sum(axis=-1), 1.0, atol=1e-12, err_msg=node)
    with pytest.raises(ValueError, match="i3_values=3"):
        email_campaign_model(i3_values=3)
    with pytest.raises(ValueError, match="context_marginals"):
        email_campaign_model(context_marginals=(0.5, 1.5, 0.5))
    with pytest.raises(ValueError, match="sigma"):
        email_campaign_env(sigma=-1.0)


@pytest.mark.parametrize("i3_values", [2, 4])
def test_exact_means_match_hand_enumeration(i3_values):
    env = email_campaign_env(i3_values=i3_values)
    for c, x in enumerate(env.context_codes):
        for a, codes in enumerate(env.arm_codes):
            assert env.means[c, a] == pytest.approx(
                hand_mean(tuple(x), tuple(int(v) + 1 for v in codes), i3_values), abs=1e-13
            )


def test_exact_means_and_discrepancies_match_pgmpy(env):
    m = env.model
    for c, x in enumerate(env.context_codes):
        ev = {n: int(v) for n, v in zip(CONTEXT_NODES, x)}
        for a, codes in enumerate(env.arm_codes):
            do = {n: m.label(n, int(v)) for n, v in zip(ARM_NODES, codes)}
            joint = m.query(["I1", "I2", "I3"], evidence=ev, do=do)
            mean = (
                np.einsum("ijk,i->", joint, [1, 2])
                + np.einsum("ijk,j->", joint, [1, 2])
                + np.einsum("ijk,k->", joint, [1, 2])
                + do["A3"]
            ) / 12
            assert env.means[c, a] == pytest.approx(mean, abs=1e-13)
            cf = [m.counterfactual(["I1", "I2", "I3"], {**do, SENSITIVE: s}, ev) for s in (0, 1)]
            ex = [
                (np.einsum("ijk,i->", j, [1, 2]) + np.einsum("ijk,j->", j, [1, 2]) + np.einsum("ijk,k->", j, [1, 2]))
                / 12
                for j in cf
            ]
            assert env.discrepancy[c, a] == pytest.approx(ex[1] - ex[0], abs=1e-13)


def test_discrepancy_is_arm_independent_with_the_closed_form(env):
    e_i4 = TABLE5 @ np.arange(1, 5)
    closed = -0.7 / 144 * (e_i4[4:] - e_i4[:4])
    for c in range(8):
        np.testing.assert_allclose(env.discrepancy[c], closed[c % 4], atol=1e-14)
    assert np.abs(env.discrepancy).max() == pytest.approx(0.0072917, abs=1e-6)
