"""The model's vocabulary (topodiag/model/schema.py) against what the code does.

- Every fact a merge writes is declared, with the module that writes it: the model is built from
  every parser fixture of a merged source alone (so each fact has one writer), and from every host
  scenario (sources together); each node's, edge's, port's, NVLink's and observation's keys are
  compared with the schema.
- Every capability a merge module or INPUT_FACTS names is declared, and every declared one is given
  by some input.
- The checks read node and edge facts by name (`.get("fact")`, `["fact"]`): a scan of topodiag/checks/
  compares those names with the vocabulary. Today's names that are not model facts (params, parse
  records, values of hits) are listed in checks_undeclared_keys.json; that list may only shrink.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.model import schema
from topodiag.parsers.base import blank_provenance_header
from topodiag.model.combiners import COMBINED
from topodiag.model.merge import build, capability_sources, merge_modules
from topodiag.records import ParsedInput
from tests.fixtures_index import parser_fixtures

ROOT = Path(__file__).resolve().parents[2]
RATCHET = Path(__file__).with_name("checks_undeclared_keys.json")
DERIVED = ("build", "paths")  # merge.build itself (the host node), paths.check_nvlink_counts


def _module_of() -> dict[str, str]:
    return {s: m.__name__.rsplit(".", 1)[1] for m in merge_modules() for s in m.SOURCES}


def _keys(topo):
    """(where, key) for every fact in the model, at every depth the schema lists."""
    for attrs in topo._node.values():
        kind = attrs.get("kind")
        for k in attrs:
            yield ("node", kind), k
        for port in (attrs.get("ports") or {}).values():
            for k in port:
                yield ("port", None), k
        nvlink = attrs.get("nvlink")
        if isinstance(nvlink, dict):
            for k in nvlink:
                yield ("nvlink", None), k
            for link in nvlink.get("links") or ():
                for k in link:
                    yield ("nvlink_link", None), k
        for obs in attrs.get("observations") or ():
            for k in obs:
                yield ("observation", obs.get("source")), k
            yield from _item_keys(obs)
    for _a, _b, kind, data in topo._iter_edges():
        for k in data:
            yield ("edge", kind), k


def _item_keys(obs):
    """(("observation_item", key), fact) for the records an observation holds under a key: a list of
    dicts, or one dict of facts (not a dict of names such as `env` or `transports`)."""
    for k, value in obs.items():
        if isinstance(value, dict) and k in schema.OBSERVATION_ITEM_FACTS:
            value = [value]
        if isinstance(value, list):
            for item in value:
                for fact in (item if isinstance(item, dict) else ()):
                    yield ("observation_item", k), fact


def _declared(where, key):
    """The Fact (or True for a name without a Fact record) the schema declares there, else None."""
    level, kind = where
    if key in schema.COMMON and level in ("node", "edge"):
        return True
    table = {"node": schema.NODE_KINDS, "edge": schema.EDGE_KINDS}.get(level)
    if table is not None:
        return table[kind].facts.get(key) if kind in table else None
    if level == "observation":
        return True if key in schema.OBSERVATION_FACTS.get(kind, ()) else None
    if level == "observation_item":
        return True if key in schema.OBSERVATION_ITEM_FACTS.get(kind, ()) else None
    return {"port": schema.PORT_FACTS, "nvlink": schema.NVLINK_FACTS,
            "nvlink_link": schema.NVLINK_LINK_FACTS}[level].get(key)


@pytest.fixture(scope="module")
def built_alone():
    """[(module, topology)] for every parser fixture of a merged source, each built alone."""
    module_of = _module_of()
    out = []
    for fx in parser_fixtures():
        if fx.source not in module_of or "parse_error" in fx.expected():
            continue
        result = parsers.get(fx.source).parse(blank_provenance_header(fx.text()))
        out.append((module_of[fx.source], build([ParsedInput(fx.source, str(fx.path), result)])))
    return out


def test_every_fact_a_merge_writes_is_declared_with_its_writer(built_alone):
    assert len(built_alone) > 150  # the fixtures of every merged source
    undeclared, unattributed = set(), set()
    for module, topo in built_alone:
        for where, key in _keys(topo):
            fact = _declared(where, key)
            if fact is None:
                undeclared.add(f"{where[0]} {where[1] or ''}.{key} (written by {module})")
            elif isinstance(fact, schema.Fact) and module not in fact.by and not set(DERIVED) & set(fact.by):
                unattributed.add(f"{where[0]} {where[1] or ''}.{key}: {module} writes it, schema says {fact.by}")
    assert not undeclared, "facts no schema entry declares:\n" + "\n".join(sorted(undeclared))
    assert not unattributed, "\n".join(sorted(unattributed))


def test_the_host_scenarios_write_only_declared_facts():
    from topodiag.pipeline import survey

    hosts = sorted(p for p in (ROOT / "fixtures" / "hosts").iterdir() if p.is_dir())
    assert len(hosts) >= 10
    undeclared = set()
    for host in hosts:
        for where, key in _keys(survey([str(host)]).topology):
            if _declared(where, key) is None:
                undeclared.add(f"{where[0]} {where[1] or ''}.{key} ({host.name})")
    assert not undeclared, "\n".join(sorted(undeclared))


def test_each_declared_writer_is_a_merge_module():
    modules = set(_module_of().values()) | set(DERIVED)
    facts = [f for k in (*schema.NODE_KINDS.values(), *schema.EDGE_KINDS.values()) for f in k.facts.values()]
    facts += [*schema.PORT_FACTS.values(), *schema.NVLINK_FACTS.values(), *schema.NVLINK_LINK_FACTS.values()]
    assert not [(f.name, f.by) for f in facts if not f.by or set(f.by) - modules]
    assert set(schema.OBSERVATION_FACTS) <= set(_module_of())


def test_capabilities_are_declared_and_each_is_given_by_some_input():
    named = {}
    for mod in merge_modules():
        for field in ("PROVIDES", "FILLS", "NEEDS"):
            for cap in getattr(mod, field, ()):
                named.setdefault(cap, []).append(f"{mod.__name__}.{field}")
    for source, caps in schema.INPUT_FACTS.items():
        for cap in caps:
            named.setdefault(cap, []).append(f"INPUT_FACTS[{source}]")
    assert not {c: w for c, w in named.items() if c not in schema.CAPABILITIES}
    assert set(capability_sources()) == set(schema.CAPABILITIES)  # none declared that nothing gives
    assert set(schema.INPUT_FACTS) <= set(parsers.names()) | set(COMBINED)
    assert all(schema.is_capability(c) for c in schema.CAPABILITIES)


def test_a_capability_is_given_by_several_sources():
    table = capability_sources()
    assert table["nic.port_state"] == ("ibstat", "ibv_devinfo", "ibstatus", "rdma_link", "sysfs_infiniband")
    assert table["gpu.nvlinks"] == ("nvidia_smi_nvlink_s", "nvml")
    assert table["nccl.env"] == ("nccl_debug", "nccl_env")
    assert table["kernel.messages"] == ("kernel_log",)


_KEY = re.compile(r"""(?:\.get\(|\[)\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")


def _check_keys() -> dict[str, list[str]]:
    keys: dict[str, set[str]] = {}
    for path in sorted((ROOT / "topodiag" / "checks").glob("*.py")):
        for m in _KEY.finditer(path.read_text(encoding="utf-8")):
            keys.setdefault(m.group(1), set()).add(path.name)
    return {k: sorted(v) for k, v in sorted(keys.items())}


def test_checks_read_only_declared_facts_a_ratchet():
    """A name a check reads by key is a model fact, or one of today's other names (params, parse
    records, hit values), which may only go: declare a new fact in topodiag/model/schema.py."""
    vocabulary = schema.vocabulary()
    undeclared = {k: files for k, files in _check_keys().items() if k not in vocabulary}
    allowed = json.loads(RATCHET.read_text())
    new = sorted(set(undeclared) - set(allowed))
    assert not new, f"checks read names the schema does not declare: {[(k, undeclared[k]) for k in new]}"
    gone = sorted(set(allowed) - set(undeclared))
    assert not gone, f"no longer read or now declared: remove {gone} from {RATCHET.name}"
