"""The contract configs of every registered optimizer and its budgets (see
test_optimizer_contract.py, which runs them; the committed optimizer states reuse the configs).

A measured optimizer (QD) is told the first two genes as its descriptors
(:data:`QD_DESCRIPTORS`).
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Budget(NamedTuple):
    """Reach ``objective < threshold`` with ``genome_size`` genes within ``generations``."""

    genome_size: int
    generations: int
    threshold: float


class Case(NamedTuple):
    config: dict[str, Any]
    sphere: Budget
    rosenbrock: Budget


# The descriptors a QD optimizer is told in the contract: genes 0 and 1, 5 bins each over [-2, 3].
QD_DESCRIPTORS = [
    {"name": f"gene{i}", "source": "observation", "index": i, "low": -2.0, "high": 3.0, "bins": 5}
    for i in range(2)
]

CASES: dict[str, Case] = {
    # The paper's defaults (64 genomes, b = 4). A constant step alpha keeps the center moving
    # near the optimum. Measured: sphere 0.0014 / 0.0013 after 300 generations, Rosenbrock
    # 0.08 / 0.13 after 1000 (seeds 1, 2).
    "ARS": Case({}, sphere=Budget(10, 300, 0.01), rosenbrock=Budget(5, 1000, 0.5)),
    # The paper's defaults; once the added noise has decreased to 0 (generation 50) the elite
    # variance collapses. Measured: sphere 1e-7 / 1.2e-5 after 150 generations, Rosenbrock
    # 2.5 / 2.1 after 500 (seeds 1, 2; no lower after 1000).
    "CEM": Case({}, sphere=Budget(10, 150, 1e-4), rosenbrock=Budget(5, 500, 5.0)),
    # A GA standing behind its hall of fame's best. Measured: sphere 0.002 / 0.009 after 300
    # generations, Rosenbrock 1.1 / 2.2 after 1000 (seeds 1, 2).
    "COSYNE": Case({}, sphere=Budget(10, 300, 0.05), rosenbrock=Budget(5, 1000, 5.0)),
    "MU_ES": Case(
        {"mu": 5, "lambda_": 20, "initial_gene_range": [-4.0, 4.0], "initial_strategy": 0.5},
        sphere=Budget(10, 300, 1e-3),
        rosenbrock=Budget(5, 500, 0.5),
    ),
    "CMA_ES": Case({}, sphere=Budget(10, 150, 1e-6), rosenbrock=Budget(10, 1000, 1e-6)),
    # ClipUp moves the center by up to max_speed per generation without annealing: a small
    # max_speed is what lets it settle below 1e-3 (travelling the sqrt(10) to the optimum first).
    "PGPE": Case(
        {"population_size": 20, "radius_init": 1.0, "max_speed": 0.01},
        sphere=Budget(10, 500, 1e-3),
        rosenbrock=Budget(5, 1000, 0.2),
    ),
    "OPENAI_ES": Case(
        {"population_size": 40, "sigma": 0.02, "learning_rate": 0.01},
        sphere=Budget(10, 300, 1e-3),
        rosenbrock=Budget(5, 2000, 0.1),
    ),
    # The paper's defaults. A separable distribution follows Rosenbrock's curved valley slowly.
    "SNES": Case({}, sphere=Budget(10, 200, 1e-6), rosenbrock=Budget(5, 3000, 1.0)),
    # Measured (seeds 1, 2): sphere 1e-9 / 4e-10 after 150 generations, Rosenbrock 3e-29 / 9e-29
    # after 1000.
    "MA_ES": Case({}, sphere=Budget(10, 150, 1e-6), rosenbrock=Budget(10, 1000, 1e-6)),
    # directions fixed at 10 (the default at 10 genes), so the memory test's state grows with
    # the genome alone. Measured (seeds 1, 2): sphere 7e-12 / 9e-10 after 150 generations,
    # Rosenbrock 1e-9 / 5e-11 after 1000.
    "LM_MA_ES": Case(
        {"directions": 10}, sphere=Budget(10, 150, 1e-6), rosenbrock=Budget(10, 1000, 1e-6)
    ),
    # Measured: sphere ~7e-12 after 150 generations, Rosenbrock 0.003-0.005 after 2000 (seeds 1, 2).
    "SEP_CMA_ES": Case({}, sphere=Budget(10, 150, 1e-6), rosenbrock=Budget(5, 2000, 0.05)),
    # The paper's defaults. Measured (seeds 1, 2): the center below 1e-6 after about 450 generations
    # on the sphere, 804 / 773 on Rosenbrock (eta_sigma = eta_B = 0.12 at 10 genes).
    "XNES": Case({}, sphere=Budget(10, 600, 1e-6), rosenbrock=Budget(10, 1000, 1e-6)),
    # The paper's defaults. Measured (seeds 1, 2): below 1e-6 after 63 / 62 generations on the
    # sphere, 401 / 417 on Rosenbrock.
    "CR_FM_NES": Case({}, sphere=Budget(10, 100, 1e-6), rosenbrock=Budget(10, 600, 1e-6)),
    # One objective: a (mu + lambda) GA standing behind its hall of fame's best. Measured:
    # sphere 2e-5 / 6e-5 after 300 generations, Rosenbrock 1.02 / 0.86 after 1000 (seeds 1, 2).
    "NSGA2": Case(
        {"population_size": 20}, sphere=Budget(10, 300, 1e-3), rosenbrock=Budget(5, 1000, 1.5)
    ),
    # Measured (seeds 1, 2): sphere 0.002-0.004 after 300 generations, Rosenbrock 0.06-0.09.
    "MAP_ELITES": Case(
        {
            "descriptors": QD_DESCRIPTORS,
            "batch_size": 20,
            "variation": "gaussian",
            "sigma": 0.05,
            "initial_sigma": 0.01,
        },
        sphere=Budget(10, 300, 0.02),
        rosenbrock=Budget(5, 1000, 0.5),
    ),
    # Fixed mutation power: precision stops near sigma^2 G. Measured (seeds 1, 2): sphere
    # 0.003-0.004 after 300 generations, Rosenbrock 0.046-0.048 after 1000.
    "GA": Case(
        {"population_size": 50, "truncation": 10, "sigma": 0.05},
        sphere=Budget(10, 300, 0.02),
        rosenbrock=Budget(5, 1000, 0.2),
    ),
    # Measured (seeds 1, 2): sphere 8e-5 / 1e-4 after 300 generations, Rosenbrock 0 / 2e-29.
    "DE": Case(
        {"population_size": 30, "crossover_rate": 0.9, "differential_weight": 0.8},
        sphere=Budget(10, 300, 1e-3),
        rosenbrock=Budget(5, 1000, 1e-6),
    ),
    # The defaults. Measured (seeds 1, 2): sphere 4e-14 / 9e-14 after 300 generations,
    # Rosenbrock 0.018 / 0.019 after 1000.
    "PSO": Case({}, sphere=Budget(10, 300, 1e-6), rosenbrock=Budget(5, 1000, 0.2)),
    # Measured: sphere 0.39-0.43 after 300 generations, Rosenbrock 3.4-4.2 after 1000 (emitters
    # restart whenever a batch improves no cell, which keeps their step sizes large).
    "CMA_ME": Case(
        {"descriptors": QD_DESCRIPTORS, "emitters": 2, "batch_size": 10, "sigma": 0.5},
        sphere=Budget(10, 300, 1.0),
        rosenbrock=Budget(5, 1000, 10.0),
    ),
}
