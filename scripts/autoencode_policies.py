"""Hand-written policies on POPGym's AutoencodeEasy: what remembering k cards is worth.

The task deals 52 cards, one per step, then asks for them back, last card first, paying
+1/52 for each suit named right and -1/52 for each named wrong. The last card is still on screen
at the first recall, so a policy without memory names it and then one fixed suit; a policy that
remembers the last k cards names those k and then the fixed suit. Random actions name a uniform
suit at every recall. Each policy plays ``--episodes`` episodes (episode k resets with seed k);
printed: the mean return and the standard deviation per episode.

Expected values: random -0.5; remembering k cards (k = 1 is the memoryless policy)
(k - 0.5 (52 - k)) / 52, so each remembered card adds 1.5 / 52 = 0.029.

Usage: python scripts/autoencode_policies.py [--episodes 2000] [--memory 1 2 3 5]
(needs the popgym extra: pip install -e ".[popgym]")
"""

from __future__ import annotations

import argparse

import numpy as np

FIXED_SUIT = 0  # the suit named once the remembered cards are used up


def play(policy_memory: int | None, episodes: int) -> np.ndarray:
    """The returns of ``episodes`` episodes of a policy remembering ``policy_memory`` cards
    (None: random actions)."""
    from popgym.envs.autoencode import AutoencodeEasy

    env = AutoencodeEasy()
    returns = np.empty(episodes)
    for episode in range(episodes):
        rng = np.random.default_rng(episode)
        (_, suit), _ = env.reset(seed=episode)
        seen = [suit]
        watching, recalls, total, done = True, 0, 0.0, False
        while not done:
            if watching:
                action = int(rng.integers(4)) if policy_memory is None else FIXED_SUIT
            elif policy_memory is None:
                action = int(rng.integers(4))
            else:
                action = seen[-1 - recalls] if recalls < policy_memory else FIXED_SUIT
            (_, suit), reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = bool(terminated or truncated)
            if not watching:
                recalls += 1
                continue
            seen.append(suit)  # a card dealt (the last one shows as the first recall begins)
            watching = env.mode.name == "WATCH"
        returns[episode] = total
    return returns


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--memory", type=int, nargs="+", default=[1, 2, 3, 5])
    args = parser.parse_args(argv)
    print(f"AutoencodeEasy, {args.episodes:,} episodes per policy (episode k: seed k)")
    print(f"{'policy':<55} {'mean return':>12} {'std per episode':>16}")
    cases: list[tuple[str, int | None]] = [("random actions", None)]
    for k in args.memory:
        name = (
            "no memory: the last card (on screen), then one fixed suit"
            if k == 1
            else f"remembers the last {k} cards"
        )
        cases.append((name, k))
    for name, memory in cases:
        returns = play(memory, args.episodes)
        print(f"{name:<55} {returns.mean():>12.3f} {returns.std():>16.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
