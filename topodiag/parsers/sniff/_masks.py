"""Masked identifiers in the fabric tools' lines (regex sources), shared by the iblinkinfo and
ibnetdiscover sniffs and grammars (parsers/ib_records.py): plain strings, nothing compiled, so that a
parser importing them (the prolog's sysfs reader among them) pays for no other sniff's patterns."""

from __future__ import annotations

# A GUID position in a fabric tool's line that was masked: "0xXXXXXXXXXXXXXXXX", "0x7cfe9003xxxxxxxx",
# "xxxx", "...", "<redacted>", "REDACTED", "****" (regex source, for the iblinkinfo / ibnetdiscover grammars).
MASKED_GUID = (r"(?:(?:0x)?(?=[0-9a-fA-F]{0,15}[xX*])[0-9a-fA-FxX*]{4,16}|(?:0x)?(?:\.{3,16}|\u2026|<[A-Za-z _-]{1,20}>"
               r"|\[[A-Za-z _-]{1,20}\]|REDACTED|redacted|\*{1,16}))")
# A LID position masked the same way ("xxx", "...", "<redacted>", "***"); a LID is decimal, so any run of x does.
MASKED_LID = r"(?:[xX]{1,9}|\.{2,9}|\u2026|<[A-Za-z _-]{1,20}>|\[[A-Za-z _-]{1,20}\]|REDACTED|redacted|\*{1,9})"
