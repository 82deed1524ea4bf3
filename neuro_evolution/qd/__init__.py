"""Quality diversity: behaviour descriptors, archives of elites, MAP_ELITES and CMA_ME."""
