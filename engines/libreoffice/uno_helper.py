"""One warm LibreOffice for the Node pool: starts soffice with its own profile and pipe, then converts
documents to PDF (or, with explicit filters, between other formats) on request. Protocol: one JSON object per
line on stdin, one JSON answer per line on stdout.

  -> {"id": 1, "input": "/abs/in.docx", "output": "/abs/out.pdf", "ext": "docx", "filter": {...}, "locale": "en-US"}
  -> {"id": 2, "input": "/abs/in.pdf", "output": "/abs/out.pptx", "import": "impress_pdf_import", "export": "Impress MS PowerPoint 2007 XML"}
  <- {"id": 1, "ok": true, "pages": 3}  |  {"id": 1, "ok": false, "kind": "password"|"invalid"|"crashed", "message": "..."}

Startup prints {"ready": true} once soffice accepts connections. When stdin closes (the parent died or
shut us down) soffice is terminated, so no instance outlives its owner; when soffice dies (killed, crashed, out
of memory) the helper exits too, so the pool replaces the instance instead of sending it the next document.
Run with /usr/bin/python3: Debian's python3-uno is only importable there.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import uno
import unohelper
from com.sun.star.beans import PropertyValue
from com.sun.star.lang import Locale
from com.sun.star.task import XInteractionHandler

SOFFICE = os.environ.get("QUIRE_SOFFICE", "soffice")


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def props(d):
    return tuple(prop(k, v) for k, v in d.items())


class Interactions(unohelper.Base, XInteractionHandler):
    """Answers every question LibreOffice would ask a user. A password request is aborted and remembered:
    without a handler LibreOffice reports an encrypted file as a generic load failure."""

    def __init__(self):
        self.password_asked = False

    def handle(self, request):
        req = request.getRequest()
        name = getattr(req, "typeName", "") or type(req).__name__
        if "Password" in name:
            self.password_asked = True
        for c in request.getContinuations():
            if c.queryInterface(uno.getTypeByName("com.sun.star.task.XInteractionAbort")):
                c.select()
                return


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Office:
    def __init__(self, profile, pipe):
        self.pipe = pipe
        url = "file://" + os.path.abspath(profile)
        self.proc = subprocess.Popen(
            [SOFFICE, "--headless", "--invisible", "--nologo", "--norestore", "--nodefault", "--nolockcheck",
             "--nofirststartwizard", "-env:UserInstallation=" + url,
             "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
        deadline = time.time() + 60
        while True:
            try:
                ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
                break
            except Exception:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("soffice did not start")
                time.sleep(0.1)
        self.ctx = ctx
        self.desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)

    def alive(self):
        """Whether soffice still answers: after a failure, tells a dead instance from a document it refused."""
        if self.proc.returncode is not None:
            return False
        try:
            self.desktop.getCurrentComponent()
            return True
        except Exception:
            return False

    def stop(self):
        try:
            self.desktop.terminate()
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


CSV_FILTER = "Text - txt - csv (StarCalc)"
EXPORT_FILTERS = (
    ("com.sun.star.sheet.SpreadsheetDocument", "calc_pdf_Export"),
    ("com.sun.star.presentation.PresentationDocument", "impress_pdf_Export"),
    ("com.sun.star.drawing.DrawingDocument", "draw_pdf_Export"),
    ("com.sun.star.text.TextDocument", "writer_pdf_Export"),
)


def convert(office, req):
    handler = Interactions()
    # Not ReadOnly: Calc ignores format changes on a read-only document. Inputs are private copies in the job dir.
    load = {"Hidden": True, "InteractionHandler": handler, "MacroExecutionMode": 0, "UpdateDocMode": 0}
    lang, country = (req.get("locale") or "en-US").split("-")
    if req.get("import"):
        load["FilterName"] = req["import"]
    elif req.get("ext") == "csv":
        # Separator comma, quote ", UTF-8, from line 1, no column types, numbers read as en-US (CSV's usual form).
        load["FilterName"] = CSV_FILTER
        load["FilterOptions"] = "44,34,76,1,,1033"
    url = uno.systemPathToFileUrl(req["input"])
    try:
        doc = office.desktop.loadComponentFromURL(url, "_blank", 0, props(load))
    except Exception as e:
        if handler.password_asked:
            return {"ok": False, "kind": "password", "message": "password protected"}
        if not office.alive():
            raise
        return {"ok": False, "kind": "invalid", "message": str(e)[:300]}
    if doc is None:
        if not office.alive():
            raise RuntimeError("soffice is gone")
        kind = "password" if handler.password_asked else "invalid"
        return {"ok": False, "kind": kind, "message": "could not be opened"}
    try:
        export = req.get("export")
        if not export:
            export = "writer_pdf_Export"
            for service, name in EXPORT_FILTERS:
                if doc.supportsService(service):
                    export = name
                    break
        if export == "calc_pdf_Export":
            relocalize(doc, Locale(lang, country, ""))
        filter_data = props(req.get("filter") or {})
        out = uno.systemPathToFileUrl(req["output"])
        args = (prop("FilterName", export), prop("FilterData", uno.Any("[]com.sun.star.beans.PropertyValue", filter_data)))
        uno.invoke(doc, "storeToURL", (out, args))
        return {"ok": True, "filter": export}
    finally:
        try:
            doc.close(True)
        except Exception:
            try:
                doc.dispose()
            except Exception:
                pass


def relocalize(doc, locale):
    """Moves every number format to its counterpart in `locale` (decimal and thousands separators, date
    order). The sheet's CellFormatRanges are runs of cells sharing one format, so this is cheap."""
    doc.CharLocale = locale
    formats = doc.NumberFormats
    sheets = doc.Sheets
    for i in range(sheets.Count):
        try:
            ranges = sheets.getByIndex(i).CellFormatRanges
            count = ranges.Count
        except Exception:
            continue  # a sheet without cells
        for j in range(count):
            try:
                r = ranges.getByIndex(j)
                key = r.NumberFormat
                target = formats.getFormatForLocale(key, locale)
                if target != key:
                    r.NumberFormat = target
            except Exception:
                pass  # a range without a number format keeps its own


def exit_with(proc):
    # soffice is gone: exit, so that the pool starts a fresh instance rather than send this one a document.
    # (Waiting here also sets proc.returncode, which `alive` reads: poll() would find the wait lock taken.)
    proc.wait()
    os._exit(3)


def main():
    profile, pipe = sys.argv[1], sys.argv[2]
    try:
        office = Office(profile, pipe)
    except Exception as e:
        send({"ready": False, "message": str(e)})
        return 1
    signal.signal(signal.SIGTERM, lambda *_: (office.stop(), os._exit(0)))
    threading.Thread(target=exit_with, args=(office.proc,), daemon=True).start()
    send({"ready": True})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        try:
            answer = convert(office, req)
        except Exception as e:
            # The bridge is gone or soffice is in an unknown state: answer, then exit so the pool restarts us.
            send({"id": req.get("id"), "ok": False, "kind": "crashed", "message": str(e)[:300]})
            office.stop()
            return 2
        answer["id"] = req.get("id")
        send(answer)
    office.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
