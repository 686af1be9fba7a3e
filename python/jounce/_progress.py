"""The progress bar of :func:`jounce.run`: where the ``jounce`` command
shows one (standard error a terminal), and in a Jupyter notebook, a tqdm
bar (``tqdm.auto``: a widget in a notebook, text on a terminal) when tqdm
is installed. The extension calls :func:`callback` once per run and the
callable it returns about 20 times a second with ``(t, t_end, done)``."""

import sys
from typing import Any, Callable, Optional


def _in_notebook() -> bool:
    """Whether this process is a Jupyter kernel."""
    try:
        from IPython import get_ipython  # type: ignore[import-not-found]
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class _Bar:
    """A tqdm bar over simulated time, in per mille of t_end, showing the
    simulated time reached."""

    def __init__(self, tqdm: Any) -> None:
        self._tqdm = tqdm
        self._bar: Any = None
        self._at = 0

    def __call__(self, t: float, t_end: float, done: bool) -> None:
        if self._bar is None:
            if done and t == 0.0:
                return
            self._bar = self._tqdm(total=1000, unit="‰", leave=True, desc="jounce run")
        at = min(1000, int(1000 * t / t_end)) if t_end > 0 else 1000
        if at > self._at:
            self._bar.update(at - self._at)
            self._at = at
        self._bar.set_postfix_str(f"t = {t:.4g} s of {t_end:g}", refresh=False)
        if done:
            self._bar.close()


def callback(progress: Any) -> Optional[Callable[[float, float, bool], None]]:
    """The callable that tells of a run's progress, or None: ``progress``
    None (a bar where the command shows one, or in a notebook), True (a
    bar), False (none) or a callable of its own."""
    if progress is None:
        progress = _in_notebook() or sys.stderr.isatty()
        if not progress:
            return None
        try:
            from tqdm.auto import tqdm  # type: ignore[import-untyped]
        except ImportError:
            return None
        return _Bar(tqdm)
    if progress is True:
        try:
            from tqdm.auto import tqdm  # type: ignore[import-untyped]
        except ImportError as e:
            raise ImportError("progress=True needs tqdm (pip install tqdm)") from e
        return _Bar(tqdm)
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise TypeError(f"progress: None, True, False or a callable, not {type(progress).__name__}")
