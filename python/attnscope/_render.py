"""Figures from Python: `attnscope render --trace TRACE -o -` on a trace written for it."""
import os
import subprocess
import tempfile

from ._trace import build_trace, save_trace
from ._window import binary

FORMATS = ("svg", "png", "pdf")


class SVGFigure(str):
    """An SVG document (a str) that IPython and Jupyter show inline."""

    def _repr_svg_(self):
        return str(self)

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self)
        return path


class PNGFigure(bytes):
    """PNG bytes that IPython and Jupyter show inline."""

    def _repr_png_(self):
        return bytes(self)

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self)
        return path


class PDFFigure(bytes):
    """PDF bytes (Jupyter shows PDF where the front end can)."""

    def _repr_pdf_(self):
        return bytes(self)

    save = PNGFigure.save


class RenderError(RuntimeError):
    """`attnscope render` refused (its one-line message) or could not run."""


def render_file(trace_path, view="heatmap", layer=0, head=0, format="svg", scale=None,
                theme="light", width=None, colormap=None, aggregate=None, focus=None,
                title=True):
    """The figure of a trace file: SVGFigure (a str) for SVG, PNGFigure/PDFFigure (bytes)."""
    fmt = str(format).lower()
    if fmt not in FORMATS:
        raise ValueError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
    cmd = [binary(), "render", "--trace", os.fspath(trace_path), "--view", str(view),
           "--format", fmt, "-o", "-", "--theme", str(theme)]
    if aggregate is not None:
        cmd += ["--layer", str(int(layer)), "--aggregate", str(aggregate)]
    else:
        cmd += ["--layer", str(int(layer)), "--head", str(int(head))]
    if scale is not None:
        cmd += ["--scale", repr(float(scale))]
    if width is not None:
        cmd += ["--width", repr(float(width))]
    if colormap is not None:
        cmd += ["--colormap", str(colormap)]
    if focus is not None:
        cmd += ["--focus", str(int(focus))]
    if not title:
        cmd += ["--no-title"]
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    except OSError as e:
        raise RenderError(f"cannot run {cmd[0]}: {e}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise RenderError(message[-1] if message else f"attnscope render exited "
                          f"{done.returncode}")
    if fmt == "svg":
        return SVGFigure(done.stdout.decode("utf-8"))
    return (PNGFigure if fmt == "png" else PDFFigure)(done.stdout)


def render(attention, tokens=None, view="heatmap", layer=0, head=0, format="svg", scale=None,
           theme="light", width=None, colormap=None, aggregate=None, focus=None, title=True,
           **trace_args):
    """A figure of one view of `attention` (outputs.attentions and its token strings, as
    head_view takes them; or the path of a trace file, tokens then None), drawn by
    `attnscope render` without a window: an SVGFigure (a str) for format="svg", PNGFigure or
    PDFFigure (bytes) for "png" and "pdf". Each shows itself inline in IPython/Jupyter
    (display(render(...)) or as a cell's value).

    view: heatmap, lines (BertViz's head view), arcs, grid (every layer x head), formula, cross
    (an encoder-decoder's cross-attention). layer/head count from 0 among the layers and heads
    the trace holds. scale: PNG pixels per unit (attnscope's default 2). aggregate: mean, max, …
    instead of one head. trace_args: the rest of write_trace's arguments (sentence_b_start,
    include_layers, encoder_attention, …)."""
    if isinstance(attention, (str, os.PathLike)) and tokens is None and not trace_args:
        return render_file(attention, view, layer, head, format, scale, theme, width, colormap,
                           aggregate, focus, title)
    trace = build_trace(attention, tokens, **trace_args)
    return render_trace(trace, view, layer, head, format, scale, theme, width, colormap,
                        aggregate, focus, title)


def render_trace(trace, *args):
    with tempfile.TemporaryDirectory(prefix="attnscope-render-") as tmp:
        path = save_trace(trace, os.path.join(tmp, "trace.safetensors"))
        return render_file(path, *args)
