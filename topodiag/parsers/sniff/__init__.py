"""The sniffers: one module per source, named as SOURCES names it, each holding `sniff(text) -> float`
and only what it needs (its regexes, small helpers). Detection (topodiag/parsers/__init__.py) imports
these, not the parsers: a sniff module compiles a few patterns, a parser all of its own and its
dataclasses. Each parser re-exports its sniff (`from .sniff.<source> import sniff`), and a pattern or
helper both the sniff and the parse use is defined here once and imported by the parser.

Nothing here imports a parser module, ib_records, _tool_failures or the catalogues at import time
(tests/architecture/test_sniff_light.py holds it); `_common` holds what several sniffs share.
"""
