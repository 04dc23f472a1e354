"""The science kernel of the book: what every chapter builds on.

- :mod:`.streams`: named per-run random streams from one root seed (and the configurations x
  replications layout);
- :mod:`.protocols`: the ``Environment``, ``Policy``, ``Recorder`` and ``Identifier`` contracts;
- :mod:`.runner` and :mod:`.recorders`: the one simulation loop and what it keeps;
- :mod:`.registry`: how a chapter lists its (environment, policy) pairs for the conformance test
  and the benchmark;
- :mod:`.scm`, :mod:`.graphs`: discrete structural causal models on pgmpy, d-separation and
  adjustment sets on networkx;
- :mod:`.environments`, :mod:`.policies`, :mod:`.bounds`: generic bandits, policies and bounds;
- :mod:`.curves`, :mod:`.checks`: curves and slopes, and the statistical checks behind verdicts;
- :mod:`.parallel`, :mod:`.datasets`, :mod:`.paths`: parallel tasks, public data sets, the checkout.

Importing it loads no plotting, notebook or execution module (a test checks it).
"""
