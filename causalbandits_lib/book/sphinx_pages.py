"""A Sphinx extension of the book: what a reviewer with only a browser needs to cite and re-run.

- **Re-run this page.** Every notebook page gets a box with the ``causalbandits run`` command that
  executes it again with the parameters the page was executed with. They are read from the
  executed notebook the page is built from (:func:`page_parameters`): the cell tagged
  ``parameters`` (the notebook's own values, which ``causalbandits run`` starts from too) and the
  cell papermill adds after it, tagged ``injected-parameters`` (the values a run was given). So
  the published book (executed by Jupyter Book, nothing injected) says ``--profile book`` and a
  book staged from smoke runs says ``--profile smoke``; nothing is written by hand in the
  notebooks, and the command cannot drift from what was executed.
- **Cite a claim.** Every claims table row carries a ``cite`` link
  (:func:`causalbandits_lib.book.claims.claim_cell` writes ``href="#cite-<id>"``); each page's
  links are pointed at ``cite/<id>.html``, a page written when the build finishes for every claim
  of every committed paper-scale record: the BibTeX and the text that ``causalbandits cite
  RECORD --claim ID`` prints for that record, each with a copy button (``static/cite.js``, no
  network). A claim that no paper-scale record holds yet (a new notebook) is cited from the run the
  page shows (:func:`page_record`), as ``cite --allow-below-paper`` does; without one its link is
  dropped.
- **The book's PDF and CITATION.cff in the header** of every page, as relative links (they work
  from every page depth and offline). The build copies ``CITATION.cff`` into the site;
  ``make book`` then pins it to the commit (:func:`causalbandits_lib.book.citation.write_source_archive`).
- **Author-year labels in the bibliography**: a pybtex label style (``Huang et al., 2022``) that
  matches the ``author_year`` citations in the text (``bibtex_default_style: authoryear``).

Registered in ``_config.yml`` (``sphinx.config.extensions``); its CSS is ``static/cite-rerun.css``.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import paths

__all__ = [
    "CITE_DIR",
    "CSS_FILE",
    "JS_FILE",
    "page_parameters",
    "page_rerun_command",
    "page_record",
    "rerun_box_html",
    "cite_page_html",
    "cite_href",
    "point_cite_links",
    "AuthorYearLabelStyle",
    "setup",
]

#: Folder of the claims' citation pages inside the built site.
CITE_DIR = "cite"
#: The extension's stylesheet and script (in ``static/``, the site's ``_static/``).
CSS_FILE = "cite-rerun.css"
JS_FILE = "cite.js"

#: What :func:`causalbandits_lib.book.claims.claim_cell` writes as a claim's cite link.
_CITE_LINK = re.compile(r'<a class="claim-cite" href="#cite-([^"]+)"')


# ---------------------------------------------------------------------------- re-run this page
def _assignments(source: str) -> dict[str, Any]:
    """The ``name = literal`` assignments of a parameters cell (anything else is skipped)."""
    out: dict[str, Any] = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def page_parameters(notebook: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The profile an executed notebook (nbformat JSON) ran at and the parameters it was given on
    top of its own values: the cell tagged ``parameters`` gives the defaults, the one tagged
    ``injected-parameters`` (papermill's) what a run injected. A value injected equal to the
    notebook's own is not repeated."""
    own: dict[str, Any] = {}
    injected: dict[str, Any] = {}
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if "parameters" in tags:
            own.update(_assignments(source))
        elif "injected-parameters" in tags:
            injected.update(_assignments(source))
    profile = str(injected.get("profile", own.get("profile", "book")))
    given = {k: v for k, v in injected.items() if k != "profile" and (k not in own or own[k] != v)}
    return profile, given


def page_rerun_command(notebook_id: str, notebook: Mapping[str, Any]) -> str:
    """The ``causalbandits run`` command that executes the page's notebook as the page was executed."""
    from .citation import rerun_command

    profile, given = page_parameters(notebook)
    return rerun_command(notebook_id, profile, given)


