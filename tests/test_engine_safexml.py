"""The package's XML guard: defusedxml's refusals, at the C parser's speed.

Expected behaviour comes from two independent sources: :mod:`defusedxml` itself (what it refuses,
the guard must refuse with the same exception) and the standard library's ElementTree (what it
parses, the guard must give element for element).
"""

import io
import xml.etree.ElementTree as ET

import defusedxml.ElementTree as DET
import pytest
from defusedxml import DefusedXmlException, DTDForbidden
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoplan.workbook.engine import safexml

BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;">]>
<lolz>&lol2;</lolz>"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>"""
BARE_DOCTYPE = b'<?xml version="1.0"?><!DOCTYPE r SYSTEM "http://example.com/r.dtd"><r/>'


@pytest.mark.parametrize("doc", [BOMB, EXTERNAL, BARE_DOCTYPE,
                                 BOMB.decode().replace('"1.0"?>', '"1.0" encoding="utf-16"?>', 1).encode("utf-16")])
def test_what_defusedxml_refuses_is_refused(doc):
    with pytest.raises(DefusedXmlException) as theirs:
        DET.fromstring(doc, forbid_dtd=True)
    with pytest.raises(DefusedXmlException) as ours:
        safexml.fromstring(doc)
    assert type(ours.value) is type(theirs.value) is DTDForbidden
    with pytest.raises(DTDForbidden):
        list(safexml.iterparse(doc))


def test_malformed_xml_is_elementtrees_parse_error_with_its_position():
    bad = b"<a><b></a>"
    with pytest.raises(ET.ParseError) as theirs:
        ET.fromstring(bad)
    with pytest.raises(ET.ParseError) as ours:
        safexml.fromstring(bad)
    assert str(ours.value) == str(theirs.value)
    assert ours.value.position == theirs.value.position


_names = st.sampled_from(["row", "c", "v", "f", "x:c", "is"])


@st.composite
def _trees(draw, depth=0):
    el = ET.Element(draw(_names).replace("x:", "{urn:x}"),
                    {k: draw(st.text(alphabet="ab<&\"'1 ", max_size=4)) for k in draw(st.sets(st.sampled_from("rst"), max_size=2))})
    el.text = draw(st.none() | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0xD7FF), max_size=6))
    if depth < 3:
        for _ in range(draw(st.integers(0, 3))):
            el.append(draw(_trees(depth + 1)))
    return el


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_trees(), st.sampled_from([("end",), ("start", "end")]), st.integers(1, 64))
def test_iterparse_gives_elementtrees_events_whatever_the_chunks(tree, events, chunk):
    data = ET.tostring(tree, encoding="utf-8")
    def seen(pairs):     # read once the whole document is parsed: a start event's text may not be yet
        pairs = list(pairs)
        return [(e, el.tag, dict(el.attrib), el.text) for e, el in pairs]

    want = seen(ET.iterparse(io.BytesIO(data), events=events))
    old = safexml.CHUNK_BYTES
    safexml.CHUNK_BYTES = chunk      # documents longer than one feed
    try:
        got = seen(safexml.iterparse(data, events))
    finally:
        safexml.CHUNK_BYTES = old
    assert got == want
    assert ET.tostring(safexml.fromstring(data)) == ET.tostring(ET.fromstring(data))
