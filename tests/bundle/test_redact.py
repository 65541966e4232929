"""Redaction (topodiag/bundle/redact/): every fixture and host bundle, redacted with one Redactor.

(a) no original identifier survives: the originals are collected here with this file's own regexes,
    not the module's;
(b) a value in two fixtures gets one token;
(c) each source's parser reads the redacted text to the same result, identifier fields aside (and
    those map one-to-one);
(d) a host bundle redacted into a directory gives `check` the same findings;
(e) what is not an identifier is left alone.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.parsers import ParseError, blank_provenance_header, get, to_jsonable
from topodiag.bundle.redact import RedactionError, Redactor, _is_word, hostnames_in, redact_bundle_dir, redact_tree
from tests.fixtures_index import FIXTURES as FIXTURES_DIR, parser_fixtures
from tests.host_fixture import HOSTS, sha256

FIXTURES = parser_fixtures()
SCENARIOS = sorted(p.name for p in HOSTS.iterdir() if p.is_dir())
SYSFS_TREES = sorted(p.name for p in (FIXTURES_DIR / "sysfs").iterdir() if p.is_dir()) \
    if (FIXTURES_DIR / "sysfs").is_dir() else []

# -- this test's own view of what an identifier looks like ---------------------------------------

HEX = "0-9A-Fa-f"
IPV4_T = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?!\.?\d)")
IPV6_T = re.compile(rf"(?<![{HEX}:])((?:[{HEX}]{{0,4}}:){{2,7}}(?:\d{{1,3}}(?:\.\d{{1,3}}){{3}}|[{HEX}]{{1,4}}))(?![{HEX}:])")
MAC_T = re.compile(rf"(?<![{HEX}:])([{HEX}]{{2}}(?::[{HEX}]{{2}}){{5}})(?![{HEX}:])")
UUID_T = re.compile(rf"[{HEX}]{{8}}-[{HEX}]{{4}}-[{HEX}]{{4}}-[{HEX}]{{4}}-[{HEX}]{{12}}")
GUID_T = [re.compile(p) for p in (
    rf"(?i)guid\"?\s*[:=]\s*\"?(?:0x)?([{HEX}]{{1,16}})(?![{HEX}:])",    # ibstat, ibnetdiscover, XML, JSON
    rf"(?i)guid:\s*([{HEX}]{{4}}(?::[{HEX}]{{4}}){{3}})",               # ibv_devinfo
    rf"\"[HSR]-([{HEX}]{{1,16}})\"",                                    # ibnetdiscover names
    rf"\]\(([{HEX}]{{1,16}})\)",                                        # ibnetdiscover port GUIDs
    rf"(?m)^\s*0x([{HEX}]{{16}})\s",                                    # iblinkinfo
    rf"==>\s*0x([{HEX}]{{16}})",
    rf"(?m)^\s*(?:CA|Ca|Switch|Router)\s*:\s*0x([{HEX}]{{16}})",
    rf"(?:CA|SW|RT)\s+\d+\s+\d+\s+0x([{HEX}]{{16}})",                   # ibnetdiscover -p
    rf"node ([{HEX}]{{16}}) port ([{HEX}]{{16}})",
    rf"guid 0x([{HEX}]+)\)",
    rf"-S 0x([{HEX}]{{16}})",
)]
SERIAL_T = [re.compile(r"(?i)\"serial\"\s*:\s*\"([^\"]+)\""), re.compile(r"(?im)^\s*Serial Number\s*:\s*(\S+)\s*$")]
HOST_T = [re.compile(p) for p in (
    r"(?m)^(?:\[\d+\]\s*)?(?:\d+:\s+)?([A-Za-z0-9][\w.-]*):\d+:\d+ \[\d+\]",  # NCCL log prefix
    r"\bPid\s+\d+\s+on\s+([A-Za-z0-9][\w.-]*)\s+device\s+\d+",              # nccl-tests device line
    r"\"([A-Za-z0-9][\w.-]*) (?:HCA-\d+|mlx\d+_\d+)\"",                       # IB node descriptions
    r"(?m)^(?:CA|Router):\s+([A-Za-z0-9][\w.-]*) (?:HCA-\d+|mlx\d+_\d+):",
    r"'([A-Za-z0-9][\w.-]*) HCA-\d+'",
    r"MF0;([^:;\s\"]+):",                                                     # switch names
    r"(?m)^\s*(?:\x1b\[[\d;]*m)?\[?[\w.-]+@([A-Za-z0-9][\w.-]*?)(?:\x1b\[[\d;]*m)?[:\s\]]",  # prompts
    r"\"hostname\"\s*:\s*\"([^\"]+)\"",
)]
NOT_HOSTS = {"localhost", "hostname"}  # "hostname mlx4_0" is the ArchWiki's placeholder, not a host
LID_T = [re.compile(p) for p in (
    r"(?im)^\s*(?:Base|SM) lid:\s*(\d+)\s*$",
    r"(?m)^\s*(?:sm_lid|port_lid):\s*(\d+)\s*$",
    r"(?m)^\s*(?:base lid|sm lid):\s*(0x[0-9a-f]+)\s*$",
    r"# lid (\d+) lmc",
    r"\" lid (\d+) \d*x",
    r"LID (\d+)$",
    r"\"(?:lid|sm_lid)\": (\d+)",
)]


def ipv4_ids(text: str) -> set[str]:
    out = set()
    for raw in IPV4_T.findall(text):
        try:
            v = int(ipaddress.IPv4Address(raw))
        except ValueError:
            continue
        inv = ~v & 0xFFFFFFFF
        if v == 0 or v >> 24 == 127 or 224 <= v >> 24 <= 239 or (v >> 24 == 255 and inv & (inv + 1) == 0):
            continue  # unspecified, loopback, multicast, netmask: identify nothing
        out.add(raw)
    return out


def ipv6_ids(text: str) -> set[int]:
    out = set()
    for raw in IPV6_T.findall(text):
        if "::" not in raw and raw.count(":") != 7 and "." not in raw:
            continue
        if "." not in raw and max(len(g) for g in raw.split(":")) < 3:
            continue
        try:
            addr = ipaddress.IPv6Address(raw)
        except ValueError:
            continue
        if not (addr.is_unspecified or addr.is_loopback or addr.is_multicast):
            out.add(int(addr))
    return out


def guid_ids(text: str) -> set[int]:
    out = set()
    for rx in GUID_T:
        for m in rx.finditer(text):
            for g in m.groups():
                v = int(g.replace(":", ""), 16)
                if v not in (0, 0xFFFFFFFFFFFFFFFF):
                    out.add(v)
    return out


def host_ids(text: str) -> set[str]:
    out = set()
    for rx in HOST_T:
        out.update(h.rstrip(".") for h in rx.findall(text))
    return {h for h in out if h not in NOT_HOSTS and not h.startswith("<") and not re.fullmatch(r"[\d.]+", h)
            and not re.fullmatch(r"host-\d{4}", h)}


def guid_forms(v: int) -> list[str]:
    full = f"{v:016x}"
    return [full, f"{v:x}", ":".join(full[i:i + 4] for i in range(0, 16, 4))]


def survivors(original: str, redacted: str, hosts: set[str]) -> list[str]:
    """Every identifier of `original` (by this file's regexes) still in `redacted`."""
    low = redacted.lower()
    left = [ip for ip in ipv4_ids(original) if re.search(rf"(?<![\d.]){re.escape(ip)}(?!\.?\d)", redacted)]
    left += [str(ipaddress.IPv6Address(v)) for v in ipv6_ids(original) & ipv6_ids(redacted)]
    for v in guid_ids(original):
        left += [f for f in guid_forms(v) if len(f) >= 6 and re.search(rf"(?<![0-9a-f:]){f}(?![0-9a-f])", low)]
    left += [u for u in UUID_T.findall(original) if u.lower() in low]
    left += [m.lower() for m in MAC_T.findall(original)
             if m.lower() in low and m.lower() not in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff")]  # no identifiers
    for rx in SERIAL_T:
        left += [s for s in rx.findall(original) if s.upper() != "N/A" and re.search(rf"(?<!\w){re.escape(s)}(?!\w)", redacted)]
    # A host name that is also an ordinary word (master, user, ubuntu: redact._is_word) is a host
    # only where it is used as one: it must be gone from every host position (this file's own
    # patterns: prompts, syslog columns, NCCL prefixes, descriptions, JSON), and may stay a word in
    # text. Any other host name must be gone wherever it is a whole token, in any case.
    words = {h for h in hosts if _is_word(h)}
    # (an ASCII text holds a host under re.I only where its lower case is in the lower-cased text:
    # that look-up skips the regex for most hosts; other text, where re.I folds more, is searched)
    maybe = (lambda h: h.lower() in low) if redacted.isascii() else (lambda h: True)
    left += [h for h in hosts - words
             if maybe(h) and re.search(rf"(?<!\w)(?<!\w\.){re.escape(h)}(?!\w)", redacted, re.I)]
    left += sorted(words & {h.lower() for h in host_ids(redacted)})
    return left


# -- one Redactor for every fixture, as one bundle would have ------------------------------------

@functools.lru_cache(maxsize=None)
def redacted_fixtures() -> tuple[Redactor, dict[str, str], dict[str, str]]:
    originals = {f.id: f.text() for f in FIXTURES}
    redactor = Redactor(sorted(hostnames_in(originals)))
    return redactor, originals, {k: redactor.redact(t) for k, t in originals.items()}


@functools.lru_cache(maxsize=None)
def all_hosts() -> frozenset[str]:
    _, originals, _ = redacted_fixtures()
    return frozenset(h for t in originals.values() for h in host_ids(t))


def test_there_are_fixtures_of_every_kind() -> None:
    sources = {f.source for f in FIXTURES}
    assert len(FIXTURES) >= 100 and {"ibstat", "ibv_devinfo", "nccl_debug", "show_gids", "iblinkinfo"} <= sources
    assert len(all_hosts()) >= 50


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.id)
def test_no_original_identifier_survives(fx) -> None:
    _, originals, redacted = redacted_fixtures()
    assert survivors(originals[fx.id], redacted[fx.id], set(all_hosts())) == []
    assert len(redacted[fx.id].splitlines()) == len(originals[fx.id].splitlines())  # line numbers hold


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.id)
def test_lids_map_in_place_keeping_0_and_65535(fx) -> None:
    redactor, originals, redacted = redacted_fixtures()
    tokens = {int(k.split()[1]): int(v.split()[1]) for k, v in redactor.mapping().items() if k.startswith("lid ")}
    for rx in LID_T:
        before, after = rx.findall(originals[fx.id]), rx.findall(redacted[fx.id])
        assert len(before) == len(after), rx.pattern
        for o, n in zip(before, after):
            ov, nv = int(o, 0), int(n, 0)
            assert nv == (ov if ov in (0, 0xFFFF) else tokens[ov]), (rx.pattern, o, n)
            assert n.startswith("0x") == o.startswith("0x")