def rerun_box_html(notebook_id: str, notebook: Mapping[str, Any]) -> str:
    """The "Re-run this page" box (its command in a code block, which sphinx-copybutton equips)."""
    profile, given = page_parameters(notebook)
    command = page_rerun_command(notebook_id, notebook)
    extra = f" with {', '.join(f'{k}={v!r}' for k, v in given.items())}" if given else ""
    return (
        '<div class="admonition rerun-box" id="re-run-this-page">\n'
        '<p class="admonition-title">Re-run this page</p>\n'
        f"<p>This page was executed at the <code>{html.escape(profile)}</code> profile{html.escape(extra)}. "
        "In a copy of the source, after <code>make setup</code>, this command executes it again and writes "
        "its record (the command is <code>.venv/bin/causalbandits</code> there; <code>--out DIR</code> "
        "chooses the folder):</p>\n"
        '<div class="highlight-bash notranslate"><div class="highlight"><pre>'
        f"{html.escape(command)}</pre></div></div>\n</div>\n"
    )


def _notebook_docname(docname: str) -> tuple[str, str] | None:
    parts = docname.split("/")
    if len(parts) == 3 and parts[0] == "notebooks":
        return parts[1], parts[2]
    return None


def add_rerun_box(app, doctree, docname: str) -> None:
    """``doctree-resolved``: the box on a notebook page, after the page's opening paragraphs (before
    its first subsection)."""
    from docutils import nodes

    from .sphinx_downloads import executed_notebook

    where = _notebook_docname(docname)
    if where is None or app.builder.format != "html":
        return
    source = executed_notebook(app, *where)
    if source is None:
        return
    notebook = json.loads(source.read_text(encoding="utf-8"))
    citable = getattr(app, "causalbandits_citable", None)
    run = page_record(notebook, "/".join(where))
    if run is not None and citable is not None:  # claims no paper-scale record holds: the page's own run
        for claim in json.loads(run.read_text(encoding="utf-8")).get("claims", []):
            citable.setdefault(claim["id"], run)
    box = nodes.raw("", rerun_box_html("/".join(where), notebook), format="html")
    top = next(iter(doctree.findall(nodes.section)), None)
    if top is None:
        doctree.append(box)
        return
    for i, child in enumerate(top.children):
        if isinstance(child, nodes.section):
            top.insert(i, box)
            return
    top.append(box)


def page_record(notebook: Mapping[str, Any], notebook_id: str) -> Path | None:
    """The record of the run a page shows, when no paper-scale record holds its claims: the path
    the executed notebook printed (``record written to PATH``, relative to the book's root), else
    where a run at the page's profile writes it (``_build/records/<profile>``); only a record of
    this notebook at that profile counts."""
    profile, _ = page_parameters(notebook)
    chapter, name = notebook_id.split("/", 1)
    candidates = []
    for cell in notebook.get("cells", []):
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            text = text if isinstance(text, str) else "".join(text)
            candidates += [paths.book_root() / m for m in re.findall(r"record written to (\S+\.json)", text)]
    candidates.append(paths.default_record_dir(profile) / chapter / f"{name}.json")
    for path in candidates:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if record.get("notebook") == notebook_id and record.get("profile") == profile:
            return path
    return None


# ---------------------------------------------------------------------------- cite a claim
def cite_href(claim_id: str, pagename: str) -> str:
    """The link from page ``pagename`` (``notebooks/fucb/04_email_experiment``) to a claim's citation."""
    return "../" * pagename.count("/") + f"{CITE_DIR}/{claim_id}.html"


def point_cite_links(body: str, pagename: str, citable: Iterable[str]) -> str:
    """Point every cite link of a page's HTML at its claim's citation page; a link to a claim with
    no citation page is removed (the cell keeps its text)."""
    known = set(citable)

    def repoint(m: re.Match) -> str:
        claim_id = html.unescape(m.group(1))
        if claim_id in known:
            return f'<a class="claim-cite" href="{html.escape(cite_href(claim_id, pagename), quote=True)}"'
        return '<a class="claim-cite claim-cite-none"'

    return _CITE_LINK.sub(repoint, body)


