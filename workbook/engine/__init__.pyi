"""The public names of cryptoplan.workbook.engine (see model/__init__.pyi)."""

from .core import (
    Engine as Engine,
    EngineError as EngineError,
)
from .arguments import (
    Fn as Fn,
    ArgKind as ArgKind,
    FunctionRegistry as FunctionRegistry,
    ScenarioSplit as ScenarioSplit,
    MISSING as MISSING,
)
from .references import (
    Ref as Ref,
    RefList as RefList,
)
from .functions import (
    native_functions as native_functions,
    SUPPORTED as SUPPORTED,
    format_number as format_number,
)
from .parser import (
    parse as parse,
    FormulaError as FormulaError,
    cell_name as cell_name,
    split_cell as split_cell,
    index_to_col as index_to_col,
)
from .package import (
    Package as Package,
    WorkbookFileError as WorkbookFileError,
)
from .writer import (
    CellWrite as CellWrite,
    write_package as write_package,
    ooxml_string as ooxml_string,
)
from .values import (
    Val as Val,
    ExcelError as ExcelError,
    ERROR_CODES as ERROR_CODES,
    csv_text as csv_text,
    not_computed as not_computed,
)
from .atomic import (
    atomic_target as atomic_target,
    check_destination as check_destination,
    OutputError as OutputError,
)
from .limits import (
    MAX_CELLS as MAX_CELLS,
    MAX_SCENARIOS as MAX_SCENARIOS,
    DEFAULT_CHUNK as DEFAULT_CHUNK,
)
