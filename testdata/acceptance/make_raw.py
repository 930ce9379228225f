#!/usr/bin/python3
"""Writes hand-made XLSX packages the way other spreadsheet tools do (no
excelize, no openpyxl): prefixed namespaces, cells without r attributes,
inline strings, t="d" ISO date cells, rich-text shared strings, absolute
relationship targets, built-in date formats, booleans. Run once from this
folder; the outputs are committed."""
import os, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)

CT = '''<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>
<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>
<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>
<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>
</Types>'''
RELS = '''<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>
</Relationships>'''


def package(name, sheet, shared, wbpr="", prefix="x", sheetname="Targets", absolute=True):
    ns = ('xmlns%s="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
          % ((":" + prefix) if prefix else ""))
    p = prefix + ":" if prefix else ""
    wb = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<%sworkbook %s>%s<%ssheets><%ssheet name="%s" sheetId="1" r:id="rId1"/></%ssheets></%sworkbook>'
          % (p, ns, wbpr, p, p, sheetname, p, p))
    target = "/xl/worksheets/sheet1.xml" if absolute else "worksheets/sheet1.xml"
    wbrels = '''<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="%s"/>
<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>
<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>
</Relationships>''' % target
    sst = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<%ssst %s count="%d" uniqueCount="%d">%s</%ssst>' % (
        p, ns, len(shared), len(shared), "".join(s.replace("<", "<" + p).replace("</" + p + "/", "</") if False else s for s in shared), p)
    sst = sst.replace("<si>", "<%ssi>" % p).replace("</si>", "</%ssi>" % p).replace("<t>", "<%st>" % p).replace("</t>", "</%st>" % p) \
        .replace("<t ", "<%st " % p).replace("<r>", "<%sr>" % p).replace("</r>", "</%sr>" % p).replace("<rPr>", "<%srPr>" % p) \
        .replace("</rPr>", "</%srPr>" % p).replace("<b/>", "<%sb/>" % p).replace("<rPh", "<%srPh" % p).replace("</rPh>", "</%srPh>" % p)
    styles = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<{p}styleSheet {ns}>'
              '<{p}numFmts count="2"><{p}numFmt numFmtId="164" formatCode="[$-409]d\\-mmm\\-yy;@"/><{p}numFmt numFmtId="165" formatCode="yyyy/mm/dd;@"/></{p}numFmts>'
              '<{p}fonts count="1"><{p}font/></{p}fonts><{p}fills count="1"><{p}fill/></{p}fills><{p}borders count="1"><{p}border/></{p}borders>'
              '<{p}cellStyleXfs count="1"><{p}xf/></{p}cellStyleXfs>'
              '<{p}cellXfs count="6"><{p}xf numFmtId="0"/><{p}xf numFmtId="14" applyNumberFormat="1"/><{p}xf numFmtId="164" applyNumberFormat="1"/><{p}xf numFmtId="49" applyNumberFormat="1"/><{p}xf numFmtId="22" applyNumberFormat="1"/><{p}xf numFmtId="165" applyNumberFormat="1"/></{p}cellXfs>'
              '</{p}styleSheet>').format(p=p, ns=ns)
    ws = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<%sworksheet %s><%ssheetData>%s</%ssheetData></%sworksheet>' % (
        p, ns, p, sheet.replace("<row", "<" + p + "row").replace("</row>", "</" + p + "row>").replace("<c ", "<" + p + "c ").replace("<c>", "<" + p + "c>")
        .replace("</c>", "</" + p + "c>").replace("<v>", "<" + p + "v>").replace("</v>", "</" + p + "v>").replace("<f>", "<" + p + "f>")
        .replace("</f>", "</" + p + "f>").replace("<is>", "<" + p + "is>").replace("</is>", "</" + p + "is>").replace("<t>", "<" + p + "t>")
        .replace("</t>", "</" + p + "t>"), p, p)
    with zipfile.ZipFile(name, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CT)
        z.writestr("_rels/.rels", RELS)
        z.writestr("xl/workbook.xml", wb)
        z.writestr("xl/_rels/workbook.xml.rels", wbrels)
        z.writestr("xl/sharedStrings.xml", sst)
        z.writestr("xl/styles.xml", styles)
        z.writestr("xl/worksheets/sheet1.xml", ws)


def s(i):
    return '<c t="s"><v>%d</v></c>' % i


def inl(text):
    return '<c t="inlineStr"><is><t>%s</t></is></c>' % text


# Shared strings: 0 plan_name 1 start_date 2 end_date 3 year_number
# 4 target_type 5 counter (rich text, split in two runs) 6 company_vat_number
# 7 all_employees 8 Raw plan (with phonetic run)
shared = ["<si><t>plan_name</t></si>", "<si><t>start_date</t></si>", "<si><t>end_date</t></si>",
          "<si><t>year_number</t></si>", "<si><t>target_type</t></si>",
          "<si><r><rPr><b/></rPr><t>number_of_african_male_</t></r><r><t>top_managers</t></r></si>",
          "<si><t xml:space=\"preserve\"> company_vat_number </t></si>", "<si><t>all_employees</t></si>",
          "<si><t>Raw plan</t><rPh sb=\"0\" eb=\"1\"><t>IGNORED</t></rPh></si>"]
# Row 1 header (no r attributes anywhere); row 2: start date builtin fmt 14
# serial, end date t="d" ISO, counter boolean TRUE (must be rejected);
# row 3: start date custom format 164, end inline string, counter t="str"
# formula cached text "7"; VAT as inline text with a leading zero.
rows = ("<row>" + s(0) + s(1) + s(2) + s(3) + s(4) + s(5) + s(6) + "</row>"
        "<row>" + s(8) + '<c s="1"><v>46266</v></c>' + '<c t="d"><v>2029-08-31T00:00:00</v></c>' + "<c><v>1</v></c>" + s(7)
        + '<c t="b"><v>1</v></c>' + inl("0412345678") + "</row>"
        "<row>" + s(8) + '<c s="2"><v>46266</v></c>' + inl("2029-08-31") + "<c><v>2</v></c>" + s(7)
        + '<c t="str"><f>"7"</f><v>7</v></c>' + inl("0412345678") + "</row>")
package("raw_prefixed_norefs.xlsx", rows, shared)


# A 1904-system workbook written as "true" (not "1"), no namespace prefix,
# relative relationship targets; dates under built-in format 22 (m/d/yy
# h:mm) and a custom "yyyy/mm/dd;@"; a counter given as "1.2E1".
# 1904 serial of 2026-09-01 is 46266 - 1462 = 44804.
shared2 = ["<si><t>plan_name</t></si>", "<si><t>start_date</t></si>", "<si><t>end_date</t></si>",
           "<si><t>year_number</t></si>", "<si><t>target_type</t></si>",
           "<si><t>number_of_african_male_top_managers</t></si>", "<si><t>all_employees</t></si>",
           "<si><t>Mac raw</t></si>"]
rows2 = ('<row r="1">' + s(0) + s(1) + s(2) + s(3) + s(4) + s(5) + "</row>"
         '<row r="2"><c r="A2" t="s"><v>7</v></c><c r="B2" s="4"><v>44804.5</v></c><c r="C2" s="5"><v>46264</v></c>'
         '<c r="D2"><v>1</v></c><c r="E2" t="s"><v>6</v></c><c r="F2"><v>1.2E1</v></c></row>')
package("raw_1904_true.xlsx", rows2, shared2, wbpr='<workbookPr date1904="true"/>', prefix="", absolute=False)
