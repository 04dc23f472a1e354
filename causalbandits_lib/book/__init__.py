"""The book's machinery: it runs, stores and shows the science, and computes no number of its own.

- :mod:`.params`: typed, ranged parameters and the three profiles (``parameters.yml``);
- :mod:`.notebook`: the session of one notebook execution (metrics, curves, claims, record);
- :mod:`.claims`: claims and their Markdown tables; :mod:`.records` and :mod:`.provenance`:
  records, git and versions, and the library fingerprint;
- :mod:`.execution`, :mod:`.sweep`, :mod:`.report`, :mod:`.cli`: running notebooks, grids of them,
  the reproducibility page and the ``causalbandits`` command;
- :mod:`.plotting`, :mod:`.paths`: the book's figure conventions and where things live.

It may import everything in the library; nothing outside it imports it (a test checks it).
"""