def test_a_value_in_two_fixtures_gets_one_token() -> None:
    redactor, originals, redacted = redacted_fixtures()
    mapping = redactor.mapping()
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for k, text in originals.items():
        for ip in ipv4_ids(text):
            where[("ip", ip)].append(k)
        for v in guid_ids(text):
            where[("guid", f"0x{v:016x}")].append(k)
        for h in host_ids(text):
            where[("host", h)].append(k)
    shared = {key: ks for key, ks in where.items() if len(set(ks)) > 1}
    assert len(shared) >= 20, "the fixtures share values: the same logs and hosts appear in several folders"
    for (kind, value), keys in shared.items():
        token = mapping[value.split(".")[0] if kind == "host" else value]
        for k in keys:
            if kind == "guid":
                v = int(token, 16)
                assert any(f in redacted[k].lower() for f in guid_forms(v)), (value, k)
            else:
                assert token in redacted[k], (value, token, k)
    # and different values never share a token
    values = list(mapping.values())
    assert len(values) == len(set(values))


def test_one_identity_in_several_forms_gets_one_token() -> None:
    """A port GUID as ibstat, ibv_devinfo and an IB GID print it; an IPv4 in an NCCL log, in
    show_gids' column and inside its GID (hex); a host in a log prefix and as an FQDN."""
    r = Redactor(["node017"])
    ibstat = r.redact("\tPort GUID: 0xa088c2030074cfda\n")
    devinfo = r.redact("\tnode_guid:\t\t\ta088:c203:0074:cfda\n\t\t\tGID[  0]:\t\tfe80::a088:c203:74:cfda, IB\n")
    gids = r.redact("mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a14:0077\t10.20.0.119  \tv2\tibp25s0\n")
    log = r.redact("node017:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ibp25s0:10.20.0.119<0>\n"
                   "node017.cluster.local:1:2 [0] NCCL INFO Bootstrap : Using ibp25s0:10.20.0.119<0>\n")
    guid = r.mapping()["0xa088c2030074cfda"][2:]
    ip = r.mapping()["10.20.0.119"]
    assert f"0x{guid}" in ibstat
    assert ":".join(guid[i:i + 4] for i in range(0, 16, 4)) in devinfo
    assert str(ipaddress.IPv6Address((0xFE80 << 112) | int(guid, 16))) in devinfo
    v4 = int(ipaddress.IPv4Address(ip))
    assert f"ffff:{v4 >> 16:04x}:{v4 & 0xFFFF:04x}" in gids and f"\t{ip}  \t" in gids
    assert f"host-0001:1:2 [0]" in log and "host-0001.domain-01.invalid:1:2" in log
    assert f"OOB ibp25s0:{ip}<0>" in log and f"Using ibp25s0:{ip}<0>" in log


