"""Numbers derived from datasets, one module per study (and the cross-check).

Figures and claim checks read these functions; they never compute a number of
their own. :mod:`tcprepro.metrics` holds the measurements every study shares.
"""

from tcprepro.analysis import common, crosscheck, study_a, study_b, study_c, study_d

__all__ = ["common", "crosscheck", "study_a", "study_b", "study_c", "study_d"]
