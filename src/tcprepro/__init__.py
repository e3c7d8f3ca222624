"""tcprepro: reproducible TCP congestion-control experiments.

Package map (each module's docstring says what it owns):

- ``units``, ``scenario``, ``variants``, ``topology``: scenario configuration,
  validation and the backend-neutral network plan;
- ``ns3``: the ns-3 backend (C++ models and trace sinks, compiled once);
- ``store``, ``provenance``: the xarray trace store and run provenance;
- ``sweep``: figure sweeps from the workflow config (runs, cache keys, plans);
- ``metrics``: measurements computed from datasets;
- ``claims``: the claims registry and checker;
- ``plotting``, ``paper``: figures and generated LaTeX;
- ``doctor``, ``cli``: capability checks and the ``tcprepro`` command.
"""

__version__ = "0.1.0"
