"""NVIDIA Xid codes (a shim: the data and functions live in topodiag/knowledge/xid.py and xid.toml)."""

from __future__ import annotations

from .knowledge.xid import GRADE_ORDER, PENDING_UNTIL_RESET, SXID_CORRECTABLE, SXID_GRADE_ORDER, SXID_NAMES, \
    SXID_STALLING, XIDS, blocks_job, grade, name, sxid_grade, sxid_name

__all__ = ["GRADE_ORDER", "PENDING_UNTIL_RESET", "SXID_CORRECTABLE", "SXID_GRADE_ORDER", "SXID_NAMES", "SXID_STALLING",
           "XIDS", "blocks_job", "grade", "name", "sxid_grade", "sxid_name"]
