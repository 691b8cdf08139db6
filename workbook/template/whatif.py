"""The What-if sheet: the transaction rate and the RSA key size varied, the other inputs as entered.

Four tables, each over a column of values: the installed cards' utilization and queueing
delay as the rate grows to their limit, the cards required as the rate grows beyond it (in
multiples of TxRate), the closed-loop throughput and CPU per RSA key size, and the share of
the workload's signatures moved to ML-DSA-65 against the coprocessors required (issue 65; the
quantum-safe card times are assumptions, said under the table).  Columns I-L,
not printed, feed the four scatter charts under the tables (``#N/A`` where a result is an
error, which a chart leaves as a gap).
"""

from __future__ import annotations

from openpyxl.chart import Reference
from openpyxl.styles import Font

from cryptoplan.model.params import RSA_KEY_SIZES
from ._builder import (AMS_ARGS, F_CARDS, F_MS, F_PCT, F_TPS, F_US, NOTE_FONT, SERIES_FONT, WRAP_TOP, Builder, Cell, Expr,
                       Name, header_row, heading, print_setup, scatter_chart, set_widths, titled_sheet)

__all__ = ["add_whatif"]

_LIMIT_SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
_GROWTH_FACTORS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def add_whatif(b: Builder):
    """The What-if sheet: four tables (rate to the limit, cards required, RSA key size, quantum-safe share),
    charts under them."""
    ws = titled_sheet(b, "What-if", "What-if: transaction rate and key size",
                      "Other inputs come from the Inputs sheet. The first table grows the rate up to what the "
                      "installed cards carry; the second counts the cards needed beyond it. Columns I-L (not "
                      "printed) feed the charts (#N/A where a result is an error: a gap, not a zero).", "H")
    ws.row_dimensions[2].height = 42       # three lines within the printed columns A-H
    limit = _limit_table(b, ws)
    required = _required_table(b, ws, limit[2] + 2)
    key_size = _key_size_table(b, ws, required[2] + 2)
    migrated = _migration_table(b, ws, key_size[2] + 2)
    anchor = migrated[2] + 3
    _charts(ws, limit, required, key_size, anchor)
    set_widths(ws, {"A": 17, "B": 14, "C": 15, "D": 15, "E": 15, "F": 15, "G": 3, "H": 24,
                    "I": 12, "J": 12, "K": 12, "L": 12})
    for r in (limit[0], required[0], key_size[0], migrated[0]):
        ws.row_dimensions[r].height = 30
    ws.freeze_panes = "A4"
    print_setup(ws, f"A1:H{anchor + 30}", landscape=False)     # columns I-L only feed the charts
    ws.page_setup.fitToHeight = 1  # one page: the PNG rendering and a printout


def _gap(b, ws, coord, source, number_format):
    """Chart series cell: the value, or #N/A where ``source`` is not a number.

    Excel and LibreOffice both leave a gap at #N/A in a scatter chart; error text (how
    xlwings returns a failure) would be drawn as zero.
    """
    b.native(ws, coord, f"=IF(ISNUMBER({source}),{source},NA())", number_format)


