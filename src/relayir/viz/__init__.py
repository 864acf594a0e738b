"""The interactive explorer: a model through the compiler, step by step, in one HTML
file that opens offline (``relayir explore MODEL -o report.html``).

``explore(mod, params)`` returns the page; ``report_data`` the data it draws;
``read_report(html)`` reads that data back from a page. The views: the pass pipeline
(graph, text and changes after each pass), the gradient program against PyTorch's
autograd tape, the graph executor's kernels and memory plan, the VM's bytecode stepped
through a recorded run, and optimisers on loss surfaces whose gradient relayir computes.
"""

from .examples import EXAMPLES, example_module, with_prelude
from .html import ReportError, read_report
from .report import SECTIONS, explore, report_data

__all__ = ["EXAMPLES", "SECTIONS", "ReportError", "example_module", "explore", "read_report",
           "report_data", "with_prelude"]
