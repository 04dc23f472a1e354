"""The chapter's problem instances, each a :class:`~causalbandits_lib.bestfair.model.FairArmsProblem`.

- :mod:`.synthetic`: the graph ``S → X → V → Y ← E`` of §5 and Appendix C and our generator of
  instances with exactly the properties the paper states (its Figure 2 is missing): the settings of
  Figures 3 and 6 and one where no arm is fair;
- :mod:`.hepar2`: HEPAR-II (§6), from the network file shipped inside the pinned pgmpy wheel, with
  ``V = fibrosis``, ``S = sex`` and ``Y = carcinoma``.
"""
