"""Fixtures of the chapter's tests."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair.instances.synthetic import synthetic_instance


@pytest.fixture(scope="session")
def loose():
    """The 'loose' synthetic instance (30 arms, 8 infeasible), seed 9."""
    return synthetic_instance("loose", np.random.default_rng(9))
