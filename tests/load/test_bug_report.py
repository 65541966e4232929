"""nvidia-bug-report logs as inputs: sections found by their titles, parsed with the file's line
numbers, gzip read in memory, the uname host kept (topodiag/load/bug_report.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.load.bug_report_lines import sections
from topodiag.load import bug_report
from topodiag.load.gather import gather

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "nvidia_bug_report" / "nvidia-bug-report-assembled-gpu-fallen-off-bus-01.log"
SEP = "____________________________________________"
PROLOGUE = (f"{SEP}\n\nStart of NVIDIA bug report log file.  Please include this file, along\n\n"
            "nvidia-bug-report.sh Version: 31831145\n\nuname: Linux gpu-7 6.8.0 #1 SMP x86_64 GNU/Linux\n\n")
TOPO = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
        "GPU0\t X \tNV12\t0-63\t0\n"
        "GPU1\tNV12\t X \t0-63\t0\n\n"
        "Legend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n")


def test_titles_name_the_sources():
    commands = bug_report._command_sources()
    assert bug_report.source_of("dmesg:", commands) == "kernel_log"
    assert bug_report.source_of("Scanning kernel log files for NVIDIA kernel messages:", commands) == "kernel_log"
    assert bug_report.source_of("/usr/bin/nvidia-smi topo -m", commands) == "nvidia_smi_topo_m"
    assert bug_report.source_of("/usr/bin/nvidia-smi topo --matrix", commands) == "nvidia_smi_topo_m"
    assert bug_report.source_of("/usr/bin/nvidia-smi nvlink --status", commands) == "nvidia_smi_nvlink_s"
    assert bug_report.source_of("/usr/sbin/ibstat", commands) == "ibstat"
    for other in ("journalctl -b -0 _COMM=Xorg", "*** /etc/issue", "/usr/sbin/dmidecode", "ldd /usr/bin/glxinfo"):
        assert bug_report.source_of(other, commands) is None


def test_the_written_commands_are_the_parsers_commands():
    """COMMANDS (read without importing the parsers) is what the parsers' INFO.argv say, in the
    order source_of tries them (a parser added with a command must be added there)."""
    assert bug_report._command_sources() == bug_report.command_sources_of_infos()


def test_reading_a_report_imports_no_parser_it_does_not_use(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "nvidia-bug-report.log"
    path.write_text(PROLOGUE + f"{SEP}\n\ndmesg:\n\n[ 1.0] NVRM: Xid (PCI:0000:18:00): 79, pid=1, x\n")
    code = ("import sys\nfrom topodiag.load import bug_report as b\nfrom topodiag.load.files import open_text\n"
            f"o = open_text({str(path)!r})\nlist(b.read_sections(b.from_opened(o), 'x'))\n"
            "print(sorted(m for m in sys.modules if m.startswith('topodiag.parsers.') and m.count('.') == 2))")
    root = Path(__file__).resolve().parents[2]  # this checkout's topodiag, whatever is installed
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         timeout=120).stdout
    loaded = eval(out)  # noqa: S307 (the list the child printed)
    assert "topodiag.parsers.kernel_log" in loaded
    assert "topodiag.parsers.ibstat" not in loaded and "topodiag.parsers.lspci_vvv" not in loaded


def test_sections_keep_the_file_line_numbers():
    text = PROLOGUE + f"{SEP}\n\n/usr/bin/nvidia-smi topo -m\n\n{TOPO}\n{SEP}\n\ndmesg:\n\n[ 1.0] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"
    secs = list(sections(text.split("\n")))
    assert [(s.source, s.title) for s in secs] == [("nvidia_smi_topo_m", "/usr/bin/nvidia-smi topo -m"),
                                                  ("kernel_log", "dmesg:")]
    lines = text.split("\n")
    for s in secs:  # the section's text starts at its start_line, line for line the file's
        body = s.text.split("\n")
        assert body[0].strip() and body == lines[s.offset: s.offset + len(body)]
    assert secs[1].start_line == lines.index("[ 1.0] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.") + 1


def test_parsed_line_numbers_are_the_files(tmp_path):
    xid = "[ 1.0] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."
    text = PROLOGUE + f"{SEP}\n\n/usr/bin/nvidia-smi topo -m\n\n{TOPO}\n{SEP}\n\ndmesg:\n\n{xid}\n"
    path = tmp_path / "nvidia-bug-report.log"
    path.write_text(text)
    got = gather([str(path)])
    kernel = next(p.result for p in got.parsed if p.source == "kernel_log")
    assert [x.line_no for x in kernel.xids] == [text.split("\n").index(xid) + 1]


def test_a_report_is_read_section_by_section(tmp_path):
    path = tmp_path / "nvidia-bug-report.log"
    path.write_text(PROLOGUE + f"{SEP}\n\n/usr/bin/nvidia-smi topo -m\n\n{TOPO}\n")
    got = gather([str(path)])
    assert [p.source for p in got.parsed] == ["nvidia_smi_topo_m"]
    assert got.parsed[0].path == f"{path} [/usr/bin/nvidia-smi topo -m]"
    assert got.host == "gpu-7" and not got.problems


def test_a_gzip_report_is_read_in_memory(tmp_path):
    path = tmp_path / "nvidia-bug-report.log.gz"
    path.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    got = gather([str(path)])
    assert [p.source for p in got.parsed] == ["kernel_log"]
    assert got.host == "nomade007"


def test_a_cut_gzip_report_is_one_line_problem(tmp_path):
    data = gzip.compress((PROLOGUE + "x\n" * 100000).encode())
    path = tmp_path / "nvidia-bug-report.log.gz"
    path.write_bytes(data[: len(data) // 2])
    got = gather([str(path)])
    assert not got.parsed and len(got.problems) == 1
    assert "cannot be read whole" in got.problems[0].reason and "\n" not in got.problems[0].reason


def test_a_report_with_nothing_to_read_says_so(tmp_path):
    path = tmp_path / "nvidia-bug-report.log"
    path.write_text(PROLOGUE + f"{SEP}\n\n*** /etc/issue\n*** ls: -rw-r--r-- 1 root root 20 /etc/issue\nArch Linux\n")
    got = gather([str(path)])
    assert not got.parsed and "no section topodiag reads" in got.problems[0].reason


def test_other_gzip_files_are_still_refused(tmp_path):
    path = tmp_path / "notes.txt.gz"
    path.write_bytes(gzip.compress(b"hello\n"))
    got = gather([str(path)])
    assert "gzip data" in got.problems[0].reason


@pytest.mark.parametrize("mark", bug_report.MARKS)
def test_looks_like(mark):
    assert bug_report.looks_like(f"{SEP}\n\n{mark} ...\n") and not bug_report.looks_like("GPU0 GPU1\n")


def test_shift_lines_moves_line_fields_of_dataclasses_of_every_kind():
    """shift_lines calls a dataclass with its fields in order, or goes through dataclasses.replace
    for one with a field not in __init__ or keyword-only: the same fields move either way."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Plain:
        line_no: int
        text: str
        first_line: int = 0
        items: tuple = ()

    @dataclasses.dataclass(frozen=True)
    class Posted:
        line_no: int
        doubled: int = dataclasses.field(init=False, default=0)

        def __post_init__(self):
            object.__setattr__(self, "doubled", 2 * self.line_no)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        line_no: int
        count: int

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Keyed:
        text: str
        line_no: int

    inner = Plain(7, "b", 0)
    outer = Plain(3, "a", 2, (inner, Posted(4), Slotted(5, 9), {"line_no": 6, "n": 1}, True, Keyed(text="k", line_no=8)))
    moved = bug_report.shift_lines(outer, 100)
    assert (moved.line_no, moved.text, moved.first_line) == (103, "a", 102)
    assert moved.items[0] == Plain(107, "b", 0)  # first_line 0: no line, not moved
    assert (moved.items[1].line_no, moved.items[1].doubled) == (104, 208)  # __post_init__ ran again
    assert moved.items[2] == Slotted(105, 9)
    assert moved.items[3] == {"line_no": 106, "n": 1} and moved.items[4] is True
    assert moved.items[5] == Keyed(text="k", line_no=108)
    assert outer.line_no == 3 and inner.line_no == 7  # the originals are left as they were
    unmoved = Plain(0, "c")
    assert bug_report.shift_lines(unmoved, 100) is unmoved
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.line_no = 1
