"""Trace bundles for real: a smoke-tier workflow of study D (D1, D3, D4: six short ns-3
runs) is run once, exported, imported into a fresh copy and rendered there without
simulating; verify re-simulates a sample; damaged bundles are refused."""

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from tcprepro.campaign import load_workflow_config
from tcprepro.campaign.bundle import (
    MANIFEST,
    RECORD,
    import_bundle,
    read_manifest,
    sample_runs,
    verify_bundle,
)
from tcprepro.errors import ConfigError
from tcprepro.store import open_dataset, write_dataset
from test_workflow import copy_workflow, job_counts, snakemake

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
STUDY = "D"


def study_d_workflow(path):
    """A copy of the workflow reduced to study D's figures (a checkout of its own)."""
    path.mkdir()
    copy_workflow(path)
    config_path = path / "workflow/config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["figures"] = {
        name: block for name, block in config["figures"].items() if block["study"] == STUDY
    }
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def tcprepro(workdir, *args):
    return subprocess.run(
        [BIN / "tcprepro", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"},
    )


def snapshot(folder: Path):
    """Every file under ``folder`` with its size and modification time (None: no folder)."""
    if not folder.exists():
        return None
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


def repack(source: Path, target: Path, replace=None, drop=(), manifest=None):
    """Copy a bundle, replacing members' bytes, dropping members, or editing the manifest.

    Replaced members get their size and SHA-256 fixed in the manifest (a consistent
    bundle whose content changed), unless ``manifest`` edits it further.
    """
    replace = replace or {}
    with tarfile.open(source) as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive}
    data = json.loads(members[MANIFEST])
    for entry in data["files"]:
        if entry["path"] in replace:
            members[entry["path"]] = replace[entry["path"]]
            entry["bytes"] = len(replace[entry["path"]])
            entry["sha256"] = hashlib.sha256(replace[entry["path"]]).hexdigest()
    if manifest:
        manifest(data)
    members[MANIFEST] = json.dumps(data).encode()
    with tarfile.open(target, "w") as archive:
        for name, raw in members.items():
            if name in drop:
                continue
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            archive.addfile(info, io.BytesIO(raw))
    return target


@pytest.fixture(scope="module")
def exported(tmp_path_factory):  # the paper is built when LaTeX is there
    """Study D's smoke tier run once (simulations, figures, claims, paper), then exported."""
    workdir = study_d_workflow(tmp_path_factory.mktemp("exporter") / "workflow")
    snakemake(workdir, "--profile", "workflow/profiles/smoke", "--cores", "2")
    bundle = workdir / "D-smoke.tar.gz"
    result = tcprepro(workdir, "bundle", "export", "--tier", "smoke", "-o", bundle.name)
    assert result.returncode == 0, result.stderr
    return workdir, bundle


def test_export_packs_every_run_the_combined_datasets_scenarios_and_claims(exported):
    workdir, bundle = exported
    config = load_workflow_config(workdir / "workflow/config.yaml")
    manifest = read_manifest(bundle).manifest
    assert manifest["tier"] == "smoke"
    runs = {e["path"]: e for e in manifest["files"] if e["kind"] == "run"}
    expected = [r for f in ("D1", "D3", "D4") for r in config.runs(f, "smoke")]
    assert sorted(runs) == sorted(r.path for r in expected)
    for run in expected:
        entry = runs[run.path]
        raw = (workdir / run.path).read_bytes()
        assert entry["sha256"] == hashlib.sha256(raw).hexdigest()
        assert entry["cache_key"] == open_dataset(workdir / run.path).attrs["cache_key"]
        assert entry["provenance"]["host"]
        assert entry["provenance"]["ns3_version"]
    kinds = sorted(e["path"] for e in manifest["files"] if e["kind"] != "run")
    assert kinds == [
        "claims/D.csv",
        "data/combined/D1.nc",
        "data/combined/D3.nc",
        "data/combined/D4.nc",
        "scenarios/D1.json",
        "scenarios/D3.json",
        "scenarios/D4.json",
    ]
    assert set(manifest["software"]) == {"tcprepro", "ns3", "models"}
    assert manifest["machine"]["host"]


