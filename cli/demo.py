"""``cryptoplan demo``: the main job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

import click

from cryptoplan import model     # lazy: its functions import on first use

from .errors import UnusableInput
from cryptoplan.model.lazy import lazy_module

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model.zos import ams
    from cryptoplan.workbook import recalculation
    from cryptoplan.workbook import template
else:
    ams = lazy_module("cryptoplan.model.zos.ams")
    recalculation = lazy_module("cryptoplan.workbook.recalculation")
    template = lazy_module("cryptoplan.workbook.template")

__all__ = ["demo"]


@click.command()
@click.option("--out", "out_dir", default="cryptoplan-demo", show_default=True,
              type=click.Path(file_okay=False),
              help="Folder for the demo's own files (planner.xlsx, planner-recalculated.xlsx); "
                   "they are rewritten on every run; a folder with planner files the demo "
                   "did not write is refused.")
def demo(out_dir):
    """The main job: build the template workbook, recalculate the example plan, print key results."""
    folder = Path(out_dir)
    marker = folder / ".cryptoplan-demo"
    names = ("planner.xlsx", "planner-recalculated.xlsx")
    if not marker.exists() and any((folder / n).exists() for n in names):
        raise click.UsageError(f"{folder} holds a planner workbook the demo did not write; "
                               "choose another --out folder")
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text("cryptoplan demo output: rewritten by every `cryptoplan demo` run\n")
    book = template.write_template(folder / names[0], force=True)
    recalculated = folder / names[1]
    try:
        rec = recalculation.recalc_report(book, output=recalculated, in_place=False)
    except recalculation.RecalcError as exc:      # e.g. $CRYPTOPLAN_PARAMS names an unusable file
        raise UnusableInput(str(exc)) from None
    click.echo(f"template: {book}  recalculated without Excel: {recalculated}\n")
    click.echo(f"Key results ({rec.outputs[0].sheet} sheet, the template's default inputs):")
    shown = [o for o in rec.outputs if o.text().strip()]
    width = max(len(o.key) for o in shown)
    for o in shown:
        click.echo(f"  {o.key:<{width}}  {o.text()}")
    if rec.problems:
        shown_problems = rec.problems[:3]
        more = len(rec.problems) - len(shown_problems)
        click.echo(f"\n{len(rec.problems)} other cell(s) hold error text, as Excel would show them"
                   f"{f' (the first {len(shown_problems)}; all: cryptoplan recalc {recalculated})' if more else ''}:")
        for pr in shown_problems:
            click.echo(f"  {pr.where}: {pr.message}")

    d = model.defaults()
    kt, kb = d["KeyType"], d["MessageKB"]
    click.echo(f"\nAMS by policy and key size ({d['Coprocessors']} coprocessors, {d['Accelerators']} "
               f"accelerator, {kb:g} KB, {d['Requesters']} requester; parameters {d['params_file']}; "
               "CPU fitted on z14, z16 by the published z14->z15 ratios)")
    click.echo(f"{'policy':20s} {'key':>10s} {'txn/s':>9s} {'CPU us z14':>11s} {'CPU us z16':>11s} "
               f"{'cop ms/txn':>11s}")
    for p, reuse in (("integrity", None), ("privacy", None), ("confidentiality", 32)):
        for size in (1024, 2048, 4096):
            x = model.ams_throughput(p, kt, size, kb, reuse, requesters=d["Requesters"],
                                     coprocessors=d["Coprocessors"], accelerators=d["Accelerators"])
            c14, c16 = (model.ams_cost_us(p, kt, size, kb, reuse, requesters=d["Requesters"],
                                          coprocessors=d["Coprocessors"], accelerators=d["Accelerators"],
                                          platform=plat) for plat in ("z14", "z16"))
            dm = ams.ams_card_demands_ms(p, kt, size, reuse)
            click.echo(f"{p + ('' if reuse is None else f' K={reuse}'):20s} {kt + str(size):>10s} {x:9.0f} "
                       f"{c14:11.1f} {c16:11.1f} {dm['coprocessor']:11.3f}")

    chacha, pairs = "TLS_CHACHA20_POLY1305_SHA256", 50
    click.echo(f"\nMQ channels, {chacha}, {pairs} channel pairs with one requester each, "
               f"{d['CHIDISPS']} dispatchers (txn/s; seed 002's round trips, MVA over the tasks)")
    tasks = (1, d["SSLTASKS"], 2 * pairs)
    click.echo(f"{'message':>8s} " + " ".join(f"{f'SSLCIPH T={t}':>14s}" for t in tasks) + f" {'ATTLS':>9s}")
    for message_kb in (2.0, 32.0, 1024.0):
        row = [model.channel_throughput("SSLCIPH", chacha, message_kb, pairs, 1, t, d["CHIDISPS"]) for t in tasks]
        at = model.channel_throughput("ATTLS", chacha, message_kb, pairs, 1, None, d["CHIDISPS"])
        click.echo(f"{message_kb:>6g}KB " + " ".join(f"{x:14.1f}" for x in row) + f" {at:9.1f}")