# -- (c) parsers read the redacted text alike ---------------------------------------------------

ID_KEYS = {
    "host": {"host", "hosts", "hostname", "ranks.host"},
    "desc": {"description", "peer_description", "node_desc"},
    "guid": {"guid", "node_guid", "system_guid", "sys_image_guid", "port_guid", "peer_guid", "peer_port_guid",
             "sysimgguid", "from_node_guid", "from_port_guid"},
    "name": {"peer_name"},
    "lid": {"lid", "base_lid", "sm_lid", "peer_lid"},
    "gid": {"gid", "default_gid"},
    "ip": {"ipv4", "address"},
    "uuid": {"uuid"},
    "serial": {"serial"},
}
KIND_OF = {key: kind for kind, keys in ID_KEYS.items() for key in keys}
NAME_IS_ID = {"ibnetdiscover"}  # its node `name` is "S-<guid>"
TOKEN_T = re.compile(r"host-\d{4}(?:\.domain-\d+\.invalid)?")


def normalise(text: str, hosts: set[str]) -> str:
    """Free text with every identifier (original or token) as <ID>."""
    text = UUID_T.sub("<ID>", text)
    text = TOKEN_T.sub("<ID>", text)
    for h in sorted(hosts, key=len, reverse=True):
        if h in text:  # the pattern matches only where h stands (most strings name no host: skip the regex)
            text = re.sub(rf"(?<!\w){re.escape(h)}(?![\w])", "<ID>", text)
    text = IPV6_T.sub(lambda m: "<ID>" if ipv6_ids(m[1]) else m[0], text)
    text = IPV4_T.sub("<ID>", text)
    text = re.sub(rf"\b[HSR]-[{HEX}]{{1,16}}\b|\b0x[{HEX}]{{5,16}}\b|(?<![{HEX}:])[{HEX}]{{4}}(?::[{HEX}]{{4}}){{3}}\b", "<ID>", text)
    return re.sub(r"(?i)\blid (\d+)", "lid <ID>", text)


