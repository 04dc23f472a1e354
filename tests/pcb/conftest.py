"""Fixtures shared by the pcb tests: Table 2's model and its exact conditional causal effects."""

from __future__ import annotations

import pytest

from causalbandits_lib.pcb import model as M


@pytest.fixture(scope="session")
def table2():
    return M.table2_model()


@pytest.fixture(scope="session")
def truth(table2):
    """``E[Y | do(x_a), c]``, indexed ``[arm, context]``."""
    return M.conditional_causal_effects(table2)
