"""One self-contained HTML file: the report's data as JSON, the vendored libraries
(``vendor/vendor.json``: dagre for graph layout, d3-contour for the contour plot) and
the explorer's own script and style (``static/``), all inline.

The page fetches nothing: its Content-Security-Policy allows no source but the inline
scripts and styles (and ``data:`` images), so it opens from ``file://`` and works
offline. ``read_report(html)`` gives the data back (tests compare it with the
compiler's own numbers).
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from importlib import resources

from ..errors import Error
from ..version import __version__

DATA_ID = "relayir-data"
# the explorer's own files, in the order the page runs them
SCRIPTS = ("core.js", "graph.js", "pipeline.js", "gradient.js", "executor.js", "vm.js",
           "optimizers.js", "main.js")
STYLES = ("explorer.css",)
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:")
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)
_DATA = re.compile(r'<script type="application/json" id="' + DATA_ID + r'">(.*?)</script>',
                   re.DOTALL)


class ReportError(Error):
    """An HTML file that is not an explorer report (no data block in it)."""


def _read(folder: str, name: str) -> str:
    return resources.files(__package__).joinpath(folder, name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def vendor_manifest() -> dict:
    return json.loads(_read("vendor", "vendor.json"))


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str, str]:
    """(vendored scripts, explorer script, style), each once per process."""
    parts = []
    for lib in vendor_manifest()["scripts"]:
        # a source-map comment would point the browser's devtools at a file not shipped
        code = _SOURCE_MAP.sub("", _read("vendor", lib["file"]))
        parts.append(f"/* {lib['package']} {lib['version']} ({lib['license']}; licence "
                     f"text in relayir/viz/vendor/) */\n{code}")
    own = "\n".join(f"// ---- {name}\n{_read('static', name)}" for name in SCRIPTS)
    style = "\n".join(_read("static", name) for name in STYLES)
    return "\n".join(parts), own, style


def _json_for_script(data: dict) -> str:
    """JSON that cannot end its ``<script>`` element early (``<`` escaped)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c")


def render(data: dict, title: str) -> str:
    vendored, own, style = _assets()
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="generator" content="relayir {__version__}">
<link rel="icon" href="data:,">
<title>{html.escape(title)} · relayir explorer</title>
<style>
{style}
</style>
</head>
<body>
<noscript>This report needs JavaScript (it runs offline: nothing is fetched).</noscript>
<div id="app"></div>
<script type="application/json" id="{DATA_ID}">{_json_for_script(data)}</script>
<script>
{vendored}
</script>
<script>
{own}
</script>
</body>
</html>
"""


def read_report(text: str) -> dict:
    """The data a report was made from."""
    m = _DATA.search(text)
    if m is None:
        raise ReportError("not a relayir explorer report: no "
                          f'<script id="{DATA_ID}"> data block in it')
    return json.loads(m.group(1))


__all__ = ["CSP", "DATA_ID", "ReportError", "read_report", "render", "vendor_manifest"]