def compare(a, b, path: str, source: str, hosts: set[str], pairs: dict) -> None:
    """Assert b equals a outside identifier fields; collect (original, token) pairs of those."""
    key = path.rsplit(".", 1)[-1].rstrip("[]")
    kind = KIND_OF.get(key) or ("name" if key == "name" and source in NAME_IS_ID else None)
    if kind is not None:
        if isinstance(a, list):
            assert isinstance(b, list) and len(a) == len(b), path
            for x, y in zip(sorted(map(str, a)), sorted(map(str, b))):
                pairs[kind].add((x, y))
        else:
            assert (a is None) == (b is None), path
            if a is not None:
                pairs[kind].add((str(a), str(b)))
        return
    if key in ("cuda_devs", "net_by_host") and isinstance(a, dict):  # dicts keyed by host name
        assert sorted(map(str, a.values())) == sorted(map(str, b.values())), path
        pairs["host"].update(zip(sorted(a), sorted(b)))
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (path, sorted(a), sorted(b))
        for k in a:
            compare(a[k], b[k], f"{path}.{k}", source, hosts, pairs)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for x, y in zip(a, b):
            compare(x, y, f"{path}[]", source, hosts, pairs)
    elif isinstance(a, str) and isinstance(b, str):
        assert normalise(a, hosts) == normalise(b, hosts), path
    else:
        assert a == b, (path, a, b)


@functools.lru_cache(maxsize=None)  # each fixture's two parses serve its own test and parse_pairs
def parsed(source: str, text: str):
    try:
        return to_jsonable(get(source).parse(blank_provenance_header(text)))
    except ParseError as exc:
        return {"parse_error": {"message": exc.message, "line_no": exc.line_no}}


@functools.lru_cache(maxsize=None)
def parse_pairs() -> dict:
    """(kind -> {(original, token)}) over every fixture's parse (a bundle-wide map is one-to-one)."""
    redactor, originals, redacted = redacted_fixtures()
    hosts = set(all_hosts()) | {k for k, v in redactor.mapping().items() if TOKEN_T.fullmatch(v)}
    pairs: dict = defaultdict(set)
    for fx in FIXTURES:
        compare(parsed(fx.source, originals[fx.id]), parsed(fx.source, redacted[fx.id]), fx.source, fx.source,
                hosts, pairs)
    return pairs


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.id)
def test_the_parser_reads_the_redacted_text_alike(fx) -> None:
    redactor, originals, redacted = redacted_fixtures()
    hosts = set(all_hosts()) | {k for k, v in redactor.mapping().items() if TOKEN_T.fullmatch(v)}
    before, after = parsed(fx.source, originals[fx.id]), parsed(fx.source, redacted[fx.id])
    assert ("parse_error" in before) == ("parse_error" in after)
    if "parse_error" in before:
        assert before["parse_error"]["line_no"] == after["parse_error"]["line_no"]
    compare(before, after, fx.source, fx.source, hosts, defaultdict(set))


def test_identifier_fields_map_one_to_one_across_all_fixtures() -> None:
    pairs = parse_pairs()
    assert {"host", "guid", "lid", "gid", "ip", "uuid"} <= set(pairs)
    for kind in ("host", "guid", "lid", "gid", "ip", "uuid", "serial", "name"):
        forward: dict[str, set[str]] = defaultdict(set)
        backward: dict[str, set[str]] = defaultdict(set)
        for o, n in pairs.get(kind, ()):
            forward[o].add(n)
            backward[n].add(o)
        assert all(len(v) == 1 for v in forward.values()), (kind, {k: v for k, v in forward.items() if len(v) > 1})
        assert all(len(v) == 1 for v in backward.values()), (kind, {k: v for k, v in backward.items() if len(v) > 1})
        if kind == "lid":
            assert all((o == n) == (o in ("0", "65535")) for o, n in pairs[kind] if o != "None")
        elif kind in ("host", "guid", "gid", "ip", "uuid", "serial"):
            assert not [(o, n) for o, n in pairs.get(kind, ()) if o == n and o not in ("None", "127.0.0.1", "0x0000000000000000")
                        and not o.startswith("<")], kind


