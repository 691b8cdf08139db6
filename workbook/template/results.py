"""The Results sheet: every result at the inputs, one catalog function per row.

It leads with the whole system (the Workloads sheet's plan, PLAN_VALUE); the single-workload
calculator over the Inputs sheet follows under its own title.  Rows are declared as data
(:func:`_result_rows`): a title (with its scenario line), a section heading, a catalog function
over named inputs with its number format and note, or one of two native formulas over the rows
above (the bottleneck at TxRate and the verdict on the installed cards).  A function's row also
shows its error message in full, and rows get the heights their wrapped text needs.
"""

from __future__ import annotations

from typing import NamedTuple

from openpyxl.styles import Alignment, Font

from ._builder import (AMS_ARGS, F_CARDS, F_CPS, F_MS, F_PCT, F_RATIO, F_STARTS, F_TPS, F_US, NOTE_FONT,
                       TITLE_FONT, Builder, Cell, Name, header_row, heading, print_setup, set_widths)

__all__ = ["add_results"]

_TLS = tuple(Name(n) for n in ("Mode", "Cipher", "MessageKB"))
_TLS_OPT = (Name("SSLRKEYC"), Name("Platform"))
_PLAN = (Name("PlanWorkloads"), Name("PlanSystem"))
_PLAN_AT = (Name("PlanGrowth"), Name("PlanMonths"))
_PLAN_AFTER = (Name("PlanProfiles"), Name("PlanOrders"), Name("PlanMigrations"))   # after ParamsFile (they came later)
_FIRST_ROW = 5                 # the first result row (under the header row 4)
_WIDTHS = {"A": 52, "B": 28, "C": 62, "D": 48, "E": 26}


def add_results(b: Builder):
    """The Results sheet: the scenario, then a row per result (:func:`_result_rows`), on one printed page."""
    ws = _results_sheet(b)
    row = _FIRST_ROW
    where: dict[str, str] = {}   # result label -> its value cell (B<row>), for the rows below it
    for spec in _result_rows():
        if isinstance(spec, Title):
            row = _title_rows(b, ws, row, spec)
        elif isinstance(spec, Section):
            if spec.title:
                heading(ws, row, spec.title)
        elif isinstance(spec, Bottleneck):
            _bottleneck_row(b, ws, row, where)
        elif isinstance(spec, Verdict):
            _verdict_row(b, ws, row, where)
        else:
            _function_row(b, ws, row, spec, where)
        row += 1
    _fit_rows(ws, row, where)
    set_widths(ws, _WIDTHS)
    ws.freeze_panes = "A5"
    # A manager's page: one landscape page, the internal Function column (E) not printed
    print_setup(ws, f"A1:D{row - 1}")
    ws.page_setup.fitToHeight = 1


def _results_sheet(b: Builder):
    """The Results sheet with its title, note, the whole system's scenario line (a native formula)
    and the header row."""
    ws = b.wb.create_sheet("Results")
    ws["A1"] = "Results at the inputs"
    ws["A1"].font = TITLE_FONT
    ws["A2"] = ("First the whole system of the Workloads sheet (details on the Plan sheet), then a calculator for "
                "one workload of the Inputs sheet. Every value is a cryptoplan function over named inputs (column "
                "E, not printed, names it). A message says what is wrong and how many cards would carry the rate.")
    ws["A2"].font, ws["A2"].alignment = NOTE_FONT, Alignment(wrap_text=True, vertical="top")
    ws.merge_cells("A2:D2")
    ws.row_dimensions[2].height = 30
    ws["A3"] = "Whole system"
    ws["A3"].font = Font(bold=True)
    b.native(ws, "B3", '="Workloads sheet at growth x"&TEXT(PlanGrowth,"0.00")&", "&TEXT(PlanMonths,"0.0")'
                       '&" months ahead; installed "&Coprocessors&" coprocessors, "&Accelerators'
                       '&" accelerators, "&Processors&" CPs; target "&TEXT(MaxUtilization,"0%")')
    ws["B3"].font = Font(bold=True)
    header_row(ws, 4, ["Result", "Value", "What it means", "Message (if any)", "Function"])
    return ws


