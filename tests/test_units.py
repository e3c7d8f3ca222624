import pytest

from tcprepro import units


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Mbps", 10e6),
        ("2 Mb/s", 2e6),
        ("1.5Gbps", 1.5e9),
        ("500kbit/s", 5e5),
        ("1.2MB/s", 9.6e6),
        ("240kB/s", 1.92e6),
        (0, 0.0),
    ],
)
def test_rates(text, bps):
    assert units.parse_rate(text) == pytest.approx(bps)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("42ms", 0.042), ("1.5s", 1.5), ("10min", 600), ("100us", 1e-4), ("0", 0), (0, 0)],
)
def test_durations(text, seconds):
    assert units.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "size"),
    [("1448B", 1448), ("200kB", 200_000), ("16MiB", 16 * 2**20), ("1.5kB", 1500)],
)
def test_sizes(text, size):
    assert units.parse_size(text) == size


@pytest.mark.parametrize(
    ("parser", "value", "message"),
    [
        (units.parse_rate, 10, "needs a unit"),
        (units.parse_rate, "10 furlongs", "cannot read"),
        (units.parse_duration, 42, "needs a unit"),
        (units.parse_duration, "42 parsecs", "cannot read"),
        (units.parse_size, "8KB", "ambiguous"),
        (units.parse_size, "0.5B", "whole number"),
        (units.parse_rate, True, "expected a rate"),
    ],
)
def test_bad_quantities(parser, value, message):
    with pytest.raises(ValueError, match=message):
        parser(value)


def test_format_rate():
    assert units.format_rate(10e6) == "10 Mb/s"
    assert units.format_rate(2.5e9) == "2.5 Gb/s"
    assert units.format_rate(300) == "300 b/s"
