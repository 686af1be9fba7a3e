"""The exceptions of jounce: one hierarchy under :class:`JounceError`.

The extension module raises these classes with the message the ``jounce``
command prints after ``error:``.
"""

from typing import Optional


class JounceError(Exception):
    """Base of every error jounce raises.

    A failed :func:`jounce.run` attaches what it computed as ``.partial``
    (a :class:`jounce.Result`) to whichever subclass it raises.
    """

    partial = None


class ModelError(JounceError, ValueError):
    """The model is invalid: a TOML syntax error, an unknown key, a value
    out of range, a bad dotted path in :meth:`jounce.Model.set`.

    ``file`` is the model file (or origin), ``line`` the 1-based line and
    ``element`` the model element at fault (``None`` where unknown).
    """

    file: Optional[str] = None
    line: Optional[int] = None
    element: Optional[str] = None


class SetupError(JounceError, ValueError):
    """The model is valid but cannot be run with these settings (an
    unknown integrator or formulation, a parameter out of range,
    redundant joints, an impossible assembly). From :func:`jounce.check`,
    ``report`` holds the check's report up to the failure (else ``None``).
    """

    report: Optional[str] = None


class IntegrationError(JounceError, RuntimeError):
    """The integration failed (step budget, step size underflow, Newton
    failure, a blow-up). ``partial`` is the :class:`jounce.Result` of the
    rows computed up to the failure, with its failed summary; ``cause``
    what the mechanism did (or ``None``), ``advice`` what to do (or
    ``None``).
    """

    cause: Optional[str] = None
    advice: Optional[str] = None


class OutputError(JounceError, OSError):
    """A file could not be written or read."""


class InternalError(JounceError):
    """The library panicked: a bug of jounce (please report it). Raised
    instead of letting a panic cross into Python."""


# shown as jounce.ModelError, ... (where they are documented)
for _cls in (JounceError, ModelError, SetupError, IntegrationError, OutputError, InternalError):
    _cls.__module__ = "jounce"

__all__ = [
    "JounceError",
    "ModelError",
    "SetupError",
    "IntegrationError",
    "OutputError",
    "InternalError",
]
