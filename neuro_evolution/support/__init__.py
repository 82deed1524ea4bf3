"""Low-level support every layer may use: errors, frozen classes, seed derivation, atomic writes,
signals and console output. Nothing here imports another part of the package."""