def _limit_table(b: Builder, ws) -> tuple:
    """The installed cards as the rate grows, up to the busier card type's limit (row 5), from row 4.

    Returns
    -------
    (int, int, int)
        The table's header row and its first and last rows.
    """
    n = Name
    ams = AMS_ARGS
    heading(ws, 4, "Installed cards as the rate grows, up to the busier card type's limit")
    ws["A5"] = "Limit of the installed cards"
    ws["A5"].font = Font(bold=True)
    ws.merge_cells("A5:B5")
    acc1 = (1, *ams, "accelerator", n("Accelerators"), n("Recipients"))
    cop1 = (1, *ams, "coprocessor", n("Coprocessors"), n("Recipients"))
    b.udf(ws, "I5", "CARD_UTILIZATION", *acc1, number_format="0.0000%")
    b.udf(ws, "J5", "CARD_UTILIZATION", *cop1, number_format="0.0000%")
    b.native(ws, "C5", "=IF(AND(ISNUMBER(I5),ISNUMBER(J5)),1/MAX(I5,J5),IF(ISNUMBER(I5),J5,I5))",
             '#,##0 "txn/s"')
    ws["C5"].font = Font(bold=True)
    ws["D5"] = "the busier card type at 100% (RMF summary)"
    ws["D5"].font = NOTE_FONT
    ws["I4"] = "Chart data (not printed); row 5: utilization at 1 txn/s"
    ws["I4"].font = SERIES_FONT
    heads = ["Transaction rate", "Share of the limit", "Accelerator utilization",
             "Coprocessor utilization", "Accelerator delay per txn", "Coprocessor delay per txn"]
    header_row(ws, 6, heads)
    for j, text in enumerate(["Accel. util.", "Coproc. util.", "Accel. delay", "Coproc. delay"], 9):
        ws.cell(6, j, text).font = SERIES_FONT
    first = 7
    for i, share in enumerate(_LIMIT_SHARES):
        r = first + i
        ws.cell(r, 2, share).number_format = "0%"
        b.native(ws, f"A{r}", f"=$C$5*B{r}", '#,##0 "txn/s"')
        acc = (Cell(f"A{r}"), *ams, "accelerator", n("Accelerators"), n("Recipients"))
        cop = (Cell(f"A{r}"), *ams, "coprocessor", n("Coprocessors"), n("Recipients"))
        b.udf(ws, f"C{r}", "CARD_UTILIZATION", *acc, number_format=F_PCT)
        b.udf(ws, f"D{r}", "CARD_UTILIZATION", *cop, number_format=F_PCT)
        b.udf(ws, f"E{r}", "CRYPTO_WAIT_MS", *acc, number_format=F_MS)
        b.udf(ws, f"F{r}", "CRYPTO_WAIT_MS", *cop, number_format=F_MS)
        for src, dst, fmt in (("C", "I", F_PCT), ("D", "J", F_PCT), ("E", "K", "0.0000"), ("F", "L", "0.0000")):
            _gap(b, ws, f"{dst}{r}", f"{src}{r}", fmt)
    return 6, first, first + len(_LIMIT_SHARES) - 1


def _required_table(b: Builder, ws, g0: int) -> tuple:
    """The cards required as the rate grows in multiples of TxRate, headed at row ``g0``.

    Returns
    -------
    (int, int, int)
        The table's header row and its first and last rows.
    """
    n = Name
    heading(ws, g0, "Cards required as the rate grows (multiples of TxRate)")
    header_row(ws, g0 + 1, ["Transaction rate", "Multiple of TxRate", "Accelerators required",
                            "Coprocessors required"])
    ws.cell(g0 + 1, 9, "Accel. req.").font = SERIES_FONT
    ws.cell(g0 + 1, 10, "Coproc. req.").font = SERIES_FONT
    gfirst = g0 + 2
    req_args = (*AMS_ARGS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients"))
    for i, k in enumerate(_GROWTH_FACTORS):
        r = gfirst + i
        ws.cell(r, 2, k).number_format = '0.0"x"'
        b.native(ws, f"A{r}", f"=TxRate*B{r}", '#,##0 "txn/s"')
        b.udf(ws, f"C{r}", "ACCELERATORS_REQUIRED", Cell(f"A{r}"), *req_args, number_format=F_CARDS)
        b.udf(ws, f"D{r}", "COPROCESSORS_REQUIRED", Cell(f"A{r}"), *req_args, number_format=F_CARDS)
        _gap(b, ws, f"I{r}", f"C{r}", "0")
        _gap(b, ws, f"J{r}", f"D{r}", "0")
    return g0 + 1, gfirst, gfirst + len(_GROWTH_FACTORS) - 1


def _key_size_table(b: Builder, ws, k0: int) -> tuple:
    """Closed-loop throughput and CPU per RSA key size (KeyType taken as RSA), headed at row ``k0``.

    Returns
    -------
    (int, int, int)
        The table's header row and its first and last rows.
    """
    n = Name
    heading(ws, k0, "RSA key size (KeyType taken as RSA), Requesters in a closed loop")
    header_row(ws, k0 + 1, ["RSA key size", "Throughput", "CPU per transaction"])
    ws.cell(k0 + 1, 9, "Throughput").font = SERIES_FONT
    req = (n("Requesters"), n("Coprocessors"), n("Accelerators"), n("Recipients"))
    kfirst = k0 + 2
    for i, size in enumerate(RSA_KEY_SIZES):
        r = kfirst + i
        ws.cell(r, 1, size).number_format = '0 "bits"'
        key = (n("Policy"), "RSA", Cell(f"A{r}"), n("MessageKB"), n("KeyReuse"))
        b.udf(ws, f"B{r}", "AMS_THROUGHPUT", *key, *req, number_format=F_TPS)
        b.udf(ws, f"C{r}", "AMS_COST_US", *key, *req, "total", n("Platform"), number_format=F_US)
        _gap(b, ws, f"I{r}", f"B{r}", "#,##0")
    return k0 + 1, kfirst, kfirst + len(RSA_KEY_SIZES) - 1


#: The shares of the signatures moved to ML-DSA-65 the quantum-safe table shows.
_MIGRATED_SHARES = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)
#: The algorithm it moves them to (a FIPS 204 level a CEX8S with CCA 8.4 runs).
_MIGRATED_TO = "ML-DSA-65"


