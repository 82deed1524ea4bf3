"""Export an evolved policy: ``python -m neuro_evolution.export RUN --format F --out PATH``.

The export is the *whole* policy of one genome of a run (observation scaler, the brain's input
scaling, the brain, the action decoding) as one step ``(observation, state...) -> (action,
next state...)`` that starts from the brain's stored initial state:

- ``onnx``: an ONNX model (opset 17, float64 throughout; needs the ``export`` extra);
- ``numpy``: a generated ``.py`` needing only numpy, and its ``.npz`` (no pickle).

:func:`replay_exported` plays the run's held-out validation episodes through an export next to
the framework's brain (``replay RUN --validation --exported PATH`` does the same).
"""

from neuro_evolution.export.graph import PolicyGraph
from neuro_evolution.export.loaded import ExportedBrain, load_policy
from neuro_evolution.export.policy import policy_graph
from neuro_evolution.export.verify import replay_exported
from neuro_evolution.export.writer import FORMATS, export_run

__all__ = [
    "FORMATS",
    "ExportedBrain",
    "PolicyGraph",
    "export_run",
    "load_policy",
    "policy_graph",
    "replay_exported",
]
