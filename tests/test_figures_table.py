"""Schema and provenance checks for data/figures.csv (the published-figures table).

Uses only csv, re and pathlib. The vocabulary comes from data/vocabulary.csv; the rules are
described in data/README.md. Fix the data, never loosen these checks.
"""
import csv
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
FIGURES = DATA / "figures.csv"
VOCABULARY = DATA / "vocabulary.csv"
README = DATA / "README.md"
SHARED = Path(__file__).resolve().parents[2] / "shared"
SEEDS = SHARED / "seeds"
REFERENCE = SHARED / "reference"
REFERENCE_FILE = REFERENCE / "mq-performance-facts.md"

COLUMNS = [
    "id", "source", "quote", "quantity",
    "platform", "crypto_card", "address_space", "mode", "cipher", "protocol", "policy",
    "key_type", "key_size", "key_reuse", "recipients", "message_kb", "card_mode", "function",
    "handshake", "baseline",
    "value", "low", "high", "unit", "kind", "tolerance", "note",
]
CONDITION_COLUMNS = COLUMNS[4:20]  # platform .. baseline
# condition columns whose values are controlled by data/vocabulary.csv; "|" separates alternatives
CONTROLLED_CONDITIONS = ["platform", "crypto_card", "address_space", "mode", "protocol", "policy",
                         "key_type", "card_mode", "function", "handshake"]
NUMERIC_CONDITIONS = ["key_size", "key_reuse", "recipients", "message_kb"]
RELATIVE_UNITS = {"pct_change", "pct_of_baseline", "ratio", "ms_per_txn_change"}
BASELINE_EXTRA_KEYS = {"security_strength"}

SEED_SOURCE = re.compile(r"^(\d{3})_[0-9a-f]{16}\.txt$")
REFERENCE_PREFIXES = ("mqperf:", "ibmdoc:", "nist:", "ref:")
SITE_PREFIX = "site:"

# number words accepted as the printed form of a value (see data/README.md)
NUMBER_WORDS = {
    "half": 0.5, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "double": 2, "doubling": 2, "doubles": 2, "twice": 2,
    "triple": 3, "tripling": 3, "equally": 0.5,
}


def _read_csv(path):
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


@pytest.fixture(scope="module")
def table():
    fieldnames, rows = _read_csv(FIGURES)
    return fieldnames, rows


@pytest.fixture(scope="module")
def rows(table):
    return table[1]


@pytest.fixture(scope="module")
def vocabulary():
    fieldnames, vrows = _read_csv(VOCABULARY)
    assert fieldnames == ["column", "value", "meaning"]
    vocab = {}
    for r in vrows:
        assert r["value"] and r["meaning"].strip(), r
        assert r["value"] not in vocab.setdefault(r["column"], set()), f"duplicate vocabulary entry {r}"
        vocab[r["column"]].add(r["value"])
    return vocab


def _collapse(text):
    return re.sub(r"\s+", " ", text).strip()


def _float(text):
    return float(text)


def _numbers_in(text):
    """Every number printed in text: 1,342 -> 1342, .5 -> 0.5, plus the number words."""
    found = set()
    for m in re.finditer(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):
        found.add(float(m.group().replace(",", "")))
    for m in re.finditer(r"\d+(?:\.\d+)?", text):
        found.add(float(m.group()))
    for m in re.finditer(r"(?<![\d.])\.\d+", text):
        found.add(float(m.group()))
    for word, number in NUMBER_WORDS.items():
        if re.search(rf"\b{word}\b", text, flags=re.IGNORECASE):
            found.add(float(number))
    return found


def _source_path(source):
    if SEED_SOURCE.match(source):
        return SEEDS / source
    if source.startswith(REFERENCE_PREFIXES):
        return REFERENCE_FILE
    return None


def test_header(table):
    assert table[0] == COLUMNS


