r"""Where the data came from (``provenance.tex``).

Simulated here or imported from a trace bundle (and whether that bundle was verified),
then the provenance of every figure's combined dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import xarray as xr

from tcprepro.claims.glossary import span
from tcprepro.latex import escape as tex


def _from_bundle(ds: xr.Dataset, source: Mapping[str, Any] | None) -> int:
    """How many of a combined dataset's runs are the imported bundle's own datasets.

    A run is the bundle's when its cache key and creation date are those the bundle's
    manifest lists (a run simulated here again has the same key, not the same date).
    """
    if not source:
        return 0
    bundled = source.get("runs", {})
    keys = ds["run_cache_key"].values.ravel()
    created = ds["run_created"].values.ravel()
    return sum(1 for k, c in zip(keys, created, strict=True) if k and bundled.get(str(k)) == str(c))


def _source_text(combined: Mapping[str, xr.Dataset], source: Mapping[str, Any] | None) -> str:
    """Where this build's data came from: simulated here, or imported from a trace bundle."""
    if not source:
        return (
            r"\paragraph{Source of the data.} Every run was made by this build's workflow "
            r"(no trace bundle imported): simulated with ns-3, or emulated with real Linux TCP "
            r"(D1.1's runs). The kernel, code and dates of each figure's runs are in "
            r"Table~\ref{tab:provenance}; a cross-check's (X1 to X14) are those of its ns-3 "
            r"side, its emulated runs' in its own table." + "\n"
        )
    runs = sum(int(ds.attrs.get("n_runs", 0)) for ds in combined.values())
    bundled = sum(_from_bundle(ds, source) for ds in combined.values())
    machine = source.get("exported_by", {})
    text = r"\paragraph{Source of the data.} " + tex(
        f"{bundled} of the {runs} runs were imported from the trace bundle "
        f"{source.get('bundle', '')} (tier {source.get('tier', '')}, manifest SHA-256 "
        f"{source.get('manifest_sha256', '')}), exported on {source.get('exported', '')} "
        f"by host {machine.get('host', '?')} ({machine.get('cpu', '?')}, "
        f"{machine.get('cores', '?')} cores) from tcprepro "
        f"{source.get('software', {}).get('tcprepro', '?')} and ns-3 "
        f"{source.get('software', {}).get('ns3', '?')}"
        + (f"; {runs - bundled} were simulated here. " if runs > bundled else ". ")
    )
    verify = source.get("verify")
    if not verify:
        text += tex(
            "The bundle was not verified on this machine (tcprepro bundle verify re-simulates "
            "a random sample of its runs and compares them bit for bit)."
        )
    else:
        different = verify.get("different", []) + verify.get("combined_differ", [])
        text += tex(
            f"Verified on {verify.get('date', '')}: {verify.get('identical')} of "
            f"{verify.get('sampled')} runs drawn at random (seed {verify.get('seed')}) were "
            "re-simulated here bit-identical"
            + (f"; DIFFERENT: {', '.join(different)}" if different else "")
            + "."
        )
    return text + "\n"


def _provenance(combined: Mapping[str, xr.Dataset], source: Mapping[str, Any] | None = None) -> str:
    lines = [
        _source_text(combined, source),
        r"\begin{longtable}{@{}P{0.065\linewidth}P{0.05\linewidth}P{0.08\linewidth}"
        r"P{0.09\linewidth}P{0.215\linewidth}P{0.235\linewidth}P{0.1\linewidth}@{}}",
        r"\caption{Provenance of every figure's combined dataset.}\label{tab:provenance}\\",
        r"\toprule Figure & Runs & tcprepro & ns-3 & Code (git) & Kernel, dates & Source "
        r"\\ \midrule",
        r"\endfirsthead",
        r"\toprule Figure & Runs & tcprepro & ns-3 & Code (git) & Kernel, dates & Source "
        r"\\ \midrule",
        r"\endhead",
    ]
    for figure, ds in combined.items():
        commits = sorted({str(c)[:10] for c in ds["run_git_commit"].values.ravel() if c})
        dirty = any(str(v) == "1" for v in ds["run_git_dirty"].values.ravel())
        kernels = sorted({str(k) for k in ds["run_kernel"].values.ravel() if k})
        created = sorted(str(c) for c in ds["run_created"].values.ravel() if c)
        code = ", ".join(commits) + (" (dirty tree)" if dirty else "")
        days = span(created[0][:10], created[-1][:10], "{}", " to ") if created else ""
        dates = f"{', '.join(kernels)}; {days}" if created else ""
        n_runs = int(ds.attrs.get("n_runs", 0))
        bundled = _from_bundle(ds, source)
        origin = (
            "here"
            if not bundled
            else "bundle"
            if bundled == n_runs
            else f"bundle {bundled}, here {n_runs - bundled}"
        )
        lines.append(
            rf"{tex(figure)} & {n_runs} & "
            rf"{tex(str(ds.attrs.get('tcprepro_version', '')))} & "
            rf"{tex(str(ds.attrs.get('ns3_version', '')))} & {tex(code)} & {tex(dates)} & "
            rf"{tex(origin)} \\"
        )
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"