@pytest.mark.needs_latex
def test_imported_bundle_renders_without_simulating_and_verifies(exported, tmp_path):
    exporter, bundle = exported
    fresh = study_d_workflow(tmp_path / "fresh")
    assert not (fresh / ".snakemake").exists()  # no Snakemake metadata, as in a fresh clone
    result = tcprepro(fresh, "bundle", "import", str(bundle))
    assert result.returncode == 0, result.stderr
    digest = read_manifest(bundle).digest
    assert digest in result.stdout

    plan = snakemake(fresh, "--profile", "workflow/profiles/smoke", "-n", "--cores", "2")
    counts = job_counts(plan.stdout)
    assert "simulate_batch" not in counts, plan.stdout
    assert "combine" not in counts, plan.stdout
    assert counts["claims"] == 1
    assert counts["paper"] == 1

    # an evaluator's check of a sample (every figure represented) goes into the record
    result = tcprepro(fresh, "bundle", "verify", str(bundle), "--sample", "3", "--seed", "7")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = re.findall(r"^data/runs/(D\d)/\S+: identical", result.stdout, re.M)
    assert sorted(lines) == ["D1", "D3", "D4"]
    assert "3 of 3 sampled runs re-simulated bit-identical (seed 7)" in result.stdout
    assert json.loads((fresh / RECORD).read_text())["verify"]["identical"] == 3

    run = snakemake(fresh, "--profile", "workflow/profiles/smoke", "--cores", "2")
    assert "rule simulate" not in run.stdout + run.stderr
    assert "rule combine" not in run.stdout + run.stderr
    claims = (fresh / f"data/claims/{STUDY}.csv").read_text()
    assert claims == (exporter / f"data/claims/{STUDY}.csv").read_text()
    assert claims == (fresh / f"data/bundle/claims/{STUDY}.csv").read_text()
    provenance = (fresh / "paper/generated/provenance.tex").read_text()
    assert "6 of the 6 runs were imported from the trace bundle" in provenance
    assert digest in provenance
    assert "3 of 3 runs drawn at random (seed 7)" in provenance
    assert (fresh / "paper/build/tcprepro.pdf").stat().st_size > 10_000


def test_verify_reports_exactly_the_run_whose_value_was_changed(exported, tmp_path, monkeypatch):
    exporter, bundle = exported
    runs = read_manifest(bundle).runs
    seed = 3
    chosen = sample_runs(runs, 2, seed)
    assert len({e["figure"] for e in chosen}) == 2
    target = chosen[0]["path"]
    ds = open_dataset(exporter / target)
    values = ds["goodput_bps"].values.copy()
    values.flat[7] = np.nextafter(values.flat[7], np.inf)  # one value, one bit off
    ds["goodput_bps"].values = values
    write_dataset(ds, tmp_path / "changed.nc")
    changed = repack(
        bundle, tmp_path / "changed.tar", {target: (tmp_path / "changed.nc").read_bytes()}
    )

    out = io.StringIO()
    config = load_workflow_config(exporter / "workflow/config.yaml")
    monkeypatch.chdir(exporter)  # the workflow's scenario paths are relative to it
    result = verify_bundle(
        changed, config, 2, seed, exporter, exporter / "workflow/config.yaml", log=out
    )
    text = out.getvalue()
    assert list(result.different) == [target], text
    assert result.different[target] == ["goodput_bps"]
    assert result.identical == [chosen[1]["path"]]
    assert not result.ok
    assert f"{target}: DIFFERENT (goodput_bps)" in text
    # both provenances side by side: the bundle's and the re-simulation's
    assert re.search(r"^\s+bundle\s+re-simulated here$", text, re.M)
    assert re.search(r"^\s+cache_key\s+(\w+)\s+\1$", text, re.M)
    # the combined dataset of that figure no longer matches the bundle's runs
    figure = chosen[0]["figure"]
    assert result.combined[figure] == ["goodput_bps"]
    assert not any(result.combined[f] for f in result.combined if f != figure)


def _flip_byte(source: Path, target: Path, member: str) -> Path:
    raw = bytearray(source.read_bytes())
    with tarfile.open(source) as archive:
        offset = archive.getmember(member).offset_data
    raw[offset + 1000] ^= 0xFF
    target.write_bytes(bytes(raw))
    return target


