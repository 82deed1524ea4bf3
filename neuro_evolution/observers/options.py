"""The ``observers`` config section: where each generation's log row is mirrored.

Observers only read what a run logs, so they never change its results; the section is left out
of the run's config hash (see :mod:`neuro_evolution.run.status`), so a resume may add,
change or drop observers. A package an observer needs is checked when the config is read: its
absence is a one-line error naming the field and the extra to install.
"""

from __future__ import annotations

import importlib.util

from neuro_evolution.core.schema import ConfigBase, config_class, join, option
from neuro_evolution.support.errors import ConfigError

SECTION = "observers"


@config_class
class TensorBoardConfig(ConfigBase):
    """TensorBoard event files in the run directory (``tensorboard --logdir RUN_OR_SWEEP_DIR``)."""

    directory: str = option("tensorboard", doc="folder of the event files, in the run directory")


@config_class
class MlflowConfig(ConfigBase):
    """One MLflow run per experiment: params, per-generation metrics, files as artifacts."""

    tracking_uri: str | None = option(
        None,
        doc="MLflow tracking URI (http://..., sqlite:///..., a folder); null: a local file store "
        "`mlruns` in the working directory",
    )
    experiment: str = option("neuro_evolution", doc="MLflow experiment the runs are logged to")
    artifacts: bool = option(
        True, doc="upload the run directory's files (not checkpoints) when the run ends or stops"
    )


# field -> (module that must import, pip extra)
REQUIREMENTS = {"tensorboard": ("tensorboard", "tensorboard"), "mlflow": ("mlflow", "mlflow")}


@config_class
class ObserversConfig(ConfigBase):
    """Mirrors of the per-generation log (an empty object ``{}`` turns one on with defaults)."""

    tensorboard: TensorBoardConfig | None = option(
        None, doc="TensorBoard event files ({} for the defaults); null: none"
    )
    mlflow: MlflowConfig | None = option(
        None, doc="MLflow tracking ({} for the defaults); null: none"
    )

    def validate(self, path: str) -> None:
        for field, (module, extra) in REQUIREMENTS.items():
            if getattr(self, field) is not None and importlib.util.find_spec(module) is None:
                raise ConfigError(
                    join(path, field),
                    f"needs the {module} package, which is not installed: "
                    f'pip install -e ".[{extra}]" (or set {field} to null)',
                )

    @property
    def any(self) -> bool:
        """Whether an observer is on."""
        return self.tensorboard is not None or self.mlflow is not None
