"""The sheets that explain the workbook: ``Guide`` (first) and ``xlwings.conf`` (the add-in's settings)."""

from __future__ import annotations

from openpyxl.styles import Font

from ._builder import TITLE_FONT, NOTE_FONT, WRAP_TOP, Builder, header_row, print_setup, set_widths

__all__ = ["add_guide", "add_xlwings_conf"]


def add_guide(b: Builder):
    """The Guide sheet (the workbook's first): what the workbook answers and how to use it."""
    ws = b.wb.active
    ws.title = "Guide"
    ws["A1"] = "cryptoplan capacity planner: z/OS crypto (Crypto Express, MQ AMS, MQ channel TLS)"
    ws["A1"].font = TITLE_FONT
    text = [
        ("What it answers", "At the planned transaction rate and message size, with this AMS "
         "policy, certificate key and channel TLS setup: what throughput do the requesters get, "
         "what does a transaction cost in CPU, how busy are the Crypto Express cards and how "
         "many are needed to stay under the utilization and queueing-delay targets?"),
        ("1. Enable the functions", "Windows Excel with the xlwings add-in and cryptoplan "
         "installed (docs/spreadsheets.md, 'Excel on Windows'). Save this file as .xlsm "
         "(macro-enabled); in the VBA editor (Alt+F11) tick xlwings under Tools > References; "
         "click Import Functions in the xlwings ribbon (the sheet xlwings.conf already names the "
         "module cryptoplan.addin.udfs); press Ctrl+Alt+F9 to recalculate everything. #NAME? in a result "
         "means the functions are not imported yet."),
        ("2. Enter inputs", "Sheet Inputs: orange cells only. Drop-downs list the accepted "
         "policies, key types and sizes, channel modes and ciphers. Every input cell has a name "
         "(TxRate, MessageKB, Policy, ...) used by the formulas."),
        ("3. Read results", "Sheet Results: every number is a cryptoplan function over the "
         "named inputs. What-if: utilization and queueing delay as the rate grows to what the "
         "installed cards carry, the cards needed beyond it, RSA key sizes; with charts. "
         "Calibration: IBM's published measurements beside the model's values, with a chart. "
         "Parameters: the fitted parameters in force. Site RMF: your RMF crypto report's lines, for "
         "cryptoplan calibrate. Check: Erlang C from native Excel functions beside "
         "the add-in's ERLANGC, as a self-test."),
        ("Errors in cells", "A cryptoplan function never leaves a cell blank. Bad input shows "
         "'#VALUE! FUNCTION: message' naming the argument and the accepted range; a card or "
         "queue that cannot keep up shows '#NUM! FUNCTION: ...'. These are text (xlwings cannot "
         "return real Excel error values): arithmetic on them gives #VALUE!, and cryptoplan "
         "functions pass them on unchanged. Test with ISNUMBER(); charts use "
         "IF(ISNUMBER(x),x,NA()) so that failures show as gaps, not zeros."),
        ("Without Windows Excel", "Use the batch recalculation command 'cryptoplan recalc' "
         "(docs/batch.md) on this file, or call the same functions from Python: "
         "'from cryptoplan.addin.udfs import ERLANGC'."),
        ("Units", "Rates per second, times in ms or µs (CPU microseconds per transaction), "
         "message sizes in KB (1 MB = 1024 KB), key sizes in bits. The unit is part of each "
         "number's format."),
        ("Sources", "Model parameters are fitted to the IBM MQ for z/OS and z/OS Communications "
         "Server performance reports named on the Calibration sheet (column source, report and page). The input "
         "defaults reproduce the measured configuration: "
         f"{b.inputs['Coprocessors']} coprocessors, {b.inputs['Accelerators']} accelerator(s), "
         f"{b.inputs['KeyType']} {b.inputs['KeySize']}, {b.inputs['MessageKB']:g} KB messages, "
         f"{b.inputs['Requesters']} requester(s), {b.inputs['Policy']} policy."),
    ]
    header_row(ws, 3, ["Topic", "Guidance"])
    for i, (topic, body) in enumerate(text, 4):
        ws.cell(i, 1, topic).font = Font(bold=True)
        ws.cell(i, 1).alignment = WRAP_TOP
        ws.cell(i, 2, body).alignment = WRAP_TOP
        ws.row_dimensions[i].height = 15 * (1 + len(body) // 95)
    set_widths(ws, {"A": 24, "B": 100})
    ws.freeze_panes = "A4"
    print_setup(ws, f"A1:B{3 + len(text)}", landscape=False)


def add_xlwings_conf(b: Builder):
    """Workbook-level xlwings configuration (highest priority in xlwings' config lookup).

    xlwings' VBA (``GetConfigFromSheet``) reads key/value pairs from column A/B
    of a sheet named ``xlwings.conf``, from A1 down to the first empty cell, so
    nothing but settings may stand in column A.
    """
    ws = b.wb.create_sheet("xlwings.conf")
    ws["A1"], ws["B1"] = "UDF MODULES", "cryptoplan.addin.udfs"
    ws["D1"] = ("Read by the xlwings add-in (Import Functions): the Python module with the "
                "cryptoplan functions. Keys in column A, values in column B, no blank rows.")
    ws["D1"].font, ws["D1"].alignment = NOTE_FONT, WRAP_TOP
    ws.row_dimensions[1].height = 45
    set_widths(ws, {"A": 16, "B": 24, "D": 60})
    print_setup(ws, "A1:D1")               # one page, not three nearly empty ones
