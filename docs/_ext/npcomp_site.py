"""The site's own Sphinx extension: the API reference written from each
package's ``__all__``, the command-line reference from the parser,
docstrings written as plain text shown as such, and links to the
repository's folders.

``npcomp_api_packages`` (a list of top-level package names) says whose
packages the reference covers; ``[]`` writes none.
"""

import importlib
import inspect
import os
import pkgutil
import re
from pathlib import Path

# --------------------------------------------------------------------------
# the API reference, from __all__
# --------------------------------------------------------------------------


def public_packages(tops) -> list:
    """Every package under the packages ``tops`` that declares ``__all__``,
    imported, in the order of their dotted names."""
    found = []
    for top in tops:
        package = importlib.import_module(top)
        modules = [top] + [info.name for info in pkgutil.walk_packages(package.__path__, top + ".") if info.ispkg]
        for name in sorted(modules):
            module = importlib.import_module(name)
            if isinstance(getattr(module, "__all__", None), (list, tuple)):
                found.append(module)
    return found


def _directive(obj) -> str:
    if inspect.isclass(obj):
        return "autoclass" if not issubclass(obj, BaseException) else "autoexception"
    if callable(obj):
        return "autofunction"
    return "autodata"


def _write(path: Path, text: str) -> None:
    """Write ``text`` only where it differs (Sphinx rereads a changed page;
    builds at once write the same bytes, each to its own temporary file)."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def write_api_pages(app) -> None:
    """``api/index.rst`` and a page per package and per exported name; an
    object exported by several packages is indexed at its first."""
    tops = app.config.npcomp_api_packages
    if not tops:
        return
    api = Path(app.srcdir) / "api"
    api.mkdir(exist_ok=True)
    pages, seen, written = [], set(), {"index.rst"}
    for module in public_packages(tops):
        name = module.__name__
        rows = []
        for export in module.__all__:
            try:
                obj = getattr(module, export)
            except AttributeError as error:
                from sphinx.errors import ExtensionError

                raise ExtensionError(f"{name}.__all__ names {export!r}, which {name} does not have") from error
            full = f"{name}.{export}"
            options = ""
            if id(obj) in seen and not isinstance(obj, (int, float, str, tuple, dict, list)):
                options = "   :no-index:\n"
            seen.add(id(obj))
            if inspect.ismodule(obj):  # a module exported by name: its docstring
                body = f".. automodule:: {obj.__name__}\n   :no-members:\n   :no-index:\n"
            else:
                body = f".. currentmodule:: {name}\n\n.. {_directive(obj)}:: {export}\n{options}"
            _write(api / f"{full}.rst", f"{_title(export)}\n{body}")
            written.add(f"{full}.rst")
            rows.append(export)
        table = "\n".join(f"   {export}" for export in rows)
        toctree = "\n".join(f"   {name}.{export}" for export in rows)
        _write(
            api / f"{name}.rst",
            f"{_title(name)}\n.. automodule:: {name}\n   :no-members:\n\n"
            f".. currentmodule:: {name}\n\n.. autosummary::\n   :nosignatures:\n\n{table}\n\n"
            f".. toctree::\n   :hidden:\n\n{toctree}\n",
        )
        pages.append(name)
        written.add(f"{name}.rst")
    listed = "\n".join(f"   {name}" for name in pages)
    _write(
        api / "index.rst",
        f"{_title('API reference')}\nGenerated from the docstrings of the names each "
        f"package exports (its ``__all__``).\n\n.. toctree::\n   :maxdepth: 1\n\n{listed}\n",
    )
    for stale in api.glob("*.rst"):  # a name no longer exported
        if stale.name not in written:
            stale.unlink()


# --------------------------------------------------------------------------
# docstrings written as plain text
# --------------------------------------------------------------------------
# The docstrings are written to be read in a terminal: shapes in indented
# lines, ``*`` and ``|x|`` as in the equations.  One that reStructuredText
# reads cleanly is rendered as reST; any other as its own text, preformatted
# (its first sentence, escaped, stays the summary), never as broken markup.

_HARMLESS = ("Unknown interpreted text role", "Unknown directive type", "No role entry", "No directive entry")


def _clean_rest(text: str, env=None) -> bool:
    """True if docutils parses ``text`` without a warning (roles and
    directives only Sphinx knows are fine; ``env``, the build's environment,
    lets Sphinx's own roles run)."""
    import io

    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.transforms.references import Substitutions
    from docutils.utils import new_document

    settings = get_default_settings(Parser)
    settings.report_level, settings.halt_level = 5, 5
    settings.warning_stream = io.StringIO()
    settings.file_insertion_enabled = settings.raw_enabled = False
    settings.env = env
    document = new_document("<docstring>", settings)
    messages = []
    document.reporter.attach_observer(messages.append)
    try:
        Parser().parse(text, document)
        document.transformer.add_transform(Substitutions)
        document.transformer.apply_transforms()
    except Exception:  # noqa: BLE001 - markup the parser cannot take is not clean reST
        return False
    return not any(message["level"] >= 2 and not message[0].astext().startswith(_HARMLESS) for message in messages)


def _escaped(text: str) -> str:
    return "".join(f"\\{char}" if char in "\\*`|_[]<>:" else char for char in text)


# an inline literal as the docstrings write it: ``code``, maybe across a
# line break
_LITERAL = re.compile(r"``([^`\s](?:[^`]*[^`\s])?)``")


def _plain(text: str) -> str:
    """``text`` as reST that shows it as written, but for its inline
    literals: those stay ``code`` (set off by escaped spaces, so a literal
    next to a letter or a dot is still one; one across a line break is one
    a line), everything else escaped."""
    pieces, at = [], 0
    for match in _LITERAL.finditer(text):
        pieces.append(_escaped(text[at : match.start()]))
        parts = []
        for line in match.group(1).split("\n"):
            indent = line[: len(line) - len(line.lstrip())]
            parts.append(f"{indent}\\ ``{line.strip()}``\\ " if line.strip() else indent)
        pieces.append("\n".join(parts))
        at = match.end()
    return "".join(pieces + [_escaped(text[at:])])


def plain_docstrings(app, what, name, obj, options, lines) -> None:
    """A docstring reST does not read cleanly: its summary escaped, the
    rest a parsed literal block (its lines and spacing as written, the
    inline literals shown as code: the terminal reads ``x`` as code too)."""
    if not lines or _clean_rest("\n".join(lines), app.env):
        return
    text = list(lines)
    while text and not text[-1].strip():
        text.pop()
    blank = next((index for index, line in enumerate(text) if not line.strip()), len(text))
    summary = " ".join(line.strip() for line in text[:blank])
    rest = text[blank:]
    while rest and not rest[0].strip():
        rest.pop(0)
    lines[:] = [summary if _clean_rest(summary, app.env) else _plain(summary), ""]
    if not rest:
        return
    block = [".. parsed-literal::", ""] + [
        f"    {line}" if line.strip() else "" for line in _plain("\n".join(rest)).split("\n")
    ]
    if not _clean_rest("\n".join(block), app.env):  # what the escapes cannot make plain: as it is
        block = ["::", ""] + [f"    {line}" if line.strip() else "" for line in rest]
    lines += block + [""]


# --------------------------------------------------------------------------
# what the pages link to that is not a page
# --------------------------------------------------------------------------


def _directory_links(app, doctree) -> None:
    """A link to a folder of the repository (``[runs](zhu/runs)``): to the
    folder's README where it is a page, else the folder's path as text (its
    files are in the repository, not on the site).  A link to a path that
    does not exist is left alone, to fail the build."""
    from docutils import nodes
    from sphinx import addnodes

    env = app.env
    for node in list(doctree.findall(addnodes.pending_xref)):
        if node.get("reftype") != "myst" or node.get("refdomain"):
            continue
        target = node["reftarget"].split("#")[0]
        _, path = env.relfn2path(target, env.docname)
        if not target or not Path(path).is_dir():
            continue
        readme = Path(path) / "README.md"
        docname = env.path2doc(str(readme)) if readme.is_file() else None
        if docname:
            node["refdomain"], node["reftarget"] = "doc", docname
            node["reftargetid"] = None
        else:
            node.replace_self(nodes.literal(text=node.astext()))


def _file_named_blocks(app, doctree) -> None:
    """A fenced block named by its file (```` ```reviews.tsv ````) is shown
    as plain text under its file's name."""
    from docutils import nodes

    for block in list(doctree.findall(nodes.literal_block)):
        language = block.get("language", "")
        if "." not in language and "/" not in language:
            continue
        block["language"] = "none"
        caption = nodes.caption(text=language)
        wrapper = nodes.container("", caption, classes=["literal-block-wrapper"], literal_block=True)
        block.replace_self(wrapper)
        wrapper.append(block)
        doctree.set_id(wrapper)


# --------------------------------------------------------------------------
# the command-line reference, from the parser
# --------------------------------------------------------------------------


def command_parsers() -> list:
    """(name, parser) of ``npcomp`` and each of its commands, in the order of
    ``npcomp --help``."""
    import argparse

    from npcomp.cli import build_parser

    parser = build_parser()
    found = [("npcomp", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += [(f"npcomp {name}", sub) for name, sub in action.choices.items()]
    return found


def _cli_directive():
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    class CommandLineReference(SphinxDirective):
        """Each command's ``--help`` as the command prints it (80 columns),
        in a section of its own."""

        def run(self):
            saved = os.environ.get("COLUMNS")
            os.environ["COLUMNS"] = "80"
            try:
                helps = [(name, parser.format_help()) for name, parser in command_parsers()]
            finally:
                if saved is None:
                    os.environ.pop("COLUMNS")
                else:
                    os.environ["COLUMNS"] = saved
            document = self.state.document
            sections = []
            for name, text in helps:
                section = nodes.section()
                section += nodes.title("", "", nodes.literal(name, name))
                section["names"].append(nodes.fully_normalize_name(name))
                document.note_implicit_target(section, section)
                block = nodes.literal_block(text, text, language="none")
                self.set_source_info(block)
                section += block
                sections.append(section)
            return sections

    return CommandLineReference


def _solution_titles(app, doctree):
    """An exercise's solution notebook (``exercises/NAME_solution``) is
    titled as its exercise is (both are written from one source): its page,
    its entry in the navigation and the search results say "solution"."""
    from docutils import nodes

    if not (app.env.docname.startswith("exercises/") and app.env.docname.endswith("_solution")):
        return
    title = next(iter(doctree.findall(nodes.title)), None)
    if title is not None:
        title += nodes.Text(": the solution")


def setup(app):
    app.add_config_value("npcomp_api_packages", [], "env")
    app.connect("builder-inited", write_api_pages)
    app.add_directive("npcomp-command-line", _cli_directive())
    app.connect("autodoc-process-docstring", plain_docstrings)
    app.connect("doctree-read", _directory_links)
    app.connect("doctree-read", _file_named_blocks)
    # before Sphinx's own title collector (priority 500) reads the title
    app.connect("doctree-read", _solution_titles, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
