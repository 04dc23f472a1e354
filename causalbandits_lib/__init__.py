"""Support library of the Causal & Fair Bandits executable book.

The core modules are named for what they do:

- :mod:`~causalbandits_lib.scm`: discrete structural causal models on pgmpy (validation, vectorised
  sampling, exact observational, interventional and counterfactual queries);
- :mod:`~causalbandits_lib.graphs`: d-separation, separators and adjustment sets on networkx;
- :mod:`~causalbandits_lib.runner`: the simulation runner with a leading runs axis and per-run random
  streams derived from one :class:`numpy.random.SeedSequence`;
- :mod:`~causalbandits_lib.policies`, :mod:`~causalbandits_lib.environments`,
  :mod:`~causalbandits_lib.bounds`: generic bandit policies, environments and confidence bounds;
- :mod:`~causalbandits_lib.params`, :mod:`~causalbandits_lib.notebook`,
  :mod:`~causalbandits_lib.records`, :mod:`~causalbandits_lib.claims`,
  :mod:`~causalbandits_lib.report`: parameters and profiles, the per-notebook session, results
  records, claims with computed verdicts, and the reproducibility table;
- :mod:`~causalbandits_lib.datasets`, :mod:`~causalbandits_lib.plotting`,
  :mod:`~causalbandits_lib.execution`, :mod:`~causalbandits_lib.cli`.

Each chapter of the book has one module of its own (``primer``, ``fucb``, ...). Chapter modules use
the core; the core never imports a chapter.
"""

__version__ = "0.1.0"
