"""attnscope from Python: BertViz's head_view/model_view in attnscope's native window.

    from attnscope import head_view        # instead of: from bertviz import head_view
    head_view(outputs.attentions, tokens)  # opens (or updates) the attnscope window

show(model, tokenizer, text) runs a transformers model and shows it; render(...) returns a figure
for IPython.display (SVG as a str, PNG/PDF as bytes); write_trace/read_trace write and read the
trace files `attnscope view FILE` opens, and view(path) shows one in the window. Needs the
attnscope executable ($ATTNSCOPE_BIN, or `attnscope` on PATH); numpy; torch only for show().
"""
from ._render import PDFFigure, PNGFigure, RenderError, SVGFigure, render, render_file, \
    render_trace
from ._show import show, trace_model
from ._trace import Trace, build_trace, read_trace, save_trace, write_trace
from ._views import head_view, model_view, show_trace
from ._window import WindowError
from ._window import show_file as view

__version__ = "0.1.0"

__all__ = ["head_view", "model_view", "show", "trace_model", "view", "show_trace", "render",
           "render_file", "render_trace", "write_trace", "read_trace", "build_trace",
           "save_trace", "Trace", "WindowError", "RenderError", "SVGFigure", "PNGFigure",
           "PDFFigure"]
