# tcprepro -- the two commands of the README:
#
#   make figures   set up, then regenerate every figure, the claims report and the paper
#                  (quick profile; PROFILE=smoke or PROFILE=paper for the other tiers)
#   make test      set up, then run the test suite
#
# Both install what they need when it is missing: Debian packages (apt-get, as root
# or through sudo), a Python 3.11 virtualenv in .venv with `pip install -e ".[dev]"`
# (refreshed when pyproject.toml changes) and tcprepro's compiled ns-3 models.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PROFILE ?= quick
CORES ?= $(shell nproc 2>/dev/null || echo 2)
PYTEST_ARGS ?=
# The suite runs in three phases, each on $(CORES) pytest workers taking one test file
# at a time, except the last. 1: everything but the emulations. 2: the virtual-clock
# UML runs (a UML boot uses one core and keeps exact link timing whatever the load).
# 3: alone, what runs in real time, whose probes and wall budgets a busy core would
# distort (the VM route's boot, under QEMU TCG without KVM, and the Mininet runs), and
# the UML tests that check what a boot leaves on the host.
PYTEST_WORKERS ?= $(CORES)
# each phase ends with its slowest tests and fixtures (setup, call and teardown)
PYTEST_REPORT := --durations=25
# phase 2's files, longest first (one file per worker at a time)
SIDE_BY_SIDE_TESTS := tests/test_uml_twins_bc.py tests/test_uml_twins_ad.py tests/test_uml_runs.py
ALONE_TESTS := tests/test_vm.py tests/test_emulation.py tests/test_uml.py
# emulated figures (X1): empty = the profile's setting (auto for quick and paper);
# EMULATION=exclude | include | auto overrides it
EMULATION ?=
SNAKEMAKE_CONFIG := $(if $(EMULATION),--config tier=$(PROFILE) emulation=$(EMULATION),)

# Debian packages: a C++ compiler for the ns-3 models, LaTeX for the paper,
# Mininet, iperf3, iperf (2: separate send/receive buffers, figure D1.1), ethtool,
# ping and iproute2 for the emulations, and for their
# full-kernel VM route (hosts without netem or a variant): Debian's kernel, QEMU,
# and busybox-static (virtme-ng's initramfs). The emulated cross-check X1 is part
# of `make figures` whenever the host can run it.
APT_EMULATION := iproute2 mininet iperf3 iperf ethtool iputils-ping qemu-system-x86 \
                 busybox-static linux-image-amd64
# LaTeX: T1-encoded Latin Modern fonts (lmodern) and poppler-utils (pdftotext, pdftoppm:
# the report's build check reads the PDF's pages).
APT_LATEX := latexmk texlive-latex-base texlive-latex-recommended lmodern poppler-utils
# The virtual-clock route (User-mode Linux): tcprepro builds its kernel once from
# Debian's kernel source (`tcprepro build-uml-kernel`, cached in ~/.cache/tcprepro/uml).
APT_UML := linux-source-6.1 build-essential flex bison bc libelf-dev pkg-config
APT_FIGURES := g++ make git $(APT_LATEX) $(APT_EMULATION) $(APT_UML)
# The SLURM test (tests/test_slurm.py) runs a one-node cluster on this machine: munge,
# slurmctld, slurmd, the client commands, and slurmdbd with a private MariaDB (sacct needs
# the accounting database). The test starts its own daemons with their own configuration
# in a temporary folder, and stops them.
APT_SLURM := munge slurmctld slurmd slurm-client slurmdbd mariadb-server-core \
             mariadb-client-core
# The explorer's browser test (tests/test_explore_browser.py) drives Debian's headless
# Chromium through its driver, both given by path (nothing is downloaded).
APT_BROWSER := chromium chromium-driver
APT_TEST := $(APT_FIGURES) $(APT_SLURM) $(APT_BROWSER)

export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: help figures test setup-figures setup-test apt-figures apt-test venv mininet-link \
        models uml-kernel plan bench lint format clean clean-results

help:
	@sed -n '2,10p' Makefile | sed 's/^# \{0,1\}//'

