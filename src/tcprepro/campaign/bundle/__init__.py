"""Trace bundles: a tier's simulation results packed on one machine, checked on another.

This package owns the bundle format and its three operations (``tcprepro bundle``):

- :func:`export_bundle` packs every run dataset of a tier (``data/runs/...``, the paths
  :meth:`WorkflowConfig.runs` gives), the figures' combined datasets, each figure's
  resolved scenarios, the claims CSVs and a manifest into one tar file (compressed
  when its name ends in ``.gz``/``.tgz`` or ``.xz``).
- :func:`import_bundle` checks every file's SHA-256, checks that every run's cache key is
  the one this checkout gives it (naming the first few that differ and why), and only then
  places the files, so that ``make figures PROFILE=<tier>`` regenerates every figure, claim
  and the paper without simulating anything.
- :func:`verify_bundle` re-simulates a seeded random sample of the bundle's runs (every
  figure represented) and compares each with the bundle's dataset, value for value.

Manifest (``manifest.json``, the archive's first member)
--------------------------------------------------------
``format``, ``format_version``, ``tier``, ``created``; ``software`` (the versions every
cache key covers: tcprepro, ns-3, the C++ models' digest), ``git`` and ``machine`` (the
exporting host); ``figures`` (runs per figure) and ``omitted`` (emulation figures whose
ns-3 runs were not made); ``files``: one entry per file with its ``path``, ``kind``
(``run``, ``combined``, ``scenarios``, ``claims``), ``bytes`` and ``sha256``, and for a run
its ``figure``, ``cell``, ``rep``, ``cache_key`` and ``provenance`` (the dataset's
provenance attributes). The manifest's own SHA-256 (its *digest*) names the bundle.

Where an import puts things
---------------------------
Runs and combined datasets at their workflow paths, with modification times that make
Snakemake consider them up to date (runs first, then combined datasets, both newer than
any input; the scenario files are ``ancient()`` inputs of the simulations), after
Snakemake's records of earlier jobs that made those files are dropped. The bundle's
manifest, scenarios and claims go to ``data/bundle/``, with ``data/bundle/import.json``:
the record the paper's provenance section reads (:func:`source_record`). ``bundle verify``
adds its result to that record when the verified bundle is the one imported.

Emulated datasets (``data/emulated``) are not bundled: they come from a kernel, not from a
deterministic simulation, and cannot be re-checked bit for bit.

The package, one module per verb: :mod:`~tcprepro.campaign.bundle.export`,
:mod:`~tcprepro.campaign.bundle.imports` (with the import record) and
:mod:`~tcprepro.campaign.bundle.verify`; the format they share in
:mod:`~tcprepro.campaign.bundle.manifest`, and the match of a bundle against this checkout
in :mod:`~tcprepro.campaign.bundle.checkout`.
"""

from tcprepro.campaign.bundle.checkout import mismatches as mismatches
from tcprepro.campaign.bundle.export import export_bundle
from tcprepro.campaign.bundle.imports import ImportResult as ImportResult
from tcprepro.campaign.bundle.imports import import_bundle, read_record, source_record
from tcprepro.campaign.bundle.manifest import BUNDLE_DIR as BUNDLE_DIR
from tcprepro.campaign.bundle.manifest import FORMAT, RECORD, Bundle
from tcprepro.campaign.bundle.manifest import FORMAT_VERSION as FORMAT_VERSION
from tcprepro.campaign.bundle.manifest import KINDS as KINDS
from tcprepro.campaign.bundle.manifest import MANIFEST as MANIFEST
from tcprepro.campaign.bundle.manifest import PROVENANCE_ATTRS as PROVENANCE_ATTRS
from tcprepro.campaign.bundle.manifest import VOLATILE_ATTRS as VOLATILE_ATTRS
from tcprepro.campaign.bundle.manifest import read_manifest as read_manifest
from tcprepro.campaign.bundle.manifest import unpack as unpack
from tcprepro.campaign.bundle.verify import VerifyResult, sample_runs, verify_bundle
from tcprepro.campaign.bundle.verify import differences as differences
from tcprepro.campaign.bundle.verify import resimulate as resimulate
from tcprepro.campaign.bundle.verify import side_by_side as side_by_side

__all__ = [
    "FORMAT",
    "RECORD",
    "Bundle",
    "VerifyResult",
    "export_bundle",
    "import_bundle",
    "read_record",
    "sample_runs",
    "source_record",
    "verify_bundle",
]