def _title_rows(b: Builder, ws, row: int, spec: "Title") -> int:
    """A title row and the scenario line under it (a native formula); returns the scenario's row."""
    ws.cell(row, 1, spec.title).font = Font(size=14, bold=True, color="1F3864")
    ws.cell(row + 1, 1, "Scenario").font = Font(bold=True)
    b.native(ws, f"B{row + 1}", spec.scenario)
    ws.cell(row + 1, 2).font = Font(bold=True)
    return row + 1


# ------------------------------------------------------------------ the rows, as data
class Section(NamedTuple):
    """A section heading row."""

    title: str


class Title(NamedTuple):
    """A part of the sheet: its title row, then its scenario line (a native formula)."""

    title: str
    scenario: str


class Result(NamedTuple):
    """A catalog function's row: the label, the function and its arguments, the value's number
    format and the note beside it."""

    label: str
    function: str
    args: tuple
    number_format: str
    note: str


class Verdict(NamedTuple):
    """The row that says whether the installed cards meet the targets (:func:`_verdict_row`)."""


class Bottleneck(NamedTuple):
    """The row that names the busier card type (:func:`_bottleneck_row`)."""


def _result_rows() -> list:
    """The Results sheet's rows, top to bottom.

    Returns
    -------
    list of Section, Result, Verdict or Bottleneck
        A :class:`Result`'s argument :class:`Cell` may name an earlier row's value cell as
        ``{acc_req}`` or ``{cop_req}``.
    """
    return [*_system_rows(), Section(""),
            Title("Single-workload calculator (the Inputs sheet: one workload at TxRate)",
                  '=TEXT(TxRate,"#,##0")&" txn/s, "&Policy&", "&KeyType&" "&KeySize&"-bit, "'
                  '&MessageKB&" KB; installed "&Coprocessors&" coprocessors, "&Accelerators'
                  '&" accelerators, "&Processors&" CPs; target "&TEXT(MaxUtilization,"0%")'),
            *_ams_rows(), *_channel_rows(), *_handshake_rows()]


