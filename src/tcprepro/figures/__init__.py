"""Figures drawn from combined datasets, one module per study (and the cross-check).

:mod:`~tcprepro.figures.common` holds what every figure shares (saving, styles,
sizes, the empty panel). A figure draws what :mod:`tcprepro.analysis` computes.
"""

from tcprepro.figures import crosscheck, study_a, study_b, study_c, study_d
from tcprepro.figures.common import empty_panel, save_figure, save_table

__all__ = [
    "crosscheck",
    "empty_panel",
    "save_figure",
    "save_table",
    "study_a",
    "study_b",
    "study_c",
    "study_d",
]
