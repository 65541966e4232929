"""A check function is named after what it checks: its rule's code (`ib011`) or slug
(`roce_gid_index` for roce-gid-index), so that a grep for either finds it (issue 32: IB011's check
was named ib009, the code of the link-flap rule)."""

from __future__ import annotations

from topodiag.engine.catalog import load_catalog
from topodiag.engine.registry import load_checks


def test_every_check_is_named_by_its_code_or_slug():
    catalog = {rule.code: rule for rule in load_catalog(examples=False)}
    wrong = []
    for code, spec in sorted(load_checks().items()):
        rule = catalog.get(code)
        names = {code.lower()} | ({rule.slug.replace("-", "_")} if rule else set())
        if spec.func.__name__ not in names:
            wrong.append(f"{spec.where} checks {code}: name it {' or '.join(sorted(names))}")
    assert not wrong, "\n".join(wrong)
