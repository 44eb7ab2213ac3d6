"""The manual's reference pages, generated from the studio's registries at build time (an mkdocs hook).

Why generated: a view, a command, a format, a provider or a setting is listed once, in its registry
(`views.VIEWS`, the CLI parser built from `cli.COMMAND_MODULES`, `formats.REGISTRY`,
`providers.adapters.ADAPTERS`, `limits.LIMITS` and `settings.SETTINGS`); the manual reads them, so it
cannot fall behind. `reference_pages()` returns the pages as Markdown (the docs tests read it);
`on_files` hands them to mkdocs as generated files, so nothing generated is written into `docs/`.

Text from the registries is put in tables and code spans as it is written; only the characters that
would break a Markdown table cell (``|`` and line breaks) are escaped.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the reference pages, by their path under docs/
VIEWS_PAGE = "reference/views.md"
COMMANDS_PAGE = "reference/commands.md"
FORMATS_PAGE = "reference/formats.md"
PROVIDERS_PAGE = "reference/providers.md"
SETTINGS_PAGE = "reference/settings.md"
#: each view's columns on the demo store, written by tests/views/test_show.py (EDUART_WRITE_VIEW_COLUMNS=1)
VIEW_COLUMNS = Path(__file__).resolve().parent / "view_columns.json"


def cell(text: object) -> str:
    """One Markdown table cell: pipes escaped, lines joined."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    """A code span that holds backticks too (CommonMark: a longer fence)."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def views_page() -> str:
    from eduart_core.views import VIEWS

    lines = ["# Views", "",
             "Every table and chart of the pages is a named view (`eduart_core.views.VIEWS`). Print one with",
             "`python -m eduart_core show NAME [--format json|csv] [--caption]`, or from Python with",
             "`eduart_core.run_view(NAME, source, selection, **options)`. Options are given to `show` as",
             "`--option NAME=VALUE`. Generated from the registry: "
             f"{len(VIEWS)} views.", ""]
    recorded = json.loads(VIEW_COLUMNS.read_text(encoding="utf-8")) if VIEW_COLUMNS.exists() else {}
    lines += ["The columns are those each view returns on the demo store, recorded by the test that runs",
              "every view (`tests/views/test_show.py`), which fails when a view's columns change without them.", ""]
    rows = []
    for name, spec in VIEWS.items():
        options = ", ".join(code(f"{key}={value!r}") for key, value in spec.options.items()) or "none"
        columns = ", ".join(code(column) for column in recorded[name]) if name in recorded else "not recorded yet"
        rows.append([code(name), cell(spec.shows), cell(spec.summary), options, columns])
    return "\n".join(lines + _table(["view", "backs", "what it is", "options (default)", "columns"], rows)) + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand of ``parser``, in the order they were added."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def _argument_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        name = ", ".join(action.option_strings) or action.dest
        helped = formatter._expand_help(action) if action.help else ""
        rows.append([code(name), cell(helped.replace(str(ROOT) + os.sep, ""))])
    return rows


def _command_section(prefix: str, name: str, summary: str, parser: argparse.ArgumentParser,
                     level: int) -> list[str]:
    full = f"{prefix} {name}".strip()
    lines = [f"{'#' * level} `{full}`", "", cell(summary or parser.description or ""), "",
             "```text", parser.format_usage().strip(), "```", ""]
    rows = _argument_rows(parser)
    if rows:
        lines += _table(["argument", "what it does"], rows) + [""]
    for sub_name, sub_help, sub in _subcommands(parser):
        lines += _command_section(full, sub_name, sub_help, sub, min(level + 1, 4))
    return lines


def commands_page() -> str:
    from eduart_core.cli import COMMAND_MODULES, build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps usage lines to the terminal: one width for every build
    commands = _subcommands(build_parser())
    lines = ["# Commands", "",
             "`python -m eduart_core --help` lists every command; `python -m eduart_core COMMAND --help` its",
             "arguments. Generated from the parser the command modules register "
             f"(`eduart_core.cli.COMMAND_MODULES`: {len(COMMAND_MODULES)} modules, {len(commands)} commands).", ""]
    lines += _table(["command", "what it does"], [[f"[`{n}`](#{_anchor(n)})", cell(h)] for n, h, _ in commands])
    lines.append("")
    for name, summary, parser in commands:
        lines += _command_section("", name, summary, parser, 2)
    return "\n".join(lines) + "\n"


