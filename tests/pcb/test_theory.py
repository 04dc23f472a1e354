"""The regret bounds of Theorems 5 and 8 and the quantities they depend on."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.pcb import algorithms as A
from causalbandits_lib.pcb import model as M
from causalbandits_lib.pcb import theory as Th


def test_regret_bound_functions(table2, truth):
    means = M.interventional_arm_means(table2)
    assert Th.ucb_pcb_regret_bound(means, 15_000, upper=[0.441, 0.608, 0.432, 0.599]) == pytest.approx(3693.7, abs=0.5)
    assert Th.ucb_pcb_regret_bound(means, 15_000) == pytest.approx(5355.3, abs=0.5)
    f = A.arm_context_features()
    theta, resid = Th.linear_parameter(f, truth.T)
    assert resid < 1e-12 and np.linalg.norm(theta) == pytest.approx(0.34913, abs=1e-4)
    L = Th.effective_feature_norm(f, truth.T)
    assert L == pytest.approx(np.sqrt(5))
    assert Th.linucb_pcb_regret_bound(15_000, 5, 1.0, 0.34913, 0.05, L) == pytest.approx(18501, rel=1e-3)
    with pytest.raises(ValueError, match="delta=1.5"):
        Th.linucb_pcb_regret_bound(10, 5, 1.0, 0.3, 1.5, 1.0)
