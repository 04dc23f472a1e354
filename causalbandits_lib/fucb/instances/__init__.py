"""The chapter's problem instances, each a :class:`~causalbandits_lib.fucb.model.CausalBanditEnv`.

- :mod:`.email_campaign`: the Email Campaign model of the paper (App. E.1) and its bandit;
- :mod:`.adult_video`: the Adult-Video bandit (users from UCI Adult, 16 video types), its graph
  learned from data, and the synthetic stand-in used when the Adult files are absent;
- :mod:`.toy`: a two-user, two-arm instance with one truly unfair arm (ours), small enough to know
  every answer, for the tests and the registry; and a toy inside Theorem 2's premise;
- :mod:`.interaction`: a variant of ours where gender interacts with the arm, so the discrepancy
  differs across arms and the fairness constraint binds.
"""
