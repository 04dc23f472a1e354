import pytest

from .support import played_data


@pytest.fixture(scope="session")
def played():
    """400 rounds of OFULog+ in 2 runs (seed 0)."""
    return played_data(400)
