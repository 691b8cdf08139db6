"""``python -m workbook.cli``: the ``cryptoplan`` command."""

from workbook.cli import main

main()