# -- (d) host bundles ----------------------------------------------------------------------------

def check_json(path: Path) -> dict:
    res = CliRunner().invoke(app, ["check", "--from", str(path), "--format", "json"])
    assert res.stdout.strip().startswith("{"), res.output
    return {"exit_code": res.exit_code, **json.loads(res.stdout)}


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_a_redacted_host_bundle_gives_the_same_findings(tmp_path, monkeypatch, name, streamed) -> None:
    if streamed:  # every member through the streaming path large members take (bundle/redact_stream.py)
        from topodiag.bundle import redact_stream

        monkeypatch.setattr(redact_stream, "LARGE_MEMBER_BYTES", 1)
    src, dst = HOSTS / name, tmp_path / name
    redactor = redact_bundle_dir(str(src), str(dst))
    manifest = json.loads((dst / "manifest.json").read_text())
    assert manifest["redacted"] is True
    for e in manifest["sources"]:
        if e.get("member"):
            assert sha256(dst / e["member"]) == e["sha256"], e["member"]
    # nothing of the original survives anywhere in the bundle, the mapping included
    hosts = set()
    for p in src.rglob("*"):
        if p.is_file():
            hosts |= host_ids(p.read_text())
    src_host = json.loads((src / "manifest.json").read_text()).get("host")
    if src_host and not src_host.startswith("<"):
        hosts.add(src_host)
    for p in src.rglob("*"):
        if p.is_file():
            new = dst / p.relative_to(src)
            assert survivors(p.read_text(), new.read_text(), hosts) == [], p
    everything = "\n".join(p.read_text() for p in dst.rglob("*") if p.is_file())
    for original, token in redactor.mapping().items():
        if _is_word(original):
            continue  # an ordinary word: checked in host positions only (survivors)
        if not original.startswith(("lid ", "serial ")):
            names = token.startswith(("host-", "domain-"))  # host names are case-sensitive, hex is not
            assert not re.search(rf"(?<![\w.:-]){re.escape(original)}(?![\w:-]|\.\d)", everything,
                                 0 if names else re.I), original
    # and `check` concludes the same
    before, after = check_json(src), check_json(dst)
    assert before["exit_code"] == after["exit_code"]
    tokens = hosts | {k for k, v in redactor.mapping().items() if TOKEN_T.fullmatch(v)}
    digest = lambda r: sorted((f["code"], f["severity"], normalise(f["message"], tokens),  # noqa: E731
                               sorted(normalise(s, tokens) for s in f["subjects"])) for f in r["findings"])
    assert digest(before) == digest(after)
    if before.get("host"):
        assert after["host"] != before["host"] or before["host"].startswith("<")


def test_the_host_scenarios_are_redacted_with_one_map_across_bundles(tmp_path) -> None:
    r = Redactor()
    for name in SCENARIOS[:4]:
        redact_bundle_dir(str(HOSTS / name), str(tmp_path / name), r)
    hosts = [v for v in r.mapping().values() if v.startswith("host-")]
    assert len(hosts) == len(set(hosts)) >= 2


# -- sysfs snapshots ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", SYSFS_TREES)
def test_a_redacted_sysfs_snapshot_probes_alike(tmp_path, name) -> None:
    from topodiag.live.sysfs_probe import probe, probe_json

    src, dst = FIXTURES_DIR / "sysfs" / name, tmp_path / name
    redactor = Redactor()
    redact_tree(str(src), str(dst), redactor)
    before, after = probe_json(probe(str(src))), probe_json(probe(str(dst)))
    before.pop("root"), after.pop("root")
    hosts = {before["hostname"]} if before.get("hostname") else set()
    pairs: dict = defaultdict(set)
    compare(before, after, "sysfs", "sysfs", hosts | {"host-0001"}, pairs)
    for o, n in pairs["lid"]:
        assert (o == n) == (o in ("0", "65535", "None"))
    for kind in ("guid", "gid", "host"):
        assert not [(o, n) for o, n in pairs[kind] if o == n and o != "None"], kind
    text = "\n".join(p.read_text() for p in dst.rglob("*") if p.is_file() and not p.is_symlink())
    for ca in before["infiniband"]:
        for v in (ca["node_guid"], ca["sys_image_guid"]):
            if v:
                assert not [f for f in guid_forms(int(v, 16)) if f in text.lower()], v
    if before.get("hostname"):
        assert before["hostname"] not in text


# -- (e) what is not an identifier stays --------------------------------------------------------

