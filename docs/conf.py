"""The documentation site: Sphinx, the PyData theme, the Markdown pages as
they are (myst-parser, through myst-nb), the exercise notebooks rendered as
written (myst-nb, not executed here: tests/test_exercises.py runs them), the
command-line reference from the real parser
(each command's ``--help``) and an API reference generated from each package's
``__all__``.

Build it strictly (a warning fails it) from the checkout's top:

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API pages are written at build time into ``docs/api/`` (not committed):
one page per package that declares ``__all__``, one per name it exports, so
the reference follows the exports as they change (``_ext/npcomp_site.py``).
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # a checkout's npcomp, installed or not
sys.path.insert(0, str(DOCS / "_ext"))

import npcomp  # noqa: E402

project = "npcomp"
author = "the npcomp authors"
copyright = "the npcomp authors, MIT License"
version = release = npcomp.__version__

extensions = [
    # myst-nb: myst-parser for the pages, and the .ipynb notebooks as pages
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "npcomp_site",
]
npcomp_api_packages = ["npcomp"]

root_doc = "index"
source_suffix = {".md": "myst-nb", ".rst": "restructuredtext", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/runs/**"]
# options in prose stay as typed (--tree, not an en dash)
smartquotes = False
# the pages' indented blocks are commands, files and output, not Python
highlight_language = "none"

myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 4
suppress_warnings = []

# The exercise notebooks are shown as written, never run by the build: an
# exercise stops at its first blank (NotImplementedError), and the solutions
# and each blank's stop are run by tests/test_exercises.py already.
nb_execution_mode = "off"

autosummary_generate = False  # the pages are written below, from __all__
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "signature"

html_theme = "pydata_sphinx_theme"
html_title = f"npcomp {release}"
html_theme_options = {
    "navbar_end": ["theme-switcher"],
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
# a section's navigation where a page has sub-pages (the cells, the reports,
# the API reference); none beside a page of the top bar
html_sidebars = {
    "*": [],
    "cells/*": ["sidebar-nav-bs"],
    "results/**": ["sidebar-nav-bs"],
    "api/*": ["sidebar-nav-bs"],
    "exercises/*": ["sidebar-nav-bs"],
}
html_show_sourcelink = False
# the site's own CSS (_static/npcomp.css): long names wrap in "On this page"
html_static_path = [str(DOCS / "_static")]  # absolute: a conf.py that execs this one
html_css_files = ["npcomp.css"]
