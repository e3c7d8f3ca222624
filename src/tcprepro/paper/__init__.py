r"""Generated LaTeX inputs of the reproduction paper (``paper/generated/``).

This package owns every piece of the paper that depends on results or
configuration, so that ``paper/tcprepro.tex`` holds only prose and
``\\input`` commands:

- ``glance.tex``: the at-a-glance section (every catalogue artefact with its
  status in this tier and its page, every claim with its verdict and page, the
  verdict totals per verdict and per study, counted from the claims CSVs; then the
  verify tier's verdicts next to this build's when a verify build left its CSVs in
  ``data/claims/verify/``, else one line saying there are none);
- ``body.tex``: one section per study in catalogue order (A, B, C, D), its figures
  and tables in catalogue order, then its claims table. Each caption is the one of
  ``workflow/config.yaml``, then the sentences the drawing recorded about what it
  actually drew (:class:`tcprepro.figures.common.Drawn`, ``paper/figures/<id>.json``),
  then a generated line stating what the figure was drawn from (tier, backend,
  simulated duration and warm-up, repetitions, cells run of the grid) next to what
  the paper used (the tier ``paper`` of the figure). A figure with nothing drawn in
  this tier is not included: it is one line of the at-a-glance table;
- ``parameters.tex`` (each parameter in this build next to the paper's, the ones the
  tier changed marked), ``deviations.tex`` (from the ``notes`` of each scenario
  file), ``provenance.tex`` (from the combined datasets) and ``numbers.tex`` (macros
  for every number quoted in the prose).

:func:`check_build` is the build check that runs after LaTeX: it fails on an overfull
box in generated content, a catalogue id without a caption or a line in the
at-a-glance table, and a figure whose page does not carry its caption.


The package, one module per section:

- :mod:`~tcprepro.paper.inputs`: :func:`write_paper_inputs`, which writes them all;
- :mod:`~tcprepro.paper.status`: catalogue order, each artefact's status, the tier line;
- :mod:`~tcprepro.paper.glance` and :mod:`~tcprepro.paper.verify`: the at-a-glance
  section and its verify part; :mod:`~tcprepro.paper.verdicts`: the claims CSVs read;
- :mod:`~tcprepro.paper.body`: the studies' sections;
- :mod:`~tcprepro.paper.parameters` and :mod:`~tcprepro.paper.sources`: the parameters,
  deviations and provenance tables;
- :mod:`~tcprepro.paper.checks`: the build check.
"""

from tcprepro.paper.body import _body as _body
from tcprepro.paper.checks import OVERFULL_LIMIT_PT as OVERFULL_LIMIT_PT
from tcprepro.paper.checks import check_build
from tcprepro.paper.checks import overfull_boxes as overfull_boxes
from tcprepro.paper.glance import _decide_table as _decide_table
from tcprepro.paper.glance import _glance as _glance
from tcprepro.paper.glance import _glossary as _glossary
from tcprepro.paper.glance import _tier_table as _tier_table
from tcprepro.paper.inputs import write_paper_inputs
from tcprepro.paper.parameters import _parameters as _parameters
from tcprepro.paper.sources import _provenance as _provenance
from tcprepro.paper.status import Status, figure_order, figure_status, tier_line
from tcprepro.paper.verdicts import read_verdicts
from tcprepro.paper.verify import _verify_section as _verify_section
from tcprepro.paper.verify import verify_cost as verify_cost

__all__ = [
    "Status",
    "check_build",
    "figure_order",
    "figure_status",
    "read_verdicts",
    "tier_line",
    "write_paper_inputs",
]