KEPT = [
    "NCCL version 2.18.3+cuda12.2",
    "\tFirmware version: 28.39.1002",
    "\tfw_ver:\t\t\t\t20.28.4000",
    "libnccl 2.19.3.1.2",  # a longer dotted run is no IPv4
    "   8589934592    2147483648     float     sum      -1   27636  310.82  582.79      0   27584  311.41  583.89      0",
    "# Avg bus bandwidth    : 392.128",
    "GPU0\t X \tNV18\tNV18\tPIX\tSYS\t0-47,96-143\t0\t\tN/A",
    "         Link 0: 26.562 GB/s",
    "         Link 0: Remote Device 00000000:07:00.0: Link 46",
    "    <pci busid=\"0000:16:00.0\" class=\"0x020000\" vendor=\"0x15b3\" link_speed=\"16.0 GT/s PCIe\" link_width=\"8\">",
    "  <cpu host_hash=\"0xceea43a840550885\" numaid=\"0\" affinity=\"0000,000fffff,ff000000,0fffffff\">",
    "\t\t\tGID[  3]:\t\t::ffff:127.0.0.1, RoCE v2",
    "\tmax_mr_size:\t\t\t0xffffffffffffffff",
    "\tCapability mask: 0xa651e848",
    "\tvendor_id:\t\t\t0x02c9",
    "\t\tBase lid: 65535",
    "\t\tSM lid: 0",
    "\tbase lid:\t 0x0",
    "NET/Socket : Using [0]lo:127.0.0.1<0>",
    "netmask 255.255.255.0 broadcast 255.255.255.255 mcast 224.0.0.251",
    "std::runtime_error at 12:34:56 on Mon Dec 18",
    "n013:101855:101885 [0] NCCL INFO Channel 00/0 : 1[81000] -> 0[81000] [receive] via NET/IB/1/GDRDMA",
    "NCCL_IB_GID_INDEX=3 NCCL_SOCKET_IFNAME=ibp25s0",
    "Rate: 400", "Port 1:", "port:\t1", "qpn 3038 mtu 5",
    "\tSerial Number                         : N/A",
    "MAC 00:00:00:00:00:00 ff:ff:ff:ff:ff:ff",
    "ibv_devinfo -v | 2024.0101.1234",
]


@pytest.mark.parametrize("line", KEPT)
def test_what_is_not_an_identifier_is_left_alone(line) -> None:
    r = Redactor()
    assert r.redact(line.replace("n013", "x")) == line.replace("n013", "x")


# -- token formats ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("OOB ibp25s0:10.20.0.119<0> peer 10.216.210.236<54862> again 10.20.0.119.",
     "OOB ibp25s0:198.18.0.1<0> peer 198.18.0.2<54862> again 198.18.0.1."),
    ("fe80:0000:0000:0000:0ac0:ebff:fe21:03da", "fe80:0000:0000:0000:0200:00ff:fe00:0001"),
    ("fe80::ac0:ebff:fe21:3da, RoCE v2", "fe80::200:ff:fe00:1, RoCE v2"),
    ("fe80::a088:c203:74:cfda, IB", "fe80::a000:0:0:1, IB"),
    ("::ffff:200.0.209.6, RoCE v2", "::ffff:198.18.0.1, RoCE v2"),
    ("0000:0000:0000:0000:0000:FFFF:C800:D106", "0000:0000:0000:0000:0000:FFFF:C612:0001"),
    ("peer fe80::966d:ae03:8b:df78%ib0<53249>", "peer fe80::a000:0:0:1%ib0<53249>"),
    ("remoteGidsfd00:1148:9000:5000:4:200:3:ff22", "remoteGidsfd00::1:a:0:0:1"),
    ("HWaddr 0C:42:A1:12:34:56 ether 0c-42-a1-12-34-57 0c42.a112.3458",
     "HWaddr 02:00:00:00:00:01 ether 02-00-00-00-00-02 0200.0000.0003"),
    ("link/infiniband 00:00:10:87:fe:80:00:00:00:00:00:00:02:c9:03:00:00:0f:31:01",
     "link/infiniband 00:00:10:87:fe:80:00:00:00:00:00:00:0a:00:00:00:00:00:00:01"),
    ("\tNode GUID: 0x0002c90300a1b2c0\n\tPort GUID: 0x0002C90300A1B2C1",
     "\tNode GUID: 0x000a000000000001\n\tPort GUID: 0x000A000000000002"),
    ("[22]\t\"H-0008f10403961354\"[1](8f10403961355)", "[22]\t\"H-000a000000000002\"[1](a000000000001)"),
    ("switchguid=0x5442ba00003080(5442ba00003080)", "switchguid=0xa0000000000001(a0000000000001)"),
    ("\t\tBase lid: 50\n\t\tSM lid: 1\n\tbase lid:\t 0x32\n\t\t\tport_lid:\t\t1",
     "\t\tBase lid: 1\n\t\tSM lid: 2\n\tbase lid:\t 0x1\n\t\t\tport_lid:\t\t2"),
    ("GPU 0: NVIDIA H100 (UUID: GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7) MIG-GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7/1/0",
     "GPU 0: NVIDIA H100 (UUID: GPU-00000001-0000-0000-0000-000000000001) MIG-GPU-00000001-0000-0000-0000-000000000001/1/0"),
    ("    Serial Number                         : 1654922006536\n{\"serial\": \"1652223000010\"}",
     "    Serial Number                         : 0000000000001\n{\"serial\": \"0000000000002\"}"),
    # nvidia-smi -q on GB200: the Platform Info block's chassis serial
    ("        Chassis Serial Number             : 1821124009513", "        Chassis Serial Number             : 0000000000001"),
])
def test_token_formats(text, want) -> None:
    assert Redactor().redact(text) == want