def _paper_records() -> dict[str, Path]:
    """Every committed paper-scale record by each claim id it holds."""
    out: dict[str, Path] = {}
    for path in sorted(paths.paper_results_dir().glob("*/*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for claim in record.get("claims", []):
            out.setdefault(claim["id"], path)
    return out


def _cite_flags(record: Mapping[str, Any]) -> list[str]:
    """The flags ``causalbandits cite`` needs for this record (as ``cmd_cite`` asks for them)."""
    from .provenance import replaceable_stand_ins

    flags = []
    if replaceable_stand_ins(record["data"]):
        flags.append("--allow-stand-in")
    if record["profile"] != "paper":
        flags.append("--allow-below-paper")
    return flags


def cite_page_html(citation, record_arg: str, flags: Iterable[str] = ()) -> str:
    """The citation page of one claim: what ``causalbandits cite RECORD --claim ID`` prints (its
    BibTeX, then its text), each block with a copy button; links lead back to the claim's page and
    to the record."""
    claim_id = citation.claim["id"]
    chapter, name = citation.nb.split("/", 1)
    command = " ".join(["causalbandits cite", record_arg, "--claim", claim_id, *flags])
    e = html.escape
    if record_arg.startswith("results/paper/"):
        record = f'<a href="../_downloads/records/{e(chapter)}/{e(name)}.json">{e(record_arg)}</a>'
    else:
        record = f"<code>{e(record_arg)}</code> (the page's own run; no paper-scale record holds this claim yet)"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cite claim {e(claim_id)}</title>
<link rel="stylesheet" href="../_static/{CSS_FILE}">
</head>
<body class="cite-page">
<main>
<h1>Cite claim <code>{e(claim_id)}</code></h1>
<p>{e(citation.claim["statement"])} (verdict: <strong>{e(citation.claim["verdict"])}</strong>)</p>
<p>From the record {record} of the notebook
<a href="../notebooks/{e(chapter)}/{e(name)}.html#claims">{e(citation.nb)}</a>. Below is what
<code>{e(command)}</code> prints, made when this site was built.</p>
<h2>BibTeX</h2>
<div class="cite-block"><button type="button" class="cite-copy" data-copy="cite-bibtex">Copy</button>
<pre id="cite-bibtex">{e(citation.bibtex())}</pre></div>
<h2>Text</h2>
<div class="cite-block"><button type="button" class="cite-copy" data-copy="cite-text">Copy</button>
<pre id="cite-text">{e(citation.text())}</pre></div>
<p><a href="../notebooks/{e(chapter)}/{e(name)}.html#claims">Back to the claims of {e(citation.nb)}</a> ·
<a href="../book/reproducibility.html">All claims</a> · <a href="../CITATION.cff">Cite the book (CITATION.cff)</a></p>
</main>
<script src="../_static/{JS_FILE}"></script>
</body>
</html>
"""


def write_cite_pages(site: Path, claims: Mapping[str, Path]) -> list[Path]:
    """``cite/<claim id>.html`` in ``site`` for every claim of ``claims`` (claim id → record)."""
    from .citation import Citation

    out = Path(site) / CITE_DIR
    out.mkdir(parents=True, exist_ok=True)
    root = paths.book_root().resolve()
    by_record: dict[Path, list[str]] = {}
    for claim_id, path in claims.items():
        by_record.setdefault(path, []).append(claim_id)
    written = []
    for path, ids in by_record.items():
        record = json.loads(path.read_text(encoding="utf-8"))
        whole = Citation(record, path)
        try:
            record_arg = path.resolve().relative_to(root).as_posix()
        except ValueError:
            record_arg = str(path)
        for claim_id in ids:
            page = out / f"{claim_id}.html"
            page.write_text(
                cite_page_html(whole.for_claim(claim_id), record_arg, _cite_flags(record)), encoding="utf-8"
            )
            written.append(page)
    return written


# ---------------------------------------------------------------------------- the page's header
def header_links(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context`` (after the theme's buttons): the book's PDF and CITATION.cff in the
    header; on a notebook page, the executed ``.ipynb`` in the download menu; cite links pointed
    at their pages."""
    from .pdf import PDF_NAME
    from .sphinx_downloads import add_notebook_download

    pathto = context["pathto"]
    buttons = context.get("header_buttons")
    if isinstance(buttons, list):
        add_notebook_download(pagename, buttons, pathto)
        buttons[:0] = [
            {
                "type": "link",
                "url": pathto(PDF_NAME, 1),
                "text": "PDF",
                "tooltip": "The whole book as one PDF",
                "icon": "fas fa-book",
                "label": "book-pdf-button",
            },
            {
                "type": "link",
                "url": pathto("CITATION.cff", 1),
                "text": "Cite",
                "tooltip": "Cite the book (CITATION.cff)",
                "icon": "fas fa-quote-right",
                "label": "book-citation-button",
            },
        ]
    if "body" in context and "claim-cite" in context["body"]:
        context["body"] = point_cite_links(context["body"], pagename, app.causalbandits_citable)


def _load_citable(app) -> None:
    app.causalbandits_citable = dict(_paper_records())


def _finish(app, exception) -> None:
    """``build-finished``: the citation pages and the book's (unpinned) CITATION.cff."""
    if exception is not None or app.builder.format != "html":
        return
    from .citation import citation_cff

    site = Path(app.outdir)
    write_cite_pages(site, getattr(app, "causalbandits_citable", None) or _paper_records())
    root = Path(app.srcdir)
    if (root / "CITATION.cff").is_file():
        (site / "CITATION.cff").write_text(citation_cff(root, commit=None), encoding="utf-8")
    elif (paths.book_root() / "CITATION.cff").is_file():
        (site / "CITATION.cff").write_text(citation_cff(paths.book_root(), commit=None), encoding="utf-8")


# ---------------------------------------------------------------------------- bibliography labels
def _label_style_base():
    from pybtex.style.labels import BaseLabelStyle

    return BaseLabelStyle


class AuthorYearLabelStyle(_label_style_base()):
    """Labels as the text cites (sphinxcontrib-bibtex's ``author_year``): ``Lai and Robbins, 1985``,
    ``Huang et al., 2022``; two entries with the same label get ``a``, ``b``."""

    @staticmethod
    def _last(person) -> str:
        from pybtex.richtext import Text

        words = [*person.prelast_names, *person.last_names]
        return str(Text.from_latex(" ".join(words)).render_as("text"))

    def _label(self, entry) -> str:
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [self._last(p) for p in people]
        if not names:
            who = entry.fields.get("organization") or entry.fields.get("publisher") or entry.key
            from pybtex.richtext import Text

            who = str(Text.from_latex(who).render_as("text"))
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who}, {entry.fields.get('year', 'n.d.')}"

    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        labels = [self._label(e) for e in entries]
        counts: dict[str, int] = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        seen: dict[str, int] = {}
        for label in labels:
            if counts[label] > 1:
                seen[label] = seen.get(label, 0) + 1
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label] - 1]
            else:
                yield label


def _register_bibliography_style() -> None:
    from pybtex.plugin import find_plugin, register_plugin

    plain = find_plugin("pybtex.style.formatting", "plain")

    class AuthorYearStyle(plain):
        default_label_style = "causalbandits_authoryear"
        default_sorting_style = "author_year_title"

    for kind, name, plugin in (
        ("pybtex.style.labels", "causalbandits_authoryear", AuthorYearLabelStyle),
        ("pybtex.style.formatting", "causalbandits_authoryear", AuthorYearStyle),
    ):
        try:
            register_plugin(kind, name, plugin)
        except Exception:  # registered already (a second build in one process)
            pass


# ---------------------------------------------------------------------------- setup
def setup(app):
    _register_bibliography_style()
    app.add_css_file(CSS_FILE)
    app.connect("builder-inited", _load_citable)
    app.connect("doctree-resolved", add_rerun_box)
    app.connect("html-page-context", header_links, priority=510)
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