@pytest.mark.parametrize(
    "damage",
    [
        "corrupted byte",
        "missing file",
        "truncated",
        "foreign archive",
        "not an archive",
        "changed scenario",
    ],
)
def test_import_of_a_damaged_bundle_exits_2_names_it_and_leaves_data_untouched(
    exported, tmp_path, damage
):
    _, bundle = exported
    plain = tmp_path / "plain.tar"
    repack(bundle, plain)  # uncompressed: a flipped byte lands in one member's data
    run = read_manifest(plain).runs[1]["path"]
    fresh = study_d_workflow(tmp_path / "fresh")
    (fresh / "data/runs").mkdir(parents=True)
    (fresh / "data/runs/kept.txt").write_text("an earlier result\n")
    if damage == "corrupted byte":
        path, expected = _flip_byte(plain, tmp_path / "bad.tar", run), f"{run}: checksum mismatch"
    elif damage == "missing file":
        path = repack(plain, tmp_path / "bad.tar", drop=[run])
        expected = f"missing from the archive:\n  {run}"
    elif damage == "truncated":
        path = tmp_path / "bad.tar"
        path.write_bytes(plain.read_bytes()[: plain.stat().st_size // 2])
        expected = "truncated or corrupt"
    elif damage == "foreign archive":
        path = tmp_path / "bad.tar"
        with tarfile.open(path, "w") as archive:
            archive.add(fresh / "Snakefile", arcname="Snakefile")
        expected = "not a tcprepro bundle"
    elif damage == "not an archive":
        path = tmp_path / "bad.tar"
        path.write_bytes(b"\x89HDF\r\n" + os.urandom(4000))
        expected = "not a readable tar archive"
    else:
        path = plain
        scenario = fresh / "workflow/scenarios/D3.yaml"
        text = scenario.read_text()
        assert text.count("\nseed: 1\n") == 1
        scenario.write_text(text.replace("\nseed: 1\n", "\nseed: 99\n"))
        expected = "scenario changed (seed: 1 -> 99)"
    before = snapshot(fresh / "data")
    result = tcprepro(fresh, "bundle", "import", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in result.stderr
    assert snapshot(fresh / "data") == before
    assert not list(fresh.glob(".tcprepro-bundle-*"))  # the staging folder is gone too


def test_import_names_a_changed_ns3_version(exported, tmp_path, monkeypatch):
    from tcprepro import provenance

    _, bundle = exported
    fresh = study_d_workflow(tmp_path / "fresh")
    versions = dict(provenance.software_versions())
    real = provenance.software_versions
    monkeypatch.setattr(
        provenance, "software_versions", lambda models=None: {**real(models), "ns3": "3.45"}
    )
    config = load_workflow_config(fresh / "workflow/config.yaml")
    monkeypatch.chdir(fresh)
    with pytest.raises(ConfigError, match=r"6 of 6 runs") as error:
        import_bundle(bundle, config, fresh)
    assert f"ns-3 version changed ({versions['ns3']} -> 3.45)" in str(error.value)
    assert "scenario changed" not in str(error.value)
    assert not (fresh / "data").exists()


def test_import_replaces_stale_local_runs_and_the_records_that_would_rerun_them(exported, tmp_path):
    _, bundle = exported
    fresh = study_d_workflow(tmp_path / "fresh")
    smoke = ("--profile", "workflow/profiles/smoke", "--cores", "2")
    scenario = fresh / "workflow/scenarios/D3.yaml"
    original = scenario.read_text()
    assert original.count("\nseed: 1\n") == 1
    scenario.write_text(original.replace("\nseed: 1\n", "\nseed: 99\n"))
    snakemake(fresh, *smoke, "data/combined/D3.nc")
    scenario.write_text(original)
    # D3's runs here carry another cache key, and Snakemake's records of them say so
    config = load_workflow_config(fresh / "workflow/config.yaml")
    batches = sum(len(config.batches(f, "smoke")) for f in ("D1", "D3", "D4"))
    assert job_counts(snakemake(fresh, *smoke, "-n").stdout)["simulate_batch"] == batches

    result = tcprepro(fresh, "bundle", "import", str(bundle))
    assert result.returncode == 0, result.stderr
    assert "(3 replaced;" in result.stdout  # D3's two runs and its combined dataset
    counts = job_counts(snakemake(fresh, *smoke, "-n").stdout)
    assert "simulate_batch" not in counts
    assert "combine" not in counts