def _anchor(command: str) -> str:
    """The id mkdocs' toc gives the heading `` `command` `` (lower case, hyphens kept)."""
    return command.lower()


def formats_page() -> str:
    from eduart_core import formats

    lines = ["# Answer formats", "",
             "The answer formats of the registry (`eduart_core.formats.REGISTRY`), each one module under",
             "`eduart_core/formats/` with its prompt rules in `prompts/formats/<format>.md`. Generated from",
             f"the registry: {len(formats.REGISTRY)} formats.", ""]
    rows = []
    for fmt in formats.REGISTRY:
        module = inspect.getdoc(sys.modules[type(fmt).__module__]) or ""
        rows.append([code(fmt.name), cell(fmt.label), "partial credit" if fmt.partial_credit else "whole",
                     cell(fmt.level_rule), cell(module.split("\n\n")[0])])
    lines += _table(["format", "label", "IRT levels", "score levels", "what it is"], rows)
    return "\n".join(lines) + "\n"


def providers_page() -> str:
    from eduart_core.providers.adapters import ADAPTERS

    lines = ["# Providers", "",
             "The provider table (`eduart_core.providers.adapters.ADAPTERS`): what each provider reads and the",
             "package it needs. Keys come from the environment, a `.env` file in the project folder, or",
             "`.streamlit/secrets.toml`, and are never written to the store, the run journals, logs or pages.",
             "Models are listed in `eduart_core/providers/models.toml`; `EDUART_MODELS` points at a TOML",
             f"file of your own. Generated from the table: {len(ADAPTERS)} providers.", ""]
    rows = []
    for adapter in ADAPTERS.values():
        keys = " or ".join(" + ".join(code(name) for name in group) for group in adapter.secrets) or "none"
        address = ", ".join(code(name) for name in adapter.base_url_env) or "none"
        rows.append([code(adapter.name), keys, cell(adapter.needs), address,
                     code(adapter.pip_name) if adapter.pip_name else "none",
                     "yes" if adapter.adhoc else "no"])
    header = ["provider", "keys it reads", "what to set", "server address (a model without its own `base_url`)",
              "package", "ad-hoc model (`run --provider`)"]
    return "\n".join(lines + _table(header, rows)) + "\n"


def settings_page() -> str:
    from eduart_core.limits import LIMITS, MAX_JSON_DEPTH
    from eduart_core.settings import SETTINGS

    lines = ["# Settings and limits", "",
             "Every setting is an environment variable, read by the process that uses it. Generated from",
             "`eduart_core.limits.LIMITS` and `eduart_core.settings.SETTINGS`.", "",
             "## Limits", "",
             "Every limit has an environment variable; messages name the variable when a limit is hit. Values",
             "are read on every use, so a long-running server picks up a change without a restart.", ""]
    lines += _table(["variable", "default", "unit", "what it bounds"],
                    [[code(s.env), f"{s.default:g}", cell(s.unit), cell(s.doc)] for s in LIMITS.values()])
    lines += ["", f"JSON nested deeper than {MAX_JSON_DEPTH} levels is refused (not configurable).", ""]
    areas = list(dict.fromkeys(s.area for s in SETTINGS))
    for area in areas:
        lines += [f"## {area.capitalize()}", ""]
        rows = [[code(s.env), cell(s.default), cell(s.doc) + (" (set by the studio itself)" if s.internal else "")]
                for s in SETTINGS if s.area == area]
        lines += _table(["variable", "when unset", "what it sets"], rows) + [""]
    return "\n".join(lines)


def reference_pages() -> dict[str, str]:
    """Every generated page, by its path under docs/."""
    if str(ROOT) not in sys.path:  # `mkdocs build` from the checkout: the library is the checkout's
        sys.path.insert(0, str(ROOT))
    return {VIEWS_PAGE: views_page(), COMMANDS_PAGE: commands_page(), FORMATS_PAGE: formats_page(),
            PROVIDERS_PAGE: providers_page(), SETTINGS_PAGE: settings_page()}


def on_files(files, config):
    """mkdocs hook: add the generated pages to the site's files (nothing is written into docs/)."""
    from mkdocs.structure.files import File

    for path, text in reference_pages().items():
        files.append(File.generated(config, path, content=text))
    return files
