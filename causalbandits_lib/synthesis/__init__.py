"""The synthesis chapter, which sits above the paper chapters and uses their learners.

Its compiled fast paths (:mod:`.kernels`, :mod:`.cell_kernels`) are imported here so that they
register themselves for the adapters they accelerate (which do not import them).
"""

from . import cell_kernels, kernels  # noqa: F401  (register the kernels; see causalbandits_lib.core.kernels)