figures: setup-figures
	tcprepro plan --tier $(PROFILE) --cores $(CORES)
	snakemake --profile workflow/profiles/$(PROFILE) --cores $(CORES) $(SNAKEMAKE_CONFIG)
	@cat data/logs/claims/*.log
	@echo "Paper: paper/build/tcprepro.pdf   Figures: paper/figures/   Data: data/"

test: setup-test
	pytest -n $(PYTEST_WORKERS) --dist loadfile \
	  $(foreach f,$(SIDE_BY_SIDE_TESTS) $(ALONE_TESTS),--ignore=$(f)) $(PYTEST_REPORT) $(PYTEST_ARGS) || [ $$? -eq 5 ]
	pytest -n $(PYTEST_WORKERS) --dist loadfile $(SIDE_BY_SIDE_TESTS) $(PYTEST_REPORT) $(PYTEST_ARGS) || [ $$? -eq 5 ]
	pytest $(ALONE_TESTS) $(PYTEST_REPORT) $(PYTEST_ARGS) || [ $$? -eq 5 ]

# Benchmarks: tcprepro against a native ns-3 program, start-up, scaling, memory, storage,
# the smoke workflow end to end, the plan's calibration samples and the plan against a build
# (these two in ROUNDS rounds, default 3, each round reported),
# written to BENCHMARKS.md with the machine (the raw numbers to benchmarks/results.json).
# RECORDED=DIR adds the logs of a make figures run in DIR (per invocation and per stage);
# to add them to the numbers already measured:
#   tcprepro bench --from-json benchmarks/results.json --recorded DIR --write BENCHMARKS.md
bench: setup-figures
	tcprepro bench --write BENCHMARKS.md --json benchmarks/results.json \
	  --rounds $(or $(ROUNDS),3) $(if $(RECORDED),--recorded $(RECORDED))

setup-figures: apt-figures venv mininet-link models uml-kernel
setup-test: apt-test venv mininet-link models uml-kernel

# Install the Debian packages in $(1) that are not installed yet.
define apt_install
	@missing=""; \
	for pkg in $(1); do dpkg -s "$$pkg" >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if ! command -v $(PYTHON) >/dev/null 2>&1; then missing="$$missing python3.11 python3.11-venv"; fi; \
	if [ -n "$$missing" ]; then \
	  if ! command -v apt-get >/dev/null 2>&1; then \
	    echo "Please install:$$missing (no apt-get on this host)"; exit 1; fi; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	  echo "Installing Debian packages:$$missing"; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing \
	    >/dev/null; \
	fi
endef

apt-figures:
	$(call apt_install,$(APT_FIGURES))

apt-test:
	$(call apt_install,$(APT_TEST))

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@

# Debian's Mininet is a system Python module (/usr/lib/python3/dist-packages): link that
# one package into .venv (not --system-site-packages, which would let every Debian
# module stand in for a missing dependency of pyproject.toml). Runs every time; fast.
MININET_SYSTEM := /usr/lib/python3/dist-packages/mininet
mininet-link: venv
	@site="$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"; \
	if [ -d $(MININET_SYSTEM) ] && [ "$$(readlink "$$site/mininet")" != $(MININET_SYSTEM) ]; then \
	  ln -sfn $(MININET_SYSTEM) "$$site/mininet"; echo "linked Debian's Mininet into $(VENV)"; fi

models: venv
	tcprepro build-models

# the kernel of the virtual-clock emulation route: built once (a few minutes), then cached
uml-kernel: venv
	tcprepro build-uml-kernel

plan: venv
	tcprepro plan --tier $(PROFILE) --cores $(CORES)

lint: venv
	ruff check src tests notebooks
	ruff format --check src tests notebooks
	snakefmt --check Snakefile workflow/rules

format: venv
	ruff check --fix src tests notebooks
	ruff format src tests notebooks
	snakefmt Snakefile workflow/rules

clean-results:
	rm -rf data/runs data/combined data/notebooks data/logs data/claims \
	  paper/figures paper/generated paper/build .snakemake

clean: clean-results
	rm -rf $(VENV)
