"""FairX: the chapter's algorithms, vectorised over runs against a plain loop over runs.

The multi-armed cases use yeast's 14 label frequencies as Bernoulli arms (so the benchmark needs
no data file); the linear case uses fresh unit-norm Gaussian contexts. The harness keeps the
deployed policy and the reward of every round and checks them bit for bit.
"""

import numpy as np

from causalbandits_lib.fairx import linear, mab
from causalbandits_lib.fairx.data import YEAST_LABEL_COUNTS, YEAST_N
from causalbandits_lib.fairx.environments import ArmsBandit, GaussianContextBandit
from causalbandits_lib.fairx.merit import ExpMerit

from .harness import Case

MEANS = YEAST_LABEL_COUNTS / YEAST_N
MERIT = ExpMerit(4.0)
THETA = np.linspace(-0.5, 0.5, 10)
KEEP = ("reward", "policy")

CASES = [
    Case(
        name="fairx.fairx_ts_yeast_means",
        make_env=lambda: ArmsBandit(MEANS),
        make_policy=lambda: mab.FairXTS(MERIT, 1.0, 0.5, 14),
        T=2000,
        metrics=KEEP,
        target_ratio=5.0,
    ),
    Case(
        name="fairx.fairx_ucb_pgd_yeast_means",
        make_env=lambda: ArmsBandit(MEANS),
        make_policy=lambda: mab.FairXUCB(MERIT, 0.1, 14),
        T=1000,
        metrics=KEEP,
    ),
    Case(
        name="fairx.ucb_yeast_means",
        make_env=lambda: ArmsBandit(MEANS),
        make_policy=lambda: mab.UCB(0.1, 14),
        T=2000,
        metrics=KEEP,
    ),
    Case(
        name="fairx.fairx_lints_gaussian_contexts",
        make_env=lambda: GaussianContextBandit(THETA, 10, 1.0),
        make_policy=lambda: linear.FairXLinTS(ExpMerit(3.0), 1.0, 1.0, 10, 10),
        T=500,
        metrics=KEEP,
    ),
]
