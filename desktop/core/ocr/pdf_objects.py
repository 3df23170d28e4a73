"""The PDF objects (pypdf) of a searchable page's invisible text: its glyphless font, and
plain streams and number arrays."""

from __future__ import annotations

from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    IndirectObject,
    NameObject,
    NumberObject,
    TextStringObject,
)

from desktop.core.ocr import text_layer


def glyphless_font(writer: PdfWriter) -> IndirectObject:
    descriptor = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/FontDescriptor"),
            NameObject("/FontName"): NameObject(f"/{text_layer.FONT_NAME}"),
            NameObject("/Flags"): NumberObject(5),  # fixed-pitch-free, symbolic
            NameObject("/FontBBox"): number_array([0, text_layer.DESCENT, 1000, text_layer.ASCENT]),
            NameObject("/ItalicAngle"): NumberObject(0),
            NameObject("/Ascent"): NumberObject(text_layer.ASCENT),
            NameObject("/Descent"): NumberObject(text_layer.DESCENT),
            NameObject("/CapHeight"): NumberObject(text_layer.ASCENT),
            NameObject("/StemV"): NumberObject(80),
        }
    )
    widths = ArrayObject(
        number_array(entry) if isinstance(entry, list) else NumberObject(entry)
        for entry in text_layer.widths_array()
    )
    cid_font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/CIDFontType2"),
            NameObject("/BaseFont"): NameObject(f"/{text_layer.FONT_NAME}"),
            NameObject("/CIDSystemInfo"): DictionaryObject(
                {
                    NameObject("/Registry"): TextStringObject("Adobe"),
                    NameObject("/Ordering"): TextStringObject("Identity"),
                    NameObject("/Supplement"): NumberObject(0),
                }
            ),
            NameObject("/FontDescriptor"): writer._add_object(descriptor),
            NameObject("/DW"): NumberObject(text_layer.DEFAULT_WIDTH),
            NameObject("/W"): widths,
            NameObject("/CIDToGIDMap"): NameObject("/Identity"),
        }
    )
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type0"),
            NameObject("/BaseFont"): NameObject(f"/{text_layer.FONT_NAME}"),
            NameObject("/Encoding"): NameObject("/Identity-H"),
            NameObject("/DescendantFonts"): ArrayObject([writer._add_object(cid_font)]),
            NameObject("/ToUnicode"): writer._add_object(
                plain_stream(text_layer.to_unicode_cmap()).flate_encode()
            ),
        }
    )
    return writer._add_object(font)


def plain_stream(data: bytes) -> DecodedStreamObject:
    stream = DecodedStreamObject()
    stream.set_data(data)
    return stream


def number_array(values: list[int]) -> ArrayObject:
    return ArrayObject(NumberObject(value) for value in values)
