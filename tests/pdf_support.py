"""What the PDF tests read from a PDF with pypdf (shared by the unit and the built-book tests)."""

from __future__ import annotations


def outline_tree(reader) -> list[tuple[str, int, list]]:
    """The PDF's bookmarks as ``(title, page index, children)`` trees, in order."""

    def tree(items):
        out = []
        for item in items:
            if isinstance(item, list):
                out[-1][2].extend(tree(item))
            else:
                out.append((item.title, reader.get_destination_page_number(item), []))
        return out

    return tree(reader.outline)


def link_annotations(reader) -> list[tuple[int, str | None, int | None]]:
    """Every link annotation: (sheet it is on, URI or None, sheet it leads to or None)."""
    sheet_of = {p.indirect_reference.idnum: i for i, p in enumerate(reader.pages)}
    out = []
    for i, page in enumerate(reader.pages):
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot.get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            dest = annot.get("/Dest")
            target = sheet_of.get(dest[0].idnum) if dest is not None and not isinstance(dest, str) else None
            out.append((i, None if uri is None else str(uri), target))
    return out
