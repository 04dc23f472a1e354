"""Counterfactually fair causal bandits: D-UCB and F-UCB (Huang, Zhang and Wu, AAAI 2022).

Modules, named for what they do:

- :mod:`.model`: a contextual bandit on a discrete SCM; exact arm means and the cell
  decomposition of the reward over a d-separation set (Eq. 2);
- :mod:`.instances`: the problem instances: the Email Campaign model (App. E.1,
  :mod:`.instances.email_campaign`), the Adult-Video bandit with its graph learned from data and
  the synthetic stand-in used when the Adult files are absent (:mod:`.instances.adult_video`), and
  a toy with a known answer (:mod:`.instances.toy`, ours);
- :mod:`.separators`: the d-separation set of smallest domain (Algorithm 1, line 2);
- :mod:`.counterfactual`: counterfactual rewards and discrepancies (Eq. 8–11, Theorem 2);
- :mod:`.algorithms`: D-UCB, F-UCB, C-UCB and UCB (configured by ``DecomposedUCBConfig`` and
  ``FairUCBConfig``), the discrepancy estimators of F-UCB, and a labelled reconstruction of
  Fair-LinUCB (the paper does not specify it);
- :mod:`.auditing`: unfair decisions as the book defines them (the paper does not): the auditor
  that rides along any algorithm and the counts;
- :mod:`.theory`: the regret bounds of Theorems 1 and 3, as printed and as corrected;
- :mod:`.experiments`: the runs behind Figure 2b and Tables 1 and 2, and the offline estimation
  error of notebook 1;
- :mod:`.figures`: the chapter's figures (they draw; they compute nothing a record keeps);
- :mod:`.registry`: the chapter's (environment, policy) pairs, for the conformance test and the
  benchmark;
- :mod:`.kernels`: the compiled fast path of the algorithms, imported here so that it registers
  itself for the classes it accelerates (which do not import it).
"""

from . import kernels  # noqa: F401  (registers the compiled kernels; see causalbandits_lib.core.kernels)
