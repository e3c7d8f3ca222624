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


def test_format_duration_and_size_print_what_parse_reads():
    assert units.format_duration(0.014) == "14 ms"
    assert units.format_duration(0) == "0 ms"
    assert units.format_duration(1.5) == "1.5 s"
    assert units.format_size(16 * 2**20) == "16 MiB"
    assert units.format_size(64 * 1024) == "64 KiB"
    assert units.format_size(200_000) == "200 kB"  # whole in kB, not in KiB
    assert units.format_size(1448) == "1448 B"
    for text in ("14ms", "650ms", "2s", "16MiB", "256KiB", "200kB", "1448B"):
        parse = units.parse_size if text.endswith("B") else units.parse_duration
        printed = units.format_duration if parse is units.parse_duration else units.format_size
        assert parse(printed(parse(text)).replace(" ", "")) == parse(text), text


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("50Mbps", "50 Mb/s"),
        ("14ms", "14 ms"),
        ("1.5s", "1.5 s"),
        ("16MiB", "16 MiB"),
        ("8KiB", "8 KiB"),
        # not quantities: names, case names, bare numbers (a bare 0 has no unit to print)
        ("NewReno", "NewReno"),
        ("Reno.FIFO.20", "Reno.FIFO.20"),
        ("0.00001", "0.00001"),
        ("0", "0"),
    ],
)
def test_format_quantity_prints_a_value_written_with_its_unit(text, printed):
    assert units.format_quantity(text) == printed


@pytest.mark.parametrize(
    ("value", "printed"),
    [(0.001, "0.001"), (0.0001, "0.0001"), (1e-05, "1e-5"), (3e-07, "3e-7"), (2.5, "2.5")],
)
def test_format_number_prints_one_form_however_the_number_was_written(value, printed):
    assert units.format_number(value) == printed
    assert units.format_number(float(repr(value))) == printed
