"""tcprepro: reproducible TCP congestion-control experiments.

Package map (each module's docstring says what it owns):

- ``units``, ``scenario``, ``scenario_io``, ``variants``, ``testbeds``, ``network_plan``:
  scenario configuration, validation, the testbed profiles and the backend-neutral plan;
- ``ns3``: the ns-3 backend (C++ models and trace sinks, compiled once); ``emulation``:
  real Linux TCP (Mininet natively, in User-mode Linux or in a VM);
- ``store``, ``provenance``: the xarray trace store and run provenance;
- ``campaign``: the workflow's runs, batches, notebook jobs, cache keys, plans and trace
  bundles;
- ``metrics``, ``analysis``, ``models``: measurements and the papers' analytic models;
- ``claims``: the claims registry, readings and checker;
- ``figures``, ``paper``, ``latex``: figures and the generated report;
- ``explore``: the JupyterLab explorer; ``bench``, ``bench_workflow``: benchmarks;
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