def _ams_rows() -> list:
    """MQ AMS at TxRate (CPU, processors and cards required), the installed cards, the closed loop."""
    n = Name
    req = (n("Requesters"), n("Coprocessors"), n("Accelerators"), n("Recipients"))
    return [
        Section("MQ AMS at the planned rate (TxRate)"),
        Result("AMS CPU per transaction at TxRate, total", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *AMS_ARGS, n("Recipients"), "total", n("Platform")), F_US,
         "General-CP microseconds per request/reply (2 MQPUT + 2 MQGET) at TxRate."),
        Result("  application (MQ API, CPACF hashing/encryption)", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *AMS_ARGS, n("Recipients"), "application", n("Platform")), F_US,
         "Charged to the application address space."),
        Result("  AMSM (asymmetric operations)", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *AMS_ARGS, n("Recipients"), "AMSM", n("Platform")), F_US,
         "AMS task handling of sign/verify/encrypt/decrypt requests."),
        Result("  MSTR (queue manager administration)", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *AMS_ARGS, n("Recipients"), "MSTR", n("Platform")), F_US,
         "MSTR's administration CPU per second spread over TxRate."),
        Result("Processors required at TxRate", "PROCESSORS_REQUIRED",
         (n("TxRate"), *AMS_ARGS, n("MaxUtilization"), n("Recipients"), n("Platform")), F_CPS,
         "Fewest CPs within MaxUtilization for the AMS work (compare with Processors)."),
        Result("Accelerators required", "ACCELERATORS_REQUIRED",
         (n("TxRate"), *AMS_ARGS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients")), F_CARDS,
         "Fewest accelerators within MaxUtilization (and MaxWaitMs if given)."),
        Result("Coprocessors required", "COPROCESSORS_REQUIRED",
         (n("TxRate"), *AMS_ARGS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients")), F_CARDS,
         "Fewest coprocessors within MaxUtilization (and MaxWaitMs if given)."),
        Result("Accelerator utilization at the required count", "CARD_UTILIZATION",
         (n("TxRate"), *AMS_ARGS, "accelerator", Cell("IF(ISNUMBER(B{acc_req}),MAX(1,B{acc_req}),B{acc_req})"), n("Recipients")), F_PCT,
         "RMF summary utilization with the accelerators required above: always within the target."),
        Result("Coprocessor utilization at the required count", "CARD_UTILIZATION",
         (n("TxRate"), *AMS_ARGS, "coprocessor", Cell("IF(ISNUMBER(B{cop_req}),MAX(1,B{cop_req}),B{cop_req})"), n("Recipients")), F_PCT,
         "RMF summary utilization with the coprocessors required above."),
        Section("The installed cards (Coprocessors, Accelerators)"),
        Result("Accelerator utilization (RMF summary)", "CARD_UTILIZATION",
         (n("TxRate"), *AMS_ARGS, "accelerator", n("Accelerators"), n("Recipients")), F_PCT,
         "Requests x EXEC TIME per card, as RMF prints it; #NUM! when they cannot keep up."),
        Result("Coprocessor utilization (RMF summary)", "CARD_UTILIZATION",
         (n("TxRate"), *AMS_ARGS, "coprocessor", n("Coprocessors"), n("Recipients")), F_PCT,
         "Requests x EXEC TIME per card, as RMF prints it; #NUM! when they cannot keep up."),
        Verdict(),
        Result("Accelerator queueing delay per transaction", "CRYPTO_WAIT_MS",
         (n("TxRate"), *AMS_ARGS, "accelerator", n("Accelerators"), n("Recipients")), F_MS,
         "Mean wait for the accelerators, summed over a transaction's requests (M/G/c, the ME/CRT mix)."),
        Result("Coprocessor queueing delay per transaction", "CRYPTO_WAIT_MS",
         (n("TxRate"), *AMS_ARGS, "coprocessor", n("Coprocessors"), n("Recipients")), F_MS,
         "Mean wait for the coprocessors, summed over a transaction's requests (M/G/c)."),
        Bottleneck(),
        Section("MQ AMS with Requesters in a closed loop"),
        Result("Most the requesters reach", "AMS_THROUGHPUT", (*AMS_ARGS, *req, n("Processors"), n("Platform")), F_TPS,
         "Requesters each with one request/reply outstanding; capped by CPs and cards (MVA)."),
        Result("AMS CPU per transaction at that rate, total", "AMS_COST_US",
         (*AMS_ARGS, *req, "total", n("Platform"), n("Processors")), F_US,
         "As above, with MSTR's per-second cost spread over the closed-loop rate."),
    ]


def _channel_rows() -> list:
    """MQ channel TLS: CPU by address space, round trip, channel throughput and starts."""
    n = Name
    return [
        Section("MQ channel TLS (Mode, Cipher)"),
        Result("Channel CPU per transaction, total", "TLS_COST_US", (*_TLS, "total", *_TLS_OPT), F_US,
         "MSTR + CHIN + TCPIP."),
        Result("  MSTR (channel share)", "TLS_COST_US", (*_TLS, "MSTR", *_TLS_OPT), F_US,
         "Queue manager: weakly constrained by the published figures (fitted near 0): read with CHIN."),
        Result("  CHIN (channel initiator)", "TLS_COST_US", (*_TLS, "CHIN", *_TLS_OPT), F_US,
         "SSLCIPH encryption (and SSLRKEYC renegotiation) runs here."),
        Result("  TCPIP (AT-TLS)", "TLS_COST_US", (*_TLS, "TCPIP", *_TLS_OPT), F_US, "AT-TLS decryption runs here."),
        Result("Round trip per transaction", "TLS_ROUNDTRIP_US",
         (n("Mode"), n("Cipher"), n("MessageKB")), F_US, "As seen by the requester."),
        Result("Channel throughput (ChannelPairs, SSLTASKS, CHIDISPS)", "CHANNEL_THROUGHPUT",
         (*_TLS, n("ChannelPairs"), 1, n("SSLTASKS"), n("CHIDISPS"), n("Platform")), F_TPS,
         "One requester per pair; SSLCIPH queues for SSLTASKS, AT-TLS has an SRB per socket (MVA)."),
        Result("Channel starts per second", "CHANNEL_START_RATE", (n("Mode"), n("Cipher"), n("Platform")),
         F_STARTS, "Sustainable rate of channel starts (TLS handshakes); z15 and z16 only."),
        Result("CPU per channel start", "CHANNEL_START_COST_US", (n("Mode"), n("Cipher"), "total", n("Platform")),
         F_US, "Including the TLS handshake; z15 and z16 only."),
    ]


def _system_rows() -> list:
    """The whole system of the Workloads sheet (PLAN_VALUE), each resource at its peak interval:
    utilization, counts required, with one card failed, months to target."""
    def plan(pool, quantity):
        return (*_PLAN, pool, quantity, *_PLAN_AT)
    return [
        Section("The whole system (the Workloads sheet; details on the Plan sheet)"),
        *[Result(f"{label} utilization (all workloads)", "PLAN_VALUE", plan(pool, "utilization"), F_PCT,
           f"RMF utilization of the {pool} at their peak interval of the busiest day, every workload together.")
          for label, pool in (("Processor", "processors"), ("Coprocessor", "coprocessors"),
                              ("Accelerator", "accelerators"))],
        *[Result(f"{label} required (all workloads)", "PLAN_VALUE", plan(pool, "required"), fmt,
           f"Fewest {pool} within the target in every interval, every workload together.")
          for label, pool, fmt in (("Processors", "processors", F_CPS), ("Coprocessors", "coprocessors", F_CARDS),
                                   ("Accelerators", "accelerators", F_CARDS))],
        *[Result(f"{label} required to survive one failing (all workloads)", "PLAN_VALUE",
                 plan(pool, "failover_required"), F_CARDS,
                 f"Fewest {pool} that stay within the System block's failover_max_utilization with one out.")
          for label, pool in (("Coprocessors", "coprocessors"), ("Accelerators", "accelerators"))],
        *[Result(f"Months until the {pool} reach the target", "PLAN_VALUE", plan(pool, "months_to_target"),
           '0.0 "months"', "Each workload at its growth_per_year; #N/A if never within 100 years.")
          for pool in ("processors", "coprocessors", "accelerators")],
    ]


def _handshake_rows() -> list:
    """TLS handshake CPU factors relative to a full ECDHE-RSA TLS 1.2 handshake."""
    return [
        Section("TLS handshake (relative to a full ECDHE-RSA TLS 1.2 handshake)"),
        Result("CPU factor, TLS 1.3 full handshake", "HANDSHAKE_CPU_FACTOR", ("ECDHE", "RSA", "TLS1.3"),
         F_RATIO, "Multiplier on the baseline handshake CPU."),
        Result("CPU factor, resumed TLS 1.2 handshake", "HANDSHAKE_CPU_FACTOR",
         ("ECDHE", "RSA", "TLS1.2", True), F_RATIO, "Abbreviated handshake (session reuse)."),
    ]


# ------------------------------------------------------------------ writing a row
def _saturated(ref: str) -> str:
    """Formula text: ``ref`` holds the #NUM! of a resource that cannot keep up.

    Excel (xlwings) shows it as text starting ``#NUM!``; LibreOffice Calc's add-in as a real
    #NUM! error (``ERROR.TYPE`` 6).  The test reads both.
    """
    return f'OR(IFERROR(LEFT({ref},5)="#NUM!",FALSE),IFERROR(ERROR.TYPE({ref})=6,FALSE))'


def _bottleneck_row(b: Builder, ws, row: int, where: dict):
    """The busier installed card type at TxRate (a native formula over the two utilization rows)."""
    ua, uc = where["Accelerator utilization (RMF summary)"], where["Coprocessor utilization (RMF summary)"]
    formula = (f'=IF(AND(ISNUMBER({ua}),ISNUMBER({uc})),IF({ua}>={uc},"accelerators",'
               f'"coprocessors"),IF({_saturated(ua)},"accelerators (saturated)",'
               f'IF({_saturated(uc)},"coprocessors (saturated)",'
               f'"see the errors above")))')
    ws.cell(row, 1, "Bottleneck at TxRate (busiest card type)")
    b.native(ws, f"B{row}", formula)
    ws.cell(row, 5, "native formula").font = NOTE_FONT
    ws.cell(row, 3, "The installed card type with the higher utilization.")


def _verdict_row(b: Builder, ws, row: int, where: dict):
    """Whether the installed cards meet the targets, else how many of each type to add (a native formula).

    The installed counts are judged only when the model accepted them: their utilization is a
    number, or the #NUM! of cards that cannot keep up (an installed count the model refuses,
    e.g. Coprocessors 65, is an error there).
    """
    ra, rc = where["Accelerators required"], where["Coprocessors required"]
    ua, uc = where["Accelerator utilization (RMF summary)"], where["Coprocessor utilization (RMF summary)"]
    judged = ",".join(f"OR(ISNUMBER({u}),{_saturated(u)})" for u in (ua, uc))
    # "overloaded: add 2 accelerators and 1 coprocessor": how many, not only that
    add_a, add_c = f"({ra}-Accelerators)", f"({rc}-Coprocessors)"
    add = (f'"overloaded: add "&IF({ra}>Accelerators,{add_a}&" accelerator"&IF({add_a}>1,"s",""),"")'
           f'&IF(AND({ra}>Accelerators,{rc}>Coprocessors)," and ","")'
           f'&IF({rc}>Coprocessors,{add_c}&" coprocessor"&IF({add_c}>1,"s",""),"")')
    formula = (f'=IF(AND(ISNUMBER({ra}),ISNUMBER({rc}),{judged}),IF(AND({ra}<=Accelerators,'
               f'{rc}<=Coprocessors),"installed cards meet the targets",'
               f'{add}),"see the errors above")')
    ws.cell(row, 1, "Verdict for the installed cards")
    b.native(ws, f"B{row}", formula)
    ws.cell(row, 5, "native formula").font = NOTE_FONT
    ws.cell(row, 3, "Compares the required counts with Coprocessors and Accelerators "
                    "(once the model accepts the installed counts).")


def _function_row(b: Builder, ws, row: int, spec: Result, where: dict):
    """A catalog function's row: label, value, note, its error message in full, the function's name.

    The row's value cell is recorded in ``where`` under its label.
    """
    label, fname, args, fmt, note = spec.label, spec.function, spec.args, spec.number_format, spec.note
    refs = {k: where[v][1:] for k, v in (("acc_req", "Accelerators required"),
                                         ("cop_req", "Coprocessors required")) if v in where}
    args = tuple(Cell(a.format(**refs)) if isinstance(a, Cell) else a for a in args)
    ws.cell(row, 1, label)
    b.udf(ws, f"B{row}", fname, *args, number_format=fmt, after=_PLAN_AFTER if fname.startswith("PLAN_") else ())
    ws.cell(row, 5, fname).font = NOTE_FONT
    ws.cell(row, 3, note)
    # The message column repeats error text in full, wrapped in its printed width (the
    # value cell shows its start; the Function column right of it is not printed).
    b.native(ws, f"D{row}", f'=IF(ISNUMBER(B{row}),"",B{row})')
    ws.cell(row, 4).font = Font(color="9C0006", size=9)
    ws.cell(row, 4).alignment = Alignment(wrap_text=True, vertical="top")
    where.setdefault(label, f"B{row}")


def _fit_rows(ws, end: int, where: dict):
    """Values in bold, and the rows from the first result to ``end`` (excluded) as high as their text.

    Row heights are set, not left to the application: a wrapped note or message needs its
    lines (LibreOffice and Excel do not re-fit a row when a formula's text changes).  Rows whose
    installed-card value may be an overload message get three lines for it.
    """
    for r in range(_FIRST_ROW, end):
        if ws.cell(r, 2).value is not None:
            ws.cell(r, 2).font = Font(bold=True)
    for r in range(_FIRST_ROW, end):
        for c in (1, 2, 3):
            ws.cell(r, c).alignment = Alignment(wrap_text=c == 3 or None, vertical="top")
        note = str(ws.cell(r, 3).value or "")
        lines = max(1, -(-len(note) * 4 // (_WIDTHS["C"] * 5)))      # ~1.25 characters per width unit
        if ws.cell(r, 5).value in ("CARD_UTILIZATION", "CRYPTO_WAIT_MS") and "installed" not in note \
                and r > int(where.get("Coprocessor utilization at the required count", "B0")[1:]):
            lines = max(lines, 3)
        if ws.cell(r, 1).value == "Verdict for the installed cards":
            ws.cell(r, 2).alignment = Alignment(wrap_text=True, vertical="top")
            lines = max(lines, 2)
        if lines > 1:
            ws.row_dimensions[r].height = 13.5 * lines
