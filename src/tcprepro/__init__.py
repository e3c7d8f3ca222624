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


def skip_iri_grammars() -> None:
    """Let this process import jsonschema without compiling the IRI grammars.

    jsonschema (the config validation, nbformat in papermill, Snakemake) imports
    ``rfc3987_syntax`` when it is installed (jupyter-events asks for it), and that module
    compiles 39 grammars as it is imported: 2.5-6 s in every process that imports
    jsonschema. Only the ``iri`` formats use it; no schema tcprepro, papermill or Snakemake
    reads here names one, and format checks are off unless asked for. A process that
    imported it already keeps it.
    """
    import sys

    sys.modules.setdefault("rfc3987_syntax", None)  # None: its import raises ImportError
