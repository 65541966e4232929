"""Node sets are counted before they are expanded, and node names checked before they reach a
command (issue 16: 3 KB of brackets expanded to a million nodes; a node named `-o...` reached ssh)."""

from __future__ import annotations

import resource
import time

import pytest

from topodiag.actions.nodenames import MAX_NODES, NodeSetError, check_node_name, count, expand


@pytest.mark.parametrize("text, n", [
    ("node[001-999]", 999), ("a[1-10]-b[1-10]", 100), ("a[1-5,7,9-11/2]", 8), ("a,b,c", 3),
    ("gpu[1-64]!gpu7", 65), ("x", 1), ("rack[1-4]-gpu[01-16],login[1-2]", 66),
])
def test_counting_from_the_text(text, n):
    assert count(text) == n
    if "!" not in text:
        assert len(expand(text)) == n


@pytest.mark.parametrize("text, says", [
    ("n[1-1000][1-1000]", f"names more than {MAX_NODES} nodes"),
    ("n[1-1000000]", "is 1000000 values; at most 100000 in one range"),
    ("n[0-999999999999999999]", "at most 100000 in one range"),
    ("n[1-60000],m[1-60000]", f"names more than {MAX_NODES} nodes"),
    ("n[1-30000,40000-60000]," * 3, f"names more than {MAX_NODES} nodes"),
    ("n[" + ",".join(str(i) for i in range(0, 300000, 2)) + "]", "characters; at most 65536"),
])
def test_too_many_nodes_are_refused_before_expanding(text, says):
    started = time.process_time()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(NodeSetError) as info:
        expand(text)
    assert says in str(info.value) and "\n" not in str(info.value)
    assert time.process_time() - started < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KB: nothing expanded


def test_a_few_bytes_that_name_a_million_nodes():
    for text in ("n" + "[0-9]" * 6, "n[1-100]-[1-100]-[1-100]", ",".join(f"r{i}[1-1000]" for i in range(1000))):
        with pytest.raises(NodeSetError, match="names more than 100000 nodes"):
            expand(text)


def test_groups_are_refused_where_a_file_names_the_nodes():
    with pytest.raises(NodeSetError, match="names a @group"):
        expand("@gpu", groups=False)


@pytest.mark.parametrize("name", ["gpu01", "gpu-01.cluster.local", "10.0.0.7", "node_7", "a" * 253])
def test_host_names_pass(name):
    assert check_node_name(name) == name


@pytest.mark.parametrize("name, says", [
    ("-oProxyCommand=touch /tmp/x", "starts with '-'"),
    ("a;touch x", "has ';'"), ("$(id)", "has '$'"), ("a b", "has ' '"), ("gpu\x1b[31m", "has '\\x1b'"),
    ("gpu`id`", "has '`'"), ("a" * 254, "longer than 253"), ("", "empty"), ("gpu\u202e1", "has '\\u202e'"),
    (".hidden", "has '.'"),
])
def test_bad_node_names_are_refused_in_one_line(name, says):
    with pytest.raises(NodeSetError) as info:
        check_node_name(name)
    msg = str(info.value)
    assert says in msg and "\n" not in msg and "\x1b" not in msg and "\u202e" not in msg
