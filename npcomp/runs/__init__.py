"""The runs layer: what each `npcomp` command does, as library functions
under the command line.  Each takes the command's options as keywords (the
same names and defaults; training options as config keys) and returns a
result object; the command line parses its arguments, calls one of them
and prints.

``train`` (`npcomp train`), ``evaluate`` (`npcomp eval`), ``predict``
(`npcomp predict`), ``explanation`` (`npcomp explain`), ``sweep`` (`npcomp sweep`), ``reproduce`` (`npcomp
reproduce`), ``plot`` (`npcomp plot`).  They call the experiments and
training layers below them.
"""

from .evaluation import EvaluationResult, evaluate
from .explanations import ExplanationResult, explanation
from .plotting import PlotResult, plot
from .prediction import PredictionResult, predict
from .reproduction import ReproductionResult, reproduce
from .sweeps import SweepCluster, SweepResult, sweep
from .training import TrainResult, train

__all__ = [
    "EvaluationResult",
    "ExplanationResult",
    "PlotResult",
    "PredictionResult",
    "ReproductionResult",
    "SweepCluster",
    "SweepResult",
    "TrainResult",
    "evaluate",
    "explanation",
    "plot",
    "predict",
    "reproduce",
    "sweep",
    "train",
]