def test_iblinkinfo_columns_keep_their_alignment() -> None:
    line = "      0x0002c90300002779      4    1[  ] ==( 4X           5.0 Gbps Active/  LinkUp)==>       3    1[  ] \"kvm mlx4_0\" ( )"
    r = Redactor()
    r.redact("".join(f"Base lid: {1000 + n}\n" for n in range(11)))  # tokens 1..11 taken
    out = r.redact(line)  # 4 -> 12 and 3 -> 13: wider than the originals, same column ends
    assert len(out) == len(line) and "     12    1[  ] ==(" in out and "==>      13    1[  ]" in out
    assert '"kvm mlx4_0"' in out and "0x000a000000000001" in out


def test_host_tokens_keep_nccl_log_prefixes_parseable() -> None:
    log = ("node017:101855:101885 [0] NCCL INFO Bootstrap : Using ibp25s0:10.20.0.119<0>\n"
           "gpu-v100-3:101855:101885 [0] NCCL INFO Using network IB\n"
           "[155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC\n")
    r = Redactor(hostnames_in({"commands/nccl_debug.log": log}))
    result = get("nccl_debug").parse(r.redact(log))
    assert sorted(result.hosts) == ["host-0001", "host-0002", "host-0003"]
    assert set(r.mapping()) >= {"node017", "gpu-v100-3", "crow-19"}


def test_hostnames_in_uses_the_parsers_not_the_host_hash() -> None:
    members = {
        "commands/ibnetdiscover.txt": 'Switch\t36 "S-ec0d9a0300ec8240"\t\t# "MF0;leaf07:MQM8700/U1" base port 0 lid 48 lmc 0\n'
                                      '[1]\t"H-506b4b03003fa9b6"[1](506b4b03003fa9b6) \t\t# "node018.cluster.local HCA-1" lid 67 4xEDR\n'
                                      '[2]\t"H-506b4b03003fa9aa"[1](506b4b03003fa9aa) \t\t# "MT4129 ConnectX7   Mellanox Technologies" lid 68 4xEDR\n',
        "commands/nccl_topo_xml.xml": '<system version="1">\n  <cpu host_hash="0xceea43a840550885" numaid="0"/>\n</system>\n',
        "probes/sysfs.json": '{"probe": "sysfs", "hostname": "gpu-node-01"}\n',
        "manifest.json": '{"schema_version": 1, "host": "node017"}\n',
    }
    assert hostnames_in(members) == {"leaf07", "node018.cluster.local", "gpu-node-01", "node017"}
    r = Redactor(sorted(hostnames_in(members)))
    out = r.redact(members["commands/ibnetdiscover.txt"] + "node018 node018.cluster.local cluster.local")
    assert "node018" not in out and "cluster.local" not in out and "leaf07" not in out
    assert r.redact("hosts node017-node018, node017-ib0, x-leaf07") == \
        "hosts {0}-{1}, {0}-ib0, x-{2}".format(*(r.mapping()[h] for h in ("node017", "node018", "leaf07")))
    token = r.mapping()["node018"]
    assert f"{token} {token}.domain-01.invalid domain-01.invalid" in out
    assert f'"{token}.domain-01.invalid HCA-1"' in out and '"MF0;' + r.mapping()["leaf07"] + ':MQM8700/U1"' in out


def test_the_same_input_gives_the_same_tokens_in_another_redactor() -> None:
    _, originals, redacted = redacted_fixtures()
    again = Redactor(sorted(hostnames_in(originals)))
    assert {k: again.redact(t) for k, t in originals.items()} == redacted


def test_mapping_is_original_to_token() -> None:
    r = Redactor(["node017"])
    r.redact("node017 10.0.0.1 Base lid: 50 0c:42:a1:12:34:56 GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7\n\tNode GUID: 0x0002c90300a1b2c0")
    assert r.mapping() == {
        "node017": "host-0001", "10.0.0.1": "198.18.0.1", "lid 50": "lid 1", "0c:42:a1:12:34:56": "02:00:00:00:00:01",
        "5a10e6e5-95f7-2785-ed63-6f6147f304f7": "00000001-0000-0000-0000-000000000001",
        "0x0002c90300a1b2c0": "0x000a000000000001"}


