"""Counterfactually fair causal bandits: D-UCB and F-UCB (Huang, Zhang and Wu, AAAI 2022).

Modules, named for what they do:

- :mod:`.environment`: a contextual bandit on a discrete SCM; exact arm means and the cell
  decomposition of the reward over a d-separation set (Eq. 2);
- :mod:`.email_campaign`: the Email Campaign model (App. E.1) and its bandit;
- :mod:`.adult_video`: the Adult-Video bandit (users from UCI Adult, 16 video types), its graph
  learned from data, and the synthetic stand-in used when the Adult files are absent;
- :mod:`.separators`: the d-separation set of smallest domain (Algorithm 1, line 2);
- :mod:`.counterfactual`: counterfactual rewards and discrepancies (Eq. 8–11, Theorem 2);
- :mod:`.policies`: D-UCB, F-UCB, C-UCB and UCB, and the unfair-decision auditor;
- :mod:`.fair_linucb`: a labelled reconstruction of Fair-LinUCB (the paper does not specify it);
- :mod:`.regret_bounds`: Theorems 1 and 3 as printed and as corrected;
- :mod:`.experiments`: the runs behind Figure 2b and Tables 1 and 2.
"""
