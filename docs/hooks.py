"""mkdocs hook: the nav lists planned pages; build with the ones that exist.

Several engineers write pages in parallel. mkdocs.yml names every planned
page; this hook removes nav entries whose file is not in docs/ yet (logged
at INFO level) and turns Markdown links to those pages into plain text, so a
strict build passes before they land and picks them up as soon as they do.
Links to any other missing page still fail the strict build.
"""
from __future__ import annotations

import logging
import os
import re

log = logging.getLogger("mkdocs.hooks.planned_pages")
_pending: set[str] = set()
_LINK = re.compile(r"\[([^\]]+)\]\(((?:\.\./)*)([\w./-]+\.md)(#[^)]*)?\)")


def _prune(items, docs_dir):
    kept = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                sub = _prune(value, docs_dir)
                if sub:
                    kept.append({title: sub})
                continue
            if isinstance(value, str) and value.endswith(".md") and not os.path.exists(os.path.join(docs_dir, value)):
                _pending.add(value)
                log.info("page not written yet, left out of the nav: %s", value)
                continue
        elif isinstance(item, str) and item.endswith(".md") and not os.path.exists(os.path.join(docs_dir, item)):
            _pending.add(item)
            continue
        kept.append(item)
    return kept


def on_config(config):
    if config.nav:
        config.nav = _prune(config.nav, config.docs_dir)
    return config


def on_page_markdown(markdown, page, config, files):
    if not _pending:
        return markdown
    here = os.path.dirname(page.file.src_uri)

    def repl(m):
        target = os.path.normpath(os.path.join(here, m.group(2) + m.group(3))).replace(os.sep, "/")
        if target in _pending:
            return m.group(1)
        return m.group(0)

    return _LINK.sub(repl, markdown)