def _migration_table(b: Builder, ws, m0: int) -> tuple:
    """The share of TxRate's signatures moved to ML-DSA-65 against the coprocessors required and the
    installed coprocessors' utilization, headed at row ``m0``.

    Returns
    -------
    (int, int, int)
        The table's header row and its first and last rows.
    """
    n = Name
    heading(ws, m0, f"Quantum-safe: share of the signatures moved to {_MIGRATED_TO} (at TxRate)")
    header_row(ws, m0 + 1, ["Share migrated", "Coprocessors required", "Their utilization",
                            "Accelerators required"])
    first = m0 + 2
    for i, share in enumerate(_MIGRATED_SHARES):
        r = first + i
        ws.cell(r, 1, share).number_format = "0%"
        mig = (n("TxRate"), *AMS_ARGS, _MIGRATED_TO, Cell(f"A{r}"))
        b.udf(ws, f"B{r}", "QS_CARDS_REQUIRED", *mig, "coprocessor", n("MaxUtilization"), n("Recipients"),
              number_format=F_CARDS)
        # (their utilization: with the count required, at least one, never overloaded)
        b.udf(ws, f"C{r}", "QS_CARD_UTILIZATION", *mig, "coprocessor", Expr(f"MAX(B{r},1)"), n("Recipients"),
              number_format=F_PCT)
        b.udf(ws, f"D{r}", "QS_CARDS_REQUIRED", *mig, "accelerator", n("MaxUtilization"), n("Recipients"),
              number_format=F_CARDS)
    last = first + len(_MIGRATED_SHARES) - 1
    note = ws.cell(last + 1, 1, f"{_MIGRATED_TO} card times are assumed (no card time is published): its software "
                                "cost relative to an RSA-2048 sign times the coprocessor's measured RSA-2048 time; "
                                "PLAN_BAND and --bands draw them from 0.5 to 3 times (QS_OP_MS). Evaluated for CEX8S "
                                "coprocessors with CCA 8.4, the one generation that runs them.")
    note.font = NOTE_FONT
    note.alignment = WRAP_TOP
    ws.merge_cells(start_row=last + 1, start_column=1, end_row=last + 1, end_column=8)
    ws.row_dimensions[last + 1].height = 30
    return m0 + 1, first, last


def _charts(ws, limit: tuple, required: tuple, key_size: tuple, anchor: int):
    """The four scatter charts, two by two from row ``anchor``, over the tables' chart columns.

    ``limit``, ``required`` and ``key_size`` are each table's (header row, first row, last row).
    """
    def col(c, r0, r1):
        return Reference(ws, min_col=c, min_row=r0, max_row=r1)

    (lh, first, last), (gh, gfirst, glast), (kh, kfirst, klast) = limit, required, key_size
    x1, x2, x3 = col(1, first, last), col(1, gfirst, glast), col(1, kfirst, klast)
    q = "'What-if'!"
    charts = [
        scatter_chart(ws, "Card utilization vs transaction rate", "transactions/s", "utilization (RMF)", x1,
                      [(f"{q}$C${lh}", col(9, first, last)), (f"{q}$D${lh}", col(10, first, last))], "0%", 1.0),
        scatter_chart(ws, "Queueing delay per transaction", "transactions/s", "ms", x1,
                      [(f"{q}$E${lh}", col(11, first, last)), (f"{q}$F${lh}", col(12, first, last))], "0.00"),
        scatter_chart(ws, "Cards required vs transaction rate", "transactions/s", "cards", x2,
                      [(f"{q}$C${gh}", col(9, gfirst, glast)), (f"{q}$D${gh}", col(10, gfirst, glast))],
                      "0"),
        scatter_chart(ws, "AMS throughput vs RSA key size", "RSA key size (bits)", "transactions/s", x3,
                      [(f"{q}$B${kh}", col(9, kfirst, klast))], "#,##0"),
    ]
    charts[3].x_axis.scaling.min = 0
    for i, ch in enumerate(charts):
        ch.width = 10.5     # cm: two side by side within the printed columns A-D and E-H
        ws.add_chart(ch, f"{'A' if i % 2 == 0 else 'E'}{anchor + 15 * (i // 2)}")
