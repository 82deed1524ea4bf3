"""Envs the package ships, registered with Gymnasium when this package is imported.

- ``neuro_evolution/DoublePole-v0``: double-pole balancing with all six state variables observed
  (Markov), standard fitness (balanced steps), up to 100,000 steps; validation is the long test
  (100,000 steps from the standard start; mean 1.0 = solved);
- ``neuro_evolution/DoublePoleNonMarkov-v0``: only x, theta_1, theta_2 observed, Gruau et al.'s
  damping fitness over 1000 steps; validation is the 625-state generalization test (with 625
  validation episodes, mean >= 0.32, i.e. 200 of 625 balanced = solved);
- ``neuro_evolution/Latency-v0``: fixed-length episodes whose steps sleep ``step_seconds``
  (default 2.5 ms) without using the CPU, a stand-in for a heavy simulator on its own core, for
  measuring how the handlers scale (``scripts/bench_scale.py``);
- ``neuro_evolution/ReacherMemory-v0``: MuJoCo's Reacher-v5 in an observe, a memory and an action
  phase (20 + 20 + 50 steps; kwargs ``observation_frames``, ``memory_frames``, ``action_frames``):
  the target is hidden after the first phase and the reward counts only in the last (needs the
  ``mujoco`` extra; rule in ``neuro_evolution/envs/reacher_memory.py``).

Name them in a config as ``neuro_evolution.envs:neuro_evolution/DoublePole-v0`` (see
``docs/environments.md``). The double-pole envs have a native numpy vector env for the
vectorized handler.
"""

from __future__ import annotations

import gymnasium as gym

ENTRY_POINT = "neuro_evolution.envs.double_pole:DoublePoleEnv"
VECTOR_ENTRY_POINT = "neuro_evolution.envs.double_pole_vector:DoublePoleVectorEnv"
LATENCY_ID = "neuro_evolution/Latency-v0"
LATENCY_ENTRY_POINT = "neuro_evolution.envs.latency:LatencyEnv"
REACHER_MEMORY_ID = "neuro_evolution/ReacherMemory-v0"
REACHER_MEMORY_ENTRY_POINT = "neuro_evolution.envs.reacher_memory:ReacherMemoryEnv"
ENV_KWARGS = {
    "neuro_evolution/DoublePole-v0": {
        "markov": True,
        "fitness": "standard",
        "max_steps": 100_000,
        "validation": "long",
    },
    "neuro_evolution/DoublePoleNonMarkov-v0": {
        "markov": False,
        "fitness": "damping",
        "max_steps": 1000,
        "validation": "generalization",
    },
}


def register() -> None:
    """Register the ids (once per process; the env keeps its own time, so no TimeLimit)."""
    for env_id, kwargs in ENV_KWARGS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs=kwargs,
            )
    if LATENCY_ID not in gym.registry:
        gym.register(id=LATENCY_ID, entry_point=LATENCY_ENTRY_POINT)
    if REACHER_MEMORY_ID not in gym.registry:  # keeps its own time too (the frame counts)
        gym.register(id=REACHER_MEMORY_ID, entry_point=REACHER_MEMORY_ENTRY_POINT)


register()
