"""Where the book's checkout is (the folder holding ``_toc.yml``); data and records are found from it."""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable that names the book's root folder (the folder holding ``_toc.yml``).
ROOT_ENV = "CAUSALBANDITS_BOOK_ROOT"


def book_root() -> Path:
    """Return the root of the book checkout.

    The library is installed editable from the checkout, so the root is normally the parent of
    the package folder. ``CAUSALBANDITS_BOOK_ROOT`` overrides it, and as a last resort the current
    folder and its parents are searched for ``_toc.yml``.

    Raises
    ------
    FileNotFoundError
        If no folder holding ``_toc.yml`` can be found.
    """
    env = os.environ.get(ROOT_ENV)
    if env:
        root = Path(env).expanduser().resolve()
        if not (root / "_toc.yml").is_file():
            raise FileNotFoundError(f"{ROOT_ENV}={env!r} does not hold a _toc.yml; it must name the book's root folder")
        return root
    here = Path(__file__).resolve().parents[2]
    if (here / "_toc.yml").is_file():
        return here
    for folder in [Path.cwd(), *Path.cwd().parents]:
        if (folder / "_toc.yml").is_file():
            return folder
    raise FileNotFoundError(
        "cannot find the book's root (a folder with _toc.yml): install the library editable from the "
        f"checkout, run from inside it, or set {ROOT_ENV}"
    )
