"""The study layer: a cell's forward and backward laid open.

``npcomp explain`` and its page (``explain.py``, ``explain_page.py``, the
page's files in ``page_files/``), finite differences per parameter and per
node state, and the errata the cells cite (``errata.py``, the pages in
``errata_pages/``).
"""
