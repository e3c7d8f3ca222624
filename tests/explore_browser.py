"""Drive the explorer in JupyterLab with headless Chromium (the browser test's helper).

:class:`LabSession` starts JupyterLab on a free local port, in a folder of its own, on
a copy of ``notebooks/explore.ipynb`` whose parameters name the figure, the repository
and the folder holding ``data/``; then Debian's Chromium (``/usr/bin/chromium``) through
its driver (``/usr/bin/chromedriver``, given explicitly: nothing is downloaded) opens
the notebook, runs its cells and works the explorer's controls as a person would.

Run as a script, it makes the README's screenshots::

    .venv/bin/python tests/explore_browser.py --figure A1 --set topology.uplink.buffer_pkts=57 \\
        --screenshot docs/explorer-A1.png
    .venv/bin/python tests/explore_browser.py --figure X1 --linux --screenshot docs/explorer-X1.png
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: the flags this host's Chromium needs (root user, no network, no GPU)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1300,1700",
)
#: how long any one step may take before the session gives up (liveness, not a target)
LIVENESS_S = 300.0


def missing_capability() -> str | None:
    """What this host lacks to run the browser test, else None."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        return "Chromium and its driver (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium (pip install -e '.[dev]')"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def notebook_with(parameters: dict[str, Any], output: Path) -> Path:
    """A copy of ``notebooks/explore.ipynb`` with its parameters cell's values replaced."""
    notebook = json.loads((ROOT / "notebooks/explore.ipynb").read_text())
    [cell] = [c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", [])]
    source = "".join(cell["source"])
    for name, value in parameters.items():
        source, count = re.subn(
            rf"^{name} = .*$", f"{name} = {value!r}", source, count=1, flags=re.M
        )
        if count != 1:
            raise ValueError(f"explore.ipynb has no parameter {name}")
    cell["source"] = source
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(notebook, indent=1))
    return output


class LabSession:
    """JupyterLab and a headless Chromium on one explorer notebook (a context manager)."""

    def __init__(self, folder: Path, parameters: dict[str, Any]) -> None:
        self.folder = folder
        self.parameters = parameters
        self.port = _free_port()
        self.token = os.urandom(12).hex()
        self.server: subprocess.Popen[bytes] | None = None
        self.driver: Any = None
        self.log = folder / "jupyterlab.log"

    def __enter__(self) -> LabSession:
        notebooks = self.folder / "notebooks"
        notebook_with(self.parameters, notebooks / "explore.ipynb")
        # no "official Jupyter news?" question over the page (and no fetch: no network)
        news = self.folder / "lab-settings/@jupyterlab/apputils-extension"
        news.mkdir(parents=True, exist_ok=True)
        (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
        env = {
            **os.environ,
            "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
            "JUPYTER_CONFIG_DIR": str(self.folder / "jupyter-config"),
            "JUPYTER_RUNTIME_DIR": str(self.folder / "jupyter-runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(self.folder / "lab-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.folder / "lab-workspaces"),
            "IPYTHONDIR": str(self.folder / "ipython"),
        }
        with self.log.open("wb") as log:
            self.server = subprocess.Popen(
                [
                    BIN / "jupyter",
                    "lab",
                    "--no-browser",
                    "--ip=127.0.0.1",
                    f"--port={self.port}",
                    f"--ServerApp.token={self.token}",
                    f"--ServerApp.root_dir={notebooks}",
                    "--ServerApp.allow_root=True",
                    "--LabApp.expose_app_in_browser=True",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=notebooks,
            )
        self._wait_for_server()
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={self.folder / 'chromium-profile'}")
        self.driver = webdriver.Chrome(
            service=Service(executable_path=str(CHROMEDRIVER)), options=options
        )
        return self

    def _wait_for_server(self) -> None:
        url = f"http://127.0.0.1:{self.port}/api/status?token={self.token}"
        deadline = time.monotonic() + LIVENESS_S
        while time.monotonic() < deadline:
            assert self.server is not None
            if self.server.poll() is not None:
                raise RuntimeError(f"JupyterLab exited:\n{self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise TimeoutError(f"JupyterLab did not answer in {LIVENESS_S:.0f} s")

    def __exit__(self, *exc: object) -> None:
        if self.driver is not None:
            self.driver.quit()
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()

    # ---- what a person does -------------------------------------------------------

    def wait_for(self, script: str, what: str, timeout_s: float = LIVENESS_S) -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = self.driver.execute_script(f"return ({script});")
            if value:
                return value
            time.sleep(0.25)
        shot = self.screenshot(self.folder / "timed-out.png")
        status = self.driver.execute_script(
            "return document.querySelector('.tcprepro-status')?.innerText;"
        )
        raise TimeoutError(
            f"{what}: not within {timeout_s:.0f} s (liveness timeout); status {status!r}, "
            f"screenshot {shot}"
        )

    def open_and_run_all(self) -> None:
        """Open the notebook, wait for its kernel, run every cell, wait for the explorer."""
        self.driver.get(
            f"http://127.0.0.1:{self.port}/lab/tree/explore.ipynb?token={self.token}&reset"
        )
        kernel = "window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel"
        self.wait_for(f"{kernel}?.status === 'idle'", "the notebook's kernel started")
        self.driver.execute_script(
            "window.jupyterapp.commands.execute('application:toggle-left-area');"
            "window.jupyterapp.commands.execute('notebook:run-all-cells');"
        )
        self.wait_for("document.querySelector('.tcprepro-explorer')", "the explorer shown")

    def wait_for_cell(self, contains: str = "", timeout_s: float = LIVENESS_S) -> float:
        """Wait until the results table is that of a finished cell; seconds waited."""
        started = time.monotonic()
        # [data-cell*=""] matches nothing (CSS): any table when no text is wanted
        wanted = f"[data-cell*={json.dumps(contains)}]" if contains else "[data-cell]"
        selector = f".tcprepro-results table{wanted}"
        self.wait_for(
            f"document.querySelector({json.dumps(selector)})"
            " && document.querySelector('.tcprepro-status').innerText.startsWith('done')",
            f"a drawn result for {contains or 'the first cell'}",
            timeout_s,
        )
        return time.monotonic() - started

    def set_control(self, key: str, text: str) -> float:
        """Type ``text`` into the control of knob ``key`` and press Enter; the time of Enter."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        css = re.sub(r"[^A-Za-z0-9_-]", "-", key)
        field = self.driver.find_element(By.CSS_SELECTOR, f".tcprepro-knob-{css} input")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", field)
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(text, Keys.ENTER)
        return time.monotonic()

    def shown_value(self, backend: str, flow: str, metric: str) -> str:
        """The text of one number of the results table."""
        from selenium.webdriver.common.by import By

        selector = (
            f'.tcprepro-results td.tcprepro-value[data-backend="{backend}"]'
            f'[data-flow="{flow}"][data-metric="{metric}"]'
        )
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def screenshot(self, path: Path) -> Path:
        """Save the explorer, scrolled into view, as a PNG."""
        from selenium.webdriver.common.by import By

        for panel in self.driver.find_elements(By.CSS_SELECTOR, ".tcprepro-explorer"):
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'start'});", panel)
        time.sleep(0.5)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))
        return path


def main(argv: list[str] | None = None) -> int:
    """Open an explorer, optionally change controls, and save a screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--figure", default="A1")
    parser.add_argument("--tier", default="smoke")
    parser.add_argument("--linux", action="store_true", help="tick Linux beside")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=TEXT")
    parser.add_argument("--workdir", help="folder holding data/ (default: the repository)")
    parser.add_argument("--screenshot", required=True)
    parser.add_argument("--timeout", type=float, default=LIVENESS_S * 3)
    args = parser.parse_args(argv)
    missing = missing_capability()
    if missing:
        print(f"missing capability: {missing}", file=sys.stderr)
        return 3
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"tcprepro-explorer-{os.getpid()}"
    parameters = {
        "figure_id": args.figure,
        "tier": args.tier,
        "linux": args.linux,
        "root": str(ROOT),
        "workdir": str(Path(args.workdir).resolve()) if args.workdir else None,
    }
    try:
        with LabSession(folder, parameters) as lab:
            lab.open_and_run_all()
            print(f"first cell drawn in {lab.wait_for_cell('', args.timeout):.1f} s")
            for item in args.set:
                key, _, text = item.partition("=")
                pressed = lab.set_control(key, text)
                lab.wait_for_cell(f"{key} = {text}", args.timeout)
                print(f"{key} = {text}: drawn {time.monotonic() - pressed:.1f} s after Enter")
            print(lab.screenshot(Path(args.screenshot)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
