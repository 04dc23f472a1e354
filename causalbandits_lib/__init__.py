"""Support library of the Causal & Fair Bandits executable book, in three layers.

- :mod:`causalbandits_lib.core`: the science kernel (structural causal models, graphs, named seed
  streams, the one simulation loop and its recorders, environments, policies, bounds, curves, the
  statistical checks behind verdicts, parallel tasks, data sets). It imports no chapter and
  nothing from ``book``.
- one package per chapter (``primer``, ``fucb``, ``bestfair``, ``cclb``, ``pcb``, ``fairx``), each
  with the same anatomy: ``model``, ``algorithms``, ``theory``, ``experiments``, ``figures``,
  ``registry``, plus what is truly its own. A chapter imports ``core`` only.
- :mod:`causalbandits_lib.book`: the machinery that runs, stores and shows the book (parameters,
  the notebook session, claims tables, records and provenance, execution, sweeps, report,
  plotting, the command line). Nothing above imports it.

Everything outside ``book`` (and outside the chapters' ``figures`` modules) can change a number,
so a record fingerprints exactly that code. ``ARCHITECTURE.md`` explains the rule and the
protocols.
"""

__version__ = "0.1.0"
