"""The traffic tools of the bulk flows (tcprepro.emulation.iperf): iperf 2 and iperf3
command lines, socket buffers, pacing and write sizes (study D emulated, D1.1/D2.1).
No root."""

import math

import pytest

from conftest import DUMBBELL
from tcprepro.emulation import linux
from tcprepro.errors import ConfigError
from tcprepro.network_plan import build_plan
from tcprepro.scenario_io import apply_overrides, load_scenario_dict
from test_emulation_linux import SS_OUTPUT


def _iperf_view(send_buffer, recv_buffer, tool):
    from tcprepro.emulation.traces import View

    data = apply_overrides(
        DUMBBELL, [f"tcp.send_buffer={send_buffer}", f"tcp.recv_buffer={recv_buffer}"]
    )
    scenario = load_scenario_dict(data)
    return View(scenario, build_plan(scenario, 0), tool)


def test_iperf2_sets_the_receive_buffer_at_the_server_and_the_send_buffer_at_the_client():
    from tcprepro.emulation.iperf import client_argv, server_argv

    view = _iperf_view("16KiB", "16MiB", "iperf2")
    client, server = client_argv(view, 0), server_argv(view, 0)
    assert client[0] == "iperf"
    assert server[0] == "iperf"
    assert client[client.index("-w") + 1] == str(16 * 1024)
    assert server[server.index("-w") + 1] == str(16 * 1024 * 1024)
    assert client[client.index("-Z") + 1] == "reno"
    assert client[client.index("-B") + 1].endswith(":40001")  # ss finds the socket by port
    # iperf3 can only give both sockets one value: the smaller
    view3 = _iperf_view("16KiB", "16MiB", "iperf3")
    argv3 = client_argv(view3, 0)
    assert argv3[argv3.index("-w") + 1] == str(16 * 1024)
    assert "-w" not in server_argv(view3, 0)


def test_a_paced_flow_asks_the_kernel_for_pacing_and_ss_says_so():
    """``pacing: true`` gives the client a maximum pacing rate (Linux's internal TCP pacing
    then runs at the kernel's own rate), with either tool; an unpaced flow sets none. ss
    prints ``pacing_rate <rate>/<max>`` only once a maximum is set."""
    from tcprepro.emulation.iperf import PACING_MAX_BPS, client_argv
    from tcprepro.emulation.traces import View

    for tool in ("iperf2", "iperf3"):
        plain = client_argv(_iperf_view("16MiB", "16MiB", tool), 0)
        assert "--fq-rate" not in plain
        scenario = load_scenario_dict(apply_overrides(DUMBBELL, ["flows.f0.pacing=true"]))
        paced = client_argv(View(scenario, build_plan(scenario, 0), tool), 0)
        assert paced[paced.index("--fq-rate") + 1] == str(PACING_MAX_BPS), tool
    sockets = linux.parse_ss(
        "ESTAB 0 0 10.9.0.1:40001 10.9.0.2:5201\n"
        "\t reno mss:948 cwnd:20 pacing_rate 2.5Mbps/10Gbps delivery_rate 2Mbps\n"
        "ESTAB 0 0 10.9.0.1:40002 10.9.0.2:5202\n"
        "\t reno mss:948 cwnd:20 pacing_rate 80000000bps/10000000000bps\n"
    )
    assert [linux.max_pacing_bps(s) for s in sockets] == [1e10, 1e10]
    (unpaced,) = linux.parse_ss(SS_OUTPUT)[1:]
    assert math.isnan(linux.max_pacing_bps(unpaced))


def test_a_flow_write_size_is_the_clients_write_length_and_the_dataset_records_it():
    """``write_size`` is iperf's ``-l`` with either tool and the sized flows' send call;
    unset, no ``-l`` (the tool's default, recorded as such), and the scenario's canonical
    form, hence every existing cache key, is the one it had before the field existed."""
    from pathlib import Path

    from tcprepro.emulation import transfers
    from tcprepro.emulation.iperf import TOOL_WRITE_BYTES, client_argv, write_bytes
    from tcprepro.emulation.traces import View

    plain = load_scenario_dict(DUMBBELL)
    assert "write_size" not in plain.resolved()["flows"]["f0"]
    sized = load_scenario_dict(apply_overrides(DUMBBELL, ["flows.f0.write_size=8KiB"]))
    assert sized.resolved()["flows"]["f0"]["write_size"] == "8192B"
    assert sized.cache_key(0, "mininet", {}) != plain.cache_key(0, "mininet", {})
    for tool in ("iperf2", "iperf3"):
        argv = client_argv(View(plain, build_plan(plain, 0), tool), 0)
        assert "-l" not in argv, tool
        assert write_bytes(build_plan(plain, 0).flows[0], tool) == TOOL_WRITE_BYTES[tool]
        argv = client_argv(View(sized, build_plan(sized, 0), tool), 0)
        assert argv[argv.index("-l") + 1] == "8192", tool
        assert write_bytes(build_plan(sized, 0).flows[0], tool) == 8192
    files = {"ready": Path("r"), "go": Path("g"), "out": Path("o")}
    argv = transfers.sender_argv(Path("plan"), "10.0.0.2", 5201, 1.0, files, write_bytes=8192)
    assert argv[argv.index("--write") + 1] == "8192"
    assert "--write" not in transfers.sender_argv(Path("plan"), "10.0.0.2", 5201, 1.0, files)
    with pytest.raises(ConfigError, match=r"flows\.f0\.write_size"):
        load_scenario_dict(apply_overrides(DUMBBELL, ["flows.f0.write_size=-8KiB"]))
