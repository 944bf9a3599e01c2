"""Reports of contend's documents: tables, figures, HTML pages and the views.

* :mod:`.tables` (``contend network`` / ``load`` results), :mod:`.jobtables`
  (``contend jobs`` results), :mod:`.published` (the GPCNeT paper's Table 2):
  unrounded pandas tables;
* :mod:`.plots`: the figures (matplotlib);
* :mod:`.html`: building blocks of the self-contained HTML page;
* :mod:`.views`: one module per document kind (what ``contend report``,
  ``html`` and ``plot`` make of it), found by :mod:`.registry`.

Nothing is imported here: the document modules import from this package, and
the views import the document modules.
"""
