"""Float placement of the report (paper/preamble.tex): no float alone on a page it leaves
half empty when text could follow it, and a generated table whole where it fits a page."""

import pytest

from conftest import compile_latex, pdf_text


def _pages(tmp_path, body):
    """The text of each page of ``body`` compiled with the report's preamble."""
    compile_latex(tmp_path, body)
    return pdf_text(tmp_path / "t.pdf").split("\f")[:-1]


def _text(lines):
    return "\n\n".join(f"Paragraph {i} of the text." for i in range(lines))


def _figure(name, height):
    return (
        "\\begin{figure}[!htbp]\\centering\\rule{0.5\\linewidth}{" + height + "}"
        "\\caption{" + name + "}\\end{figure}\n"
    )


@pytest.mark.needs_latex
def test_a_waiting_figure_shares_its_page_with_what_the_barrier_holds_back(tmp_path):
    """A cross-check figure that does not fit below the text goes to the next page with the
    table that follows it, not to a page of its own (issue 34)."""
    body = _text(45) + _figure("FIGX", "0.45\\textheight") + "\\reprofloatbarrier\nAFTER text."
    pages = _pages(tmp_path, body)
    [figure_page] = [i for i, p in enumerate(pages) if "FIGX" in p]
    [after_page] = [i for i, p in enumerate(pages) if "AFTER" in p]
    assert figure_page == after_page == 1
    assert pages[figure_page].index("FIGX") < pages[figure_page].index("AFTER")
    assert len(pages) == 2


@pytest.mark.needs_latex
def test_floats_that_do_not_fit_one_page_still_come_before_what_follows(tmp_path):
    figures = "".join(_figure(f"FIG{i}", "0.4\\textheight") for i in range(4))
    pages = _pages(tmp_path, _text(30) + figures + "\\reprofloatbarrier\nAFTER text.")
    last_figure = max(i for i, p in enumerate(pages) for k in range(4) if f"FIG{k}" in p)
    [after_page] = [i for i, p in enumerate(pages) if "AFTER" in p]
    assert after_page >= last_figure
    assert "AFTER" not in "".join(pages[:last_figure])


def _longtable(path, rows):
    lines = [
        r"\begin{longtable}{ll}",
        r"\caption{TABLECAPTION}\\",
        r"\toprule a & b \\ \midrule",
        r"\endfirsthead",
        r"\toprule a & b \\ \midrule",
        r"\endhead",
        *(rf"row{i} & {i} \\" for i in range(rows)),
        r"\bottomrule",
        r"\end{longtable}",
    ]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.needs_latex
def test_a_table_that_fits_a_page_is_kept_whole(tmp_path):
    _longtable(tmp_path / "short.tex", 25)
    pages = _pages(tmp_path, _text(40) + "\n\\reprowhole{short.tex}\n")
    [start] = [i for i, p in enumerate(pages) if "TABLECAPTION" in p]
    assert "row0" in pages[start]
    assert "row24" in pages[start]
    assert start == 1  # not enough room left under the text: a new page


@pytest.mark.needs_latex
def test_a_table_that_fits_below_the_text_starts_there(tmp_path):
    _longtable(tmp_path / "short.tex", 10)
    pages = _pages(tmp_path, _text(5) + "\n\\reprowhole{short.tex}\n")
    assert len(pages) == 1
    assert "row9" in pages[0]


@pytest.mark.needs_latex
def test_a_longer_table_starts_at_once_and_repeats_its_header(tmp_path):
    _longtable(tmp_path / "long.tex", 120)
    pages = _pages(tmp_path, _text(5) + "\n\\reprowhole{long.tex}\n")
    assert "TABLECAPTION" in pages[0]
    assert "row0" in pages[0]
    assert "row119" in pages[-1]
    assert all(p.lstrip().startswith("a") for p in pages[1:])  # the header, again


@pytest.mark.needs_latex
def test_a_float_after_a_table_under_a_top_float_stays_on_the_page(tmp_path):
    """longtable gives the page its full height back when it starts, top float or not: a
    figure placed after the table on that page ran past its bottom (X7 in the report)."""
    _longtable(tmp_path / "short.tex", 18)
    body = (
        _text(40)
        + _figure("FIGA", "0.3\\textheight")
        + "\\reprofloatbarrier\n\\reprowhole{short.tex}\n"
        + _figure("FIGB", "0.3\\textheight")
        + "\\reprofloatbarrier\n\\reprowhole{short.tex}\nEND\n"
    )
    pages = _pages(tmp_path, body)
    log = (tmp_path / "t.log").read_text(errors="replace")
    assert "Overfull \\vbox" not in log
    assert [i for i, p in enumerate(pages) if "FIGA" in p] == [1]
    [figure_b] = [i for i, p in enumerate(pages) if "FIGB" in p]
    assert "END" in pages[figure_b] or figure_b < len(pages) - 1


@pytest.mark.needs_latex
def test_a_table_under_a_waiting_figure_is_kept_whole(tmp_path):
    """The figure goes to the top of the next page; its table fits a page but not the rest
    of that one: the table starts on the page after, whole."""
    _longtable(tmp_path / "short.tex", 35)
    body = (
        _text(45)
        + _figure("FIGX", "0.45\\textheight")
        + ("\\reprofloatbarrier\n\\reprowhole{short.tex}\n")
    )
    pages = _pages(tmp_path, body)
    [start] = [i for i, p in enumerate(pages) if "TABLECAPTION" in p]
    assert "row0" in pages[start]
    assert "row34" in pages[start]
    assert [i for i, p in enumerate(pages) if "FIGX" in p] == [start - 1]
