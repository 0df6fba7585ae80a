"""BertViz's head_view and model_view, shown in attnscope's window instead of a notebook cell."""
import itertools
import os
import stat
import time

from ._render import render_trace
from ._trace import build_trace, save_trace
from ._window import WindowError, show_file

# Traces sent to the window are kept (the window may read them again, e.g. when a session is
# saved) but only the newest few.
KEEP_TRACES = 16
_counter = itertools.count()


def trace_dir():
    """Where traces for the window go: $ATTNSCOPE_TRACE_DIR, else $XDG_CACHE_HOME/attnscope/traces
    (~/.cache/attnscope/traces); created 0700."""
    d = os.environ.get("ATTNSCOPE_TRACE_DIR")
    if not d:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(cache, "attnscope", "traces")
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.lstat(d)
    if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid():
        raise WindowError(f"{d} is a symlink or another user's: refusing to write traces there")
    return d


def _prune(d, keep):
    files = []
    for name in os.listdir(d):
        if name.startswith("trace-") and name.endswith(".safetensors"):
            p = os.path.join(d, name)
            try:
                files.append((os.stat(p).st_mtime, p))
            except OSError:
                pass
    for _, p in sorted(files)[:-keep]:
        try:
            os.unlink(p)
        except OSError:
            pass


def show_trace(trace):
    """Writes `trace` (safetensors: compact and quick to read) and shows it in the window, which is
    started when none is running. Returns the path written."""
    d = trace_dir()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(d, f"trace-{stamp}-{os.getpid()}-{next(_counter)}.safetensors")
    save_trace(trace, path)
    _prune(d, KEEP_TRACES)
    show_file(path)
    return path


def _position(index, included, what):
    """Where layer/head `index` (the model's numbering) is among the included ones."""
    if index is None:
        return 0
    if index not in included:
        raise ValueError(f"{what} {index} is not in include_{what}s: {included}")
    return included.index(index)


def head_view(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True,
              layer=None, heads=None, encoder_attention=None, decoder_attention=None,
              cross_attention=None, encoder_tokens=None, decoder_tokens=None,
              include_layers=None, html_action="view"):
    """BertViz's head_view, with the same arguments, shown in attnscope's window.

    attention: outputs.attentions, one [1, heads, n, n] tensor (torch or numpy) per layer;
    tokens: the n token strings (tokenizer.convert_ids_to_tokens(ids)); sentence_b_start: where
    sentence B begins in a BERT pair (checked and kept in the trace; the window shows the pair as
    one sequence). An encoder-decoder passes encoder_attention, decoder_attention,
    cross_attention, encoder_tokens and decoder_tokens instead. prettify_tokens: show Ġ and ▁ as
    the spaces they stand for (False: the pieces as they are). include_layers: the layers to send
    (all by default). layer/heads: the layer (and heads) BertViz would select first; checked,
    and used for the figure html_action='return' gives.

    html_action='view' (default) writes the trace and shows it in the running window (starting
    `attnscope view` when none is open; later calls replace what that window shows) and returns
    None. html_action='return' opens no window and returns the figure of the lines view (BertViz's
    head view) of `layer` and the first of `heads` as an SVGFigure (a str that Jupyter shows
    inline). A trace the window refuses raises attnscope.WindowError with its message."""
    if html_action not in ("view", "return"):
        raise ValueError("'html_action' parameter must be 'view' or 'return'")
    trace = build_trace(attention, tokens, sentence_b_start, prettify_tokens, encoder_attention,
                        decoder_attention, cross_attention, encoder_tokens, decoder_tokens,
                        include_layers)
    layers = trace.meta.get("selection", {}).get("layers") or \
        list(range(trace.meta["model"]["layers"]))
    at = _position(layer, layers, "layer")
    head = 0
    if heads is not None:
        heads = [int(h) for h in heads]
        for h in heads:
            if not 0 <= h < trace.meta["model"]["heads"]:
                raise ValueError(f"heads has {h}: the attention has {trace.meta['model']['heads']}"
                                 " heads")
        head = heads[0] if heads else 0
    if html_action == "return":
        return render_trace(trace, "lines", at, head, "svg", None, "light", None, None, None,
                            None, True)
    show_trace(trace)
    return None


def model_view(attention=None, tokens=None, sentence_b_start=None, prettify_tokens=True,
               display_mode="dark", encoder_attention=None, decoder_attention=None,
               cross_attention=None, encoder_tokens=None, decoder_tokens=None,
               include_layers=None, include_heads=None, html_action="view"):
    """BertViz's model_view, with the same arguments, shown in attnscope's window.

    The arguments are head_view's, plus include_heads (the heads to send; with include_layers the
    trace holds only those and says which) and display_mode ('dark' or 'light': the figure's
    theme for html_action='return'; the window keeps its own theme). html_action='view' shows the
    trace in the running window (started when none is open) and returns None;
    html_action='return' returns the grid figure (every layer x head) as an SVGFigure."""
    if html_action not in ("view", "return"):
        raise ValueError("'html_action' parameter must be 'view' or 'return'")
    if display_mode not in ("dark", "light"):
        raise ValueError(f"display_mode {display_mode!r}: expected 'dark' or 'light'")
    trace = build_trace(attention, tokens, sentence_b_start, prettify_tokens, encoder_attention,
                        decoder_attention, cross_attention, encoder_tokens, decoder_tokens,
                        include_layers, include_heads)
    if html_action == "return":
        return render_trace(trace, "grid", 0, 0, "svg", None, display_mode, None, None, None,
                            None, True)
    show_trace(trace)
    return None
