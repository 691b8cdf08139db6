"""``cryptoplan rmf FILE...``: the cards of RMF's CRYPTO HARDWARE ACTIVITY report, as read.

Only click and the standard library load with this module; the reader loads when the command
runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json

import click

from cryptoplan.model.lazy import lazy_module

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model.site import rmf_files
    from cryptoplan.model.site import rmf_cards
    from cryptoplan.model.site import rmf_records
else:
    rmf_files = lazy_module("cryptoplan.model.site.rmf_files")
    rmf_cards = lazy_module("cryptoplan.model.site.rmf_cards")
    rmf_records = lazy_module("cryptoplan.model.site.rmf_records")

__all__ = ["rmf_command"]


def _num(v, fmt) -> str:
    return "" if v is None else format(v, fmt)


@click.command("rmf")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--smf", "is_smf", is_flag=True,
              help="FILES are SMF type 70 subtype 2 records (binary, with record descriptor words), not report text.")
@click.option("--json", "as_json", is_flag=True,
              help='Print JSON: {"records": [...], "cards": [...], "peak": {type: {...}}, "warnings": [...]}.')
def rmf_command(files, is_smf, as_json):
    """Read RMF Postprocessor CRYPTO HARDWARE ACTIVITY reports (REPORTS(CRYPTO) output, as text),
    or with --smf the SMF type 70 subtype 2 records they are made from.

    Prints each card per interval with its rate, EXEC TIME and utilization (LPAR and CPC
    columns, or TOTAL), the share of the card other LPARs keep busy (CPC minus LPAR), and the
    peak interval of each card type.  Exit codes: 0 read; 2 a file that is not such a report
    (the message names the file, the line and what was expected); 4 standard output closed or
    full.
    """
    records, warnings = [], []
    for f in files:
        try:
            r, w = rmf_files.read_activity(f, smf=is_smf)
        except ValueError as exc:        # RmfReportError, Smf70Error: the file, the line or byte, what was expected
            raise click.UsageError(str(exc)) from None
        records += r
        warnings += w
    try:                                 # across the files: a card's line once per interval
        rmf_records.check_records(records)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    lines = rmf_cards.card_lines(records)
    peak = rmf_cards.peak_intervals(lines)
    if as_json:
        click.echo(json.dumps({"files": list(files), "records": [r.to_dict() for r in records],
                               "cards": [ln.to_dict() for ln in lines], "peak": peak, "warnings": warnings},
                              indent=2, allow_nan=False))
    else:
        click.echo(_text(lines, peak, warnings), nl=False)


def _text(lines, peak, warnings) -> str:
    out = []
    head = ("card", "id", "mode", "scope", "rate/s", "exec ms", "util%", "other LPARs")
    last = None
    for ln in lines:
        key = (ln.system, ln.interval)
        if key != last:
            out += ["", f"{ln.system}  {ln.interval}  interval {ln.interval_s:g} s",
                    "  {:<6} {:>3}  {:<11} {:<5} {:>9} {:>8} {:>6} {:>11}".format(*head)]
            last = key
        for i, (scope, v) in enumerate(ln.scopes.items()):
            other = ln.other_lpars_util_pct if i == 0 else None
            out.append("  {:<6} {:>3}  {:<11} {:<5} {:>9} {:>8} {:>6} {:>11}".format(
                ln.card_type if i == 0 else "", ln.card_id if i == 0 else "", ln.mode if i == 0 else "", scope,
                _num(v["rate"], ",.6g"), _num(v["exec_ms"], ".3f"), _num(v["util_pct"], ".1f"),
                "" if other is None else f"{other:.1f}"))
    out.append("")
    out.append("Peak interval per card type (mean utilization of this system's cards; CPC-wide where RMF prints "
               "no LPAR columns):")
    for ctype, p in peak.items():
        where = "" if p.get("scope", "LPAR") == "LPAR" else " CPC-wide (no LPAR columns)"
        out.append(f"  {ctype}: {p['interval']} ({p['system']}), {p['util_pct']:.1f}%{where} over {p['cards']} card"
                   f"{'s' if p['cards'] != 1 else ''}")
    if warnings:
        out += ["", "Warnings:"] + [f"  {w}" for w in warnings]
    return "\n".join(line.rstrip() for line in out).lstrip("\n") + "\n"
