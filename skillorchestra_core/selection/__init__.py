"""Selection: candidate handbooks, validation runs (replay and live), Pareto frontier, publishing a configuration."""
