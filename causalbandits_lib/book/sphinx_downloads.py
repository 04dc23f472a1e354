"""A Sphinx extension of the book: the evidence behind each page, downloadable from the site.

When an HTML build finishes, every committed paper-scale record is copied to
``_downloads/records/<chapter>/<notebook>.json`` and every executed notebook to
``_downloads/notebooks/<chapter>/<notebook>.ipynb`` inside the built site, so that the links each
notebook page shows (:meth:`causalbandits_lib.book.notebook.NotebookRun.finish`) resolve, offline
too; the page's download menu offers that executed notebook as ``.ipynb``
(:func:`add_notebook_download`, called by ``causalbandits_lib.book.sphinx_pages``). When the build
starts it also sets what the site says about its source
(:func:`causalbandits_lib.book.citation.site_config`): the repository button only when an address
is configured, and a banner when the tree is dirty (then ``make book`` ships no source archive).
Registered in ``_config.yml`` (``sphinx.config.extensions``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import paths

__all__ = ["setup", "DOWNLOADS", "download_links", "executed_notebook", "add_notebook_download"]

#: Folder of the downloads inside the built site.
DOWNLOADS = "_downloads"


def download_links(chapter: str, name: str) -> dict[str, str]:
    """The site-relative paths of a notebook page's downloads."""
    return {
        "executed notebook": f"{DOWNLOADS}/notebooks/{chapter}/{name}.ipynb",
        "paper-scale record": f"{DOWNLOADS}/records/{chapter}/{name}.json",
    }


def executed_notebook(app, chapter: str, name: str) -> Path | None:
    """The executed notebook Jupyter Book kept for a page (or the page's own .ipynb source)."""
    for candidate in (
        Path(app.outdir).parent / "jupyter_execute" / "notebooks" / chapter / f"{name}.ipynb",
        Path(app.srcdir) / "notebooks" / chapter / f"{name}.ipynb",
    ):
        if candidate.is_file():
            return candidate
    return None


def add_notebook_download(pagename: str, header_buttons: list, pathto) -> None:
    """On a notebook page, the executed notebook (``_downloads/notebooks/...ipynb``) as ``.ipynb``
    first in the theme's download menu (``header_buttons``, from sphinx-book-theme); where the
    page's source is that notebook already (a book built from executed ``.ipynb`` files), its
    ``.ipynb`` entry points there instead of being repeated."""
    parts = pagename.split("/")
    if len(parts) != 3 or parts[0] != "notebooks":
        return
    group = next((b for b in header_buttons if b.get("label") == "download-buttons"), None)
    if group is None:
        return
    url = pathto(download_links(parts[1], parts[2])["executed notebook"], 1)
    entries = [b for b in group["buttons"] if b.get("text") != ".ipynb"]
    entry = {
        "type": "link",
        "url": url,
        "text": ".ipynb",
        "icon": "fas fa-code",
        "tooltip": "Download the executed notebook",
        "label": "download-executed-notebook-button",
    }
    group["buttons"] = [entry, *entries]


def copy_downloads(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for docname in app.env.found_docs:
        parts = docname.split("/")
        if len(parts) != 3 or parts[0] != "notebooks":
            continue
        _, chapter, name = parts
        links = download_links(chapter, name)
        record = paths.paper_results_dir() / chapter / f"{name}.json"
        executed = executed_notebook(app, chapter, name)
        for source, target in ((record, links["paper-scale record"]), (executed, links["executed notebook"])):
            if source is not None and source.is_file():
                (out / target).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, out / target)


def setup(app):
    from .citation import site_config

    app.connect("config-inited", site_config)
    app.connect("build-finished", copy_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