def test_ids_unique_and_readable(rows):
    ids = [r["id"] for r in rows]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    assert not dups, f"duplicate ids: {dups}"
    bad = [i for i in ids if not re.fullmatch(r"[a-z][a-z0-9_]*", i)]
    assert not bad, f"ids must be lower-case snake_case: {bad}"


def test_id_prefix_matches_source(rows):
    bad = []
    for r in rows:
        src = r["source"]
        m = SEED_SOURCE.match(src)
        if m:
            prefix = f"s{m.group(1)}_"
        elif src.startswith(REFERENCE_PREFIXES):
            prefix = "ref_"
        elif src.startswith(SITE_PREFIX):
            prefix = "site_"
        else:
            bad.append((r["id"], f"unknown source form {src!r}"))
            continue
        if not r["id"].startswith(prefix):
            bad.append((r["id"], f"expected prefix {prefix}"))
    assert not bad, bad


def test_required_fields(rows):
    bad = [r["id"] for r in rows
           if not (r["source"].strip() and r["quote"].strip() and r["quantity"] and r["unit"] and r["kind"])]
    assert not bad, f"rows missing source/quote/quantity/unit/kind: {bad}"


def test_quantity_unit_kind_in_vocabulary(rows, vocabulary):
    bad = []
    for r in rows:
        for col in ("quantity", "unit", "kind"):
            if r[col] not in vocabulary[col]:
                bad.append((r["id"], col, r[col]))
    assert not bad, bad


def test_controlled_conditions_in_vocabulary(rows, vocabulary):
    bad = []
    for r in rows:
        for col in CONTROLLED_CONDITIONS:
            if not r[col]:
                continue
            for alt in r[col].split("|"):
                parts = alt.split("+") if col == "handshake" else [alt]
                for p in parts:
                    if p not in vocabulary[col]:
                        bad.append((r["id"], col, p))
    assert not bad, bad


def test_cipher_names_look_like_ibm_names(rows):
    bad = [(r["id"], c) for r in rows if r["cipher"] for c in r["cipher"].split("|")
           if not re.fullmatch(r"[A-Z0-9_]+", c)]
    assert not bad, bad


def test_numeric_conditions(rows):
    bad = []
    for r in rows:
        for col in NUMERIC_CONDITIONS:
            if not r[col]:
                continue
            for alt in r[col].split("|"):
                if col == "key_reuse" and alt == "unlimited":
                    continue
                try:
                    float(alt)
                except ValueError:
                    bad.append((r["id"], col, alt))
    assert not bad, bad


def test_baseline_format(rows, vocabulary):
    bad = []
    for r in rows:
        if not r["baseline"]:
            continue
        for pair in r["baseline"].split(";"):
            key, sep, val = pair.partition("=")
            if not sep or not val:
                bad.append((r["id"], pair, "not key=value"))
            elif key not in CONDITION_COLUMNS and key not in BASELINE_EXTRA_KEYS:
                bad.append((r["id"], pair, "unknown column"))
            elif key in CONTROLLED_CONDITIONS and val not in vocabulary[key]:
                bad.append((r["id"], pair, "value not in vocabulary"))
    assert not bad, bad


def test_relative_units_have_baseline(rows):
    bad = [r["id"] for r in rows if r["unit"] in RELATIVE_UNITS and not r["baseline"]]
    assert not bad, f"relative figures without a baseline: {bad}"


def test_values_and_kinds(rows):
    bad = []
    for r in rows:
        v = {k: (_float(r[k]) if r[k] != "" else None) for k in ("value", "low", "high")}
        kind = r["kind"]
        if kind in ("exact", "approximate", "up_to") and v["value"] is None:
            bad.append((r["id"], f"{kind} needs value"))
        if kind == "range" and (v["low"] is None or v["high"] is None):
            bad.append((r["id"], "range needs low and high"))
        if kind == "lower_bound" and v["low"] is None:
            bad.append((r["id"], "lower_bound needs low"))
        if kind == "upper_bound" and v["high"] is None:
            bad.append((r["id"], "upper_bound needs high"))
        if v["low"] is not None and v["high"] is not None and not v["low"] <= v["high"]:
            bad.append((r["id"], "low > high"))
        if v["value"] is not None:
            if v["low"] is not None and v["low"] > v["value"]:
                bad.append((r["id"], "low > value"))
            if v["high"] is not None and v["value"] > v["high"]:
                bad.append((r["id"], "value > high"))
    assert not bad, bad


