"""The view of the Netscope model files of ``contend model`` (latency model,
delay sensitivity): registers :mod:`contend.models.views`, their tables and
figures.  The models package is imported on first use (it loads scipy)."""

from __future__ import annotations

from ..view import View


def _recognises(schema) -> bool:
    from ...models.modelfile import SCHEMAS

    return schema in SCHEMAS


def _load(paths) -> list:
    from ...models.modelfile import load_model_file

    return [load_model_file(p) for p in paths]


def _report(path, args) -> str:
    from ...models.views import render_model

    return render_model(_load([path])[0], path, args.format)


def _html(items, page) -> list:
    from ...models.views import html_section

    return [html_section(doc, str(path)) for path, doc in items]


VIEW = View(
    "model", recognises=_recognises, load=_load, report=_report, html=_html, file_noun="model"
)