# -- trees that cannot be redacted --------------------------------------------------------------

def test_binary_members_are_refused_by_name_and_nothing_is_written(tmp_path) -> None:
    src = tmp_path / "b"
    shutil.copytree(HOSTS / SCENARIOS[0], src)
    (src / "probes").mkdir()
    (src / "probes" / "core.bin").write_bytes(b"\x7fELF\x00\x01")
    (src / "commands" / "latin1.txt").write_bytes(b"caf\xe9\n")
    os.symlink("/etc/passwd", src / "commands" / "outside.txt")
    with pytest.raises(RedactionError) as info:
        redact_bundle_dir(str(src), str(tmp_path / "out"))
    message = str(info.value)
    assert "probes/core.bin" in message and "commands/latin1.txt" in message and "commands/outside.txt" in message
    assert "\n" not in message and not (tmp_path / "out").exists()


def test_a_destination_that_holds_files_is_refused(tmp_path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("x")
    with pytest.raises(RedactionError, match="not an empty directory"):
        redact_bundle_dir(str(HOSTS / SCENARIOS[0]), str(tmp_path / "out"))


@pytest.mark.parametrize("fx", [f for f in FIXTURES if f.source in ("nccl_debug", "nccl_tests")], ids=lambda f: f.id)
def test_a_streamed_log_keeps_no_identifier_and_parses_alike(tmp_path, monkeypatch, fx) -> None:
    """A log redacted as a large member (line by line, prefix and message cached) guarantees what a
    whole-text redaction does: no identifier survives, line count kept, the parser reads it alike."""
    from topodiag.bundle import redact_stream

    monkeypatch.setattr(redact_stream, "LARGE_MEMBER_BYTES", 1)
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "logs").mkdir(parents=True)
    original = fx.text()
    (src / "logs" / "run.log").write_text(original)
    redactor = Redactor()
    renamed = redact_tree(str(src), str(dst), redactor)
    text = (dst / renamed["logs/run.log"]).read_text()
    assert survivors(original, text, host_ids(original)) == []
    assert len(text.splitlines()) == len(original.splitlines())
    hosts = set(all_hosts()) | {k for k, v in redactor.mapping().items() if TOKEN_T.fullmatch(v)}
    compare(parsed(fx.source, original), parsed(fx.source, text), fx.source, fx.source, hosts, defaultdict(set))


def test_a_binary_large_member_is_refused_before_anything_is_written(tmp_path, monkeypatch) -> None:
    from topodiag.bundle import redact_stream

    monkeypatch.setattr(redact_stream, "LARGE_MEMBER_BYTES", 1)
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.log").write_bytes(b"node1:1:1 [0] NCCL INFO x\n" * 10 + b"\xff\xfe\x00")
    with pytest.raises(RedactionError, match="big.log"):
        redact_tree(str(src), str(tmp_path / "dst"), Redactor())
    assert not (tmp_path / "dst").exists()


def test_syslog_and_journal_host_columns_are_hosts() -> None:
    from topodiag.bundle.redact import hostnames_in

    members = {"commands/fabricmanager.txt": "Nov 05 13:55:26 node1 systemd[1]: Started NVIDIA fabric manager service.\n",
               "commands/kernel_log.txt": "Mar 27 15:37:34 cc1 kernel: mlx5_core 0000:01:00.1 eth1: Link up\n"
                                          "2024-11-05T13:55:26+0000 gpu-node-07 kernel: NVRM: Xid (PCI:0000:18:00): 79\n"}
    assert {"node1", "cc1", "gpu-node-07"} <= hostnames_in(members)


def test_a_large_member_that_is_not_a_log_is_read_whole(tmp_path, monkeypatch) -> None:
    """Only NCCL logs and nccl-tests outputs are streamed (their host places are the ones the scan
    knows): a large probe JSON whose hostname is not the manifest's host was streamed and kept it."""
    from topodiag.bundle import redact_stream

    monkeypatch.setattr(redact_stream, "LARGE_MEMBER_BYTES", 1)
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "probes").mkdir(parents=True)
    (src / "logs").mkdir()
    (src / "probes" / "sysfs.json").write_text(json.dumps({"probe": "sysfs", "hostname": "gpu-pod-7f3a9",
                                                           "root": "/", "devices": []}))
    (src / "logs" / "nccl.log").write_text("gpu-node-12:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.2.3<0>\n")
    redactor = Redactor()
    redact_tree(str(src), str(dst), redactor)
    probe = (dst / "probes" / "sysfs.json").read_text()
    log = next((dst / "logs").iterdir()).read_text()
    assert "gpu-pod-7f3a9" not in probe and "gpu-node-12" not in log and "10.1.2.3" not in log
    assert {"gpu-pod-7f3a9", "gpu-node-12"} <= set(redactor.mapping())
