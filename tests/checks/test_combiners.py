"""topodiag/model/combiners.py: the "A or B" views IB006 and IB007 read (roce_gids, ib_links), made
from whichever sources were given, per file of a source given as several files, with the source and
file their evidence names; and the layering (the model does not import the engine or the checks)."""

from __future__ import annotations

import ast
from pathlib import Path

from topodiag import parsers
from topodiag.engine import Each, load_catalog, load_checks, run
from topodiag.model import combiners
from topodiag.model.combiners import COMBINED, IbLinks, RoceGids, combine
from topodiag.records import Each as RecordsEach

REPO = Path(__file__).resolve().parents[2]
PODS = "fixtures/show_gids/show_gids-roce-macvlan-pods-01.txt"
EIGHT_NIC = "fixtures/show_gids/show_gids-roce-8nic-01.txt"
GID_FRAGMENT = "fixtures/ibv_devinfo/ibv_devinfo-v-gid-fragment-roce-bond-01.txt"
SDR = "fixtures/ibnetdiscover/ibnetdiscover-manpage-example-sdr-1x-links-01.txt"
LONE_CA = "fixtures/ibnetdiscover/ibnetdiscover-gb200-single-ca-no-links-01.txt"
COULD_BE = "fixtures/iblinkinfo/iblinkinfo-hdr-quantum-edr-hosts-could-be-01.txt"


def parsed(rel: str):
    source = Path(rel).parent.name
    text = (REPO / rel).read_text(encoding="utf-8", errors="replace")
    return parsers.get(source).parse(parsers.blank_provenance_header(text))


def test_nothing_to_combine():
    assert combine({}) == {}
    assert combine({"ibstat": object(), "show_gids": None, "iblinkinfo": Each.of([])}) == {}
    assert set(COMBINED) == set(combiners.names()) == {"roce_gids", "ib_links"}


def test_each_is_one_record_for_every_stage():
    assert Each is RecordsEach
    from topodiag.engine.runner import Each as RunnerEach

    assert RunnerEach is RecordsEach


# -- roce_gids -----------------------------------------------------------------------------------

def test_roce_gids_prefers_show_gids_then_ibv_devinfo():
    gids, devinfo = parsed(PODS), parsed(GID_FRAGMENT)
    view = combine({"show_gids": gids, "ibv_devinfo": devinfo, "sysfs_infiniband": object()})["roce_gids"]
    assert isinstance(view, RoceGids) and (view.source, view.file) == ("show_gids", None)
    assert [t.label for t in view.tables] == ["table 1", "table 2"]  # two pods, two places an index must agree
    view = combine({"ibv_devinfo": devinfo})["roce_gids"]
    assert view.source == "ibv_devinfo" and [t.label for t in view.tables] == [""]
    [(port, gids_of_port)] = view.tables[0].ports.items()
    assert {g.version for g in gids_of_port} == {"v1", "v2"}


def test_roce_gids_marks_the_last_port_of_a_cut_paste():
    [table] = combine({"show_gids": parsed(EIGHT_NIC)})["roce_gids"].tables
    assert table.partial == (list(table.ports)[-1],)


def test_roce_gids_per_file_names_each_file():
    many = Each.of([(parsed(PODS), "a/show_gids.txt"), (parsed(EIGHT_NIC), "b/show_gids.txt")])
    view = combine({"show_gids": many, "ibv_devinfo": parsed(GID_FRAGMENT)})["roce_gids"]
    assert isinstance(view, Each) and [f for _, f in view.items] == ["a/show_gids.txt", "b/show_gids.txt"]
    assert [v.file for v, _ in view.items] == ["a/show_gids.txt", "b/show_gids.txt"]


def test_ib006_runs_once_per_file_and_its_evidence_names_the_file():
    load_checks()
    inputs = {"show_gids": Each.of([(parsed(PODS), "pods.txt"), (parsed(EIGHT_NIC), "eight.txt")])}
    out = run(load_catalog(REPO / "rules", examples=False), {**inputs, **combine(inputs)}, select="IB006")
    assert [f.severity.name for f in out.findings] == ["WARNING", "INFO"]
    assert [{e.file for e in f.evidence} for f in out.findings] == [{"pods.txt"}, {"eight.txt"}]
    assert {e.source for f in out.findings for e in f.evidence} == {"show_gids"}


def test_a_combined_input_not_made_is_explained_by_its_sources():
    load_checks()
    catalog = load_catalog(REPO / "rules", examples=False)
    reason = {s.code: s.reason for s in run(catalog, {}, select="IB006").skipped}["IB006"]
    assert reason == "needs nic.gid_table (from show_gids, ibv_devinfo or sysfs_infiniband): not given"
    reason = {s.code: s.reason for s in run(catalog, {"show_gids": parsed(PODS)}, select="IB006").skipped}["IB006"]
    assert "made from show_gids by topodiag.model.combiners.combine, which was not run" in reason


# -- ib_links ------------------------------------------------------------------------------------

def test_ib_links_from_iblinkinfo_else_ibnetdiscover():
    view = combine({"iblinkinfo": parsed(COULD_BE)})["ib_links"]
    assert isinstance(view, IbLinks) and view.source == "iblinkinfo" and view.isolated == ()
    assert any(link.could_be for link in view.links)
    view = combine({"ibnetdiscover": parsed(SDR)})["ib_links"]
    assert view.source == "ibnetdiscover" and view.not_active == ()
    assert sorted(link.width_lanes for link in view.links if link.width_lanes and link.width_lanes < 4) == [1, 1]


def test_ib_links_each_link_once_though_both_ends_print_it():
    view = combine({"ibnetdiscover": parsed(SDR)})["ib_links"]
    ends = [frozenset((link.a, link.b)) for link in view.links]
    assert len(ends) == len(set(ends))


def test_ib_links_takes_isolated_cas_from_ibnetdiscover_beside_iblinkinfo():
    view = combine({"iblinkinfo": parsed(COULD_BE), "ibnetdiscover": parsed(LONE_CA)})["ib_links"]
    assert view.source == "iblinkinfo" and [ca.name for ca in view.isolated] == ["dgx-gb200-n01-c1 HCA-1"]


def test_ib_links_per_pair_of_files():
    links = Each.of([(parsed(COULD_BE), "l1.txt"), (parsed(COULD_BE), "l2.txt")])
    view = combine({"iblinkinfo": links, "ibnetdiscover": parsed(LONE_CA)})["ib_links"]
    assert isinstance(view, Each) and [(v.source, v.file, f) for v, f in view.items] == [
        ("iblinkinfo", "l1.txt", "l1.txt"), ("iblinkinfo", "l2.txt", "l2.txt")]
    view = combine({"ibnetdiscover": Each.of([(parsed(SDR), "s.txt"), (parsed(LONE_CA), "g.txt")])})["ib_links"]
    assert [(v.source, v.file, len(v.isolated)) for v, _ in view.items] == [("ibnetdiscover", "s.txt", 0),
                                                                            ("ibnetdiscover", "g.txt", 1)]


# -- layering ------------------------------------------------------------------------------------

def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_combiners_stay_below_the_engine_and_the_checks():
    imports = _imports(REPO / "topodiag" / "model" / "combiners.py")
    assert not [m for m in imports if "engine" in m or "checks" in m], imports
    assert _imports(REPO / "topodiag" / "records.py") <= {"__future__", "dataclasses", "typing"}