def test_tolerance(rows):
    bad = []
    for r in rows:
        t = _float(r["tolerance"])
        if not 0 < t <= 1:
            bad.append((r["id"], "tolerance outside (0, 1]"))
        if r["kind"] == "approximate" and t < 0.10:
            bad.append((r["id"], "approximate figures need tolerance >= 0.10"))
    assert not bad, bad


def test_numbers_appear_in_quote(rows):
    bad = []
    for r in rows:
        printed = _numbers_in(_collapse(r["quote"]))
        for col in ("value", "low", "high"):
            if r[col] == "":
                continue
            x = abs(_float(r[col]))
            if not any(abs(x - p) <= 1e-9 * max(1.0, abs(p)) for p in printed):
                bad.append((r["id"], col, r[col]))
    assert not bad, f"numbers not printed in their quote: {bad}"


def test_quotes_verbatim_in_sources(rows):
    if not SHARED.is_dir():
        pytest.skip("shared/ (seeds and reference) not available")
    texts = {}
    bad = []
    for r in rows:
        src = r["source"]
        if src.startswith(SITE_PREFIX):
            continue  # site measurements: the quote cites the user's own RMF/SMF reference
        path = _source_path(src)
        if path is None:
            bad.append((r["id"], f"unknown source {src!r}"))
            continue
        if not path.is_file():
            bad.append((r["id"], f"missing source file {path}"))
            continue
        if path not in texts:
            texts[path] = _collapse(path.read_text(encoding="utf-8"))
        if _collapse(r["quote"]) not in texts[path]:
            bad.append((r["id"], r["quote"][:80]))
    assert not bad, f"quotes not found verbatim: {bad}"


def test_enough_seed_rows_and_every_source_used(rows):
    seed_rows = [r for r in rows if SEED_SOURCE.match(r["source"])]
    assert len(seed_rows) >= 100
    used = {r["source"] for r in seed_rows}
    if SEEDS.is_dir():
        expected = {p.name for p in SEEDS.glob("*.txt") if SEED_SOURCE.match(p.name)}
        assert expected <= used, f"seeds without rows: {sorted(expected - used)}"
    assert any(r["source"].startswith(REFERENCE_PREFIXES) for r in rows)


def test_vocabulary_documented_in_readme(vocabulary):
    text = README.read_text(encoding="utf-8")
    missing = [(col, v) for col in ("quantity", "unit", "kind") for v in sorted(vocabulary[col])
               if f"`{v}`" not in text]
    assert not missing, f"vocabulary values not documented in data/README.md: {missing}"


def test_every_source_document_is_named_in_sources_csv():
    """A seed row's source file name is shown by its label (data/sources.csv); the labels
    are unique and each source document the table uses is listed with author and title."""
    from cryptoplan.model.figures import load_figures, source_label, sources
    listed = sources()
    labels = [row["label"] for row in listed.values()]
    assert len(set(labels)) == len(labels)
    assert all(row["author"] and row["title"] for row in listed.values())
    used = {f.source for f in load_figures().values()}
    seeds = {s for s in used if s.endswith(".txt")}
    assert seeds and {s[:3] for s in seeds} <= set(listed)
    assert source_label("001_d553ce467f0a188a.txt") == listed["001"]["label"]
    assert source_label("mqperf: MQ for z/OS on z14 pp.15-20") == "MQ for z/OS on z14 pp.15-20"
    assert source_label("nist: SP 800-57 Part 1") == "NIST SP 800-57 Part 1"
    assert source_label("site: our RMF 2026-11-02") == "site: our RMF 2026-11-02"
    with pytest.raises(KeyError):
        source_label("999_0000000000000000.txt")
