"""The episode rules and the scalar loop: env making, wrappers, history-free envs, held-out
validation and the step-by-step trace."""
